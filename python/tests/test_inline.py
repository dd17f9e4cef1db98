"""load_inline replacements: normalisation, digest, recorder, prebuilt loader."""

import hashlib
import importlib
import json

import pytest
import torch.utils.cpp_extension as cpp_extension

from kz_worker.farm import inline
from kz_worker.failure import ExtensionError


def test_fields_are_normalised():
    fields = inline.call_fields("ext", "int f();", cuda_sources=None, functions="f",
                                extra_cuda_cflags=("-O3",))
    assert fields == {"name": "ext", "cpp_sources": ["int f();"], "cuda_sources": [],
                      "functions": ["f"], "extra_cflags": [], "extra_cuda_cflags": ["-O3"],
                      "extra_ldflags": [], "extra_include_paths": [], "with_cuda": None}


def test_functions_may_be_a_docstring_map():
    fields = inline.call_fields(name="ext", cpp_sources=[], functions={"f": "doc"},
                                with_cuda=True)
    assert fields["functions"] == {"f": "doc"} and fields["with_cuda"] is True


def test_digest_is_sha256_of_canonical_json():
    fields = inline.call_fields("ext", ["a", "b"], "k", functions=["f"])
    canonical = json.dumps({k: fields[k] for k in inline.DIGEST_FIELDS}, sort_keys=True,
                           separators=(",", ":"))
    assert inline.call_digest(fields) == hashlib.sha256(canonical.encode()).hexdigest()


def test_digest_ignores_spelling_but_not_content():
    positional = inline.call_fields("ext", "src", "kern", None, "f")
    keywords = inline.call_fields(name="ext", cpp_sources=["src"], cuda_sources=["kern"],
                                  functions=["f"], verbose=True)
    other = inline.call_fields("ext", "src", "kern2", None, "f")
    assert inline.call_digest(positional) == inline.call_digest(keywords)
    assert inline.call_digest(positional) != inline.call_digest(other)


def test_bad_arguments_raise_type_error_like_load_inline():
    with pytest.raises(TypeError):
        inline.call_fields(cpp_sources="x")


def test_recorder_returns_placeholder_that_refuses_calls():
    recorder = inline.Recorder()
    module = recorder("ext", "src", functions=["f"])
    assert recorder.calls[0]["name"] == "ext"
    assert recorder.calls[0]["digest"] == inline.call_digest(recorder.calls[0])
    with pytest.raises(RuntimeError, match="not built during extract"):
        module.f()


def test_replaced_patches_and_restores_load_inline():
    original = cpp_extension.load_inline
    with inline.replaced(inline.Recorder()) as recorder:
        from torch.utils.cpp_extension import load_inline
        load_inline("ext", "src")
        assert recorder.calls and cpp_extension.load_inline is recorder
    assert cpp_extension.load_inline is original


def _never_compile(*_args, **_kwargs):
    raise AssertionError("the real load_inline must not run")


def stdlib_extension():
    """A standard-library module that lives in its own shared library."""
    for name in ("_bisect", "_heapq", "_json", "_random", "_struct", "math"):
        module = importlib.import_module(name)
        if getattr(module, "__file__", "").endswith(".so"):
            return module
    pytest.skip("no stdlib extension module file on this Python")


def test_prebuilt_library_is_loaded_without_compiling():
    original = stdlib_extension()
    name = original.__name__
    entry = {"digest": inline.call_digest(inline.call_fields(name, "src")), "name": name,
             "library": original.__file__}
    loader = inline.PrebuiltLoader([entry], real=_never_compile)
    module = loader(name, "src")
    assert module.__file__ == original.__file__
    assert [n for n in dir(module) if not n.startswith("_")] == [
        n for n in dir(original) if not n.startswith("_")]
    assert loader(name, cpp_sources=["src"]) is module
    assert loader.compiled_in_child == []


def test_unknown_call_compiles_in_child():
    calls = []

    def fake_compile(*args, **kwargs):
        calls.append((args, kwargs))
        return "built"
    loader = inline.PrebuiltLoader([], real=fake_compile)
    assert loader("ext", "src", verbose=True) == "built"
    assert calls == [(("ext", "src"), {"verbose": True})]
    assert loader.compiled_in_child == ["ext"]


def test_compile_failure_becomes_extension_error():
    def failing(*_args, **_kwargs):
        raise RuntimeError("Error building extension 'ext': nvcc error")
    with pytest.raises(ExtensionError, match="nvcc error") as info:
        inline.PrebuiltLoader([], real=failing)("ext", "src")
    assert info.value.kind == "compile_error" and info.value.name == "ext"


def test_unloadable_prebuilt_library_is_library_load_error(tmp_path):
    library = tmp_path / "ext.so"
    library.write_bytes(b"not an ELF file")
    entry = {"digest": inline.call_digest(inline.call_fields("ext", "src")), "name": "ext",
             "library": str(library)}
    with pytest.raises(ExtensionError) as info:
        inline.PrebuiltLoader([entry], real=_never_compile)("ext", "src")
    assert info.value.kind == "library_load_error"

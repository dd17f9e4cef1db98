"""Replacements for `torch.utils.cpp_extension.load_inline`.

* `Recorder` (op `extract`): records every call and returns a placeholder module.
* `PrebuiltLoader` (op `run`): a call whose digest matches a `prebuilt` entry loads that
  library with `importlib.machinery.ExtensionFileLoader` (no compile); any other call
  compiles in the child with the real `load_inline` and is named in `compiled_in_child`.

`call_digest` (inline_fields.py) is the single digest function of both and of the
static extractor.
"""

import contextlib
import importlib.machinery
import importlib.util
import inspect
import types

import torch.utils.cpp_extension as cpp_extension

from ..failure import ExtensionError
from .inline_fields import DIGEST_FIELDS, call_digest, fields_of  # noqa: F401 (re-exported)

REAL_LOAD_INLINE = cpp_extension.load_inline
_SIGNATURE = inspect.signature(REAL_LOAD_INLINE)

def call_fields(*args, **kwargs) -> dict:
    """Bind a `load_inline(*args, **kwargs)` call and return its normalised DIGEST_FIELDS.

    Raises TypeError, as `load_inline` would, when the arguments do not bind.
    """
    bound = _SIGNATURE.bind(*args, **kwargs)
    bound.apply_defaults()
    return fields_of(bound.arguments)


class _Placeholder(types.ModuleType):
    """Stands in for an extension during `extract`: every attribute is a function that
    raises, since nothing was built."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)

        def unavailable(*_args, **_kwargs):
            raise RuntimeError(f"extension {self.__name__!r} is not built during extract")
        return unavailable


class Recorder:
    """load_inline replacement for `extract`; `calls` lists the fields + digest of each call."""

    def __init__(self):
        self.calls = []

    def __call__(self, *args, **kwargs):
        fields = call_fields(*args, **kwargs)
        self.calls.append({**fields, "digest": call_digest(fields)})
        return _Placeholder(fields["name"])


def load_library(name: str, path: str) -> types.ModuleType:
    """Import the extension module `name` from the shared library at `path`."""
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class PrebuiltLoader:
    """load_inline replacement for `run`.

    `prebuilt` is the request's list of {"digest", "name", "library"}. `real` is the
    fallback compiler (the real load_inline unless a test substitutes it). Failures
    raise ExtensionError; `compiled_in_child` names every call that was compiled here.
    """

    def __init__(self, prebuilt, real=REAL_LOAD_INLINE):
        self._prebuilt = {entry["digest"]: entry for entry in prebuilt}
        self._real = real
        self._loaded = {}
        self.compiled_in_child = []

    def __call__(self, *args, **kwargs):
        fields = call_fields(*args, **kwargs)
        digest = call_digest(fields)
        if digest in self._loaded:
            return self._loaded[digest]
        entry = self._prebuilt.get(digest)
        if entry is not None:
            module = self._load(entry)
        else:
            module = self._compile(fields["name"], args, kwargs)
        self._loaded[digest] = module
        return module

    def _load(self, entry):
        try:
            return load_library(entry["name"], entry["library"])
        except Exception as exc:
            raise ExtensionError("library_load_error", entry["name"],
                                 f"loading {entry['library']} failed: {exc}") from exc

    def _compile(self, name, args, kwargs):
        self.compiled_in_child.append(name)
        try:
            return self._real(*args, **kwargs)
        except Exception as exc:
            raise ExtensionError("compile_error", name, str(exc)) from exc


@contextlib.contextmanager
def replaced(replacement):
    """Within the block, `torch.utils.cpp_extension.load_inline` is `replacement`
    (so both `from torch.utils.cpp_extension import load_inline` done inside the block
    and attribute access see it); the original is restored on exit."""
    original = cpp_extension.load_inline
    cpp_extension.load_inline = replacement
    try:
        yield replacement
    finally:
        cpp_extension.load_inline = original

"""Op `build_facts`, which kz's C++ build driver calls (src/compile/build_facts.h,
driver_call.cc); the driver's own tests, and those of its cuda.cu split, are C++
(tests/unit/compile)."""

import os

from kz_worker.farm import build_facts


def test_template_has_placeholders_and_renders_back():
    d = "/tmp/some dir"
    text = ("cflags = -DTORCH_EXTENSION_NAME=ext -O2\nbuild main.o: compile /tmp/some$ dir/main.cpp\n"
            "build ext.so: link main.o\ndefault ext.so\n")
    template, name = build_facts.make_template(text, d)
    assert name == "ext"
    assert "@KZ_NAME@" in template and "@KZ_DIR@/main.cpp" in template and "some$ dir" not in template
    assert build_facts.make_template("no default here", d)[0] is None


def test_build_facts_reports_torchs_ninja_file_and_probe_files(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    r = build_facts.build_facts_op({"call": {"cuda": True, "extra_cuda_cflags": ["-O3"]},
                                    "build_dir": str(tmp_path / "facts dir")})
    assert r["ok"], r
    assert "-DTORCH_EXTENSION_NAME=@KZ_NAME@" in r["ninja"] and "@KZ_DIR@/cuda.cu" in r["ninja"]
    assert "sm_90" in r["ninja"] and " -O3" in r["ninja"]
    assert not os.path.exists(tmp_path / "facts dir" / f"{build_facts.PROBE_NAME}.so")   # nothing compiled
    assert r["probe"]["main_cpp"].startswith("#include <torch/extension.h>\n")
    assert r["probe"]["cuda_cu"] == "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"

#!/usr/bin/env bash
# Prepares what a device run carries (docs/gpu-results.md, "How to run"): stripped binaries in
# build/carry-bin, the shared libraries the GPU host lacks in build/carry-libs, and
# build/clean = python/ scripts/ bench/ tests/ examples/ data/ as committed (HEAD), so that
# uncommitted edits never reach a measured run. On the device, start with
#   cp -r build/clean/* . && mkdir -p build/bin && cp -r build/carry-bin/. build/bin/ &&
#   export LD_LIBRARY_PATH=$PWD/build/carry-libs
set -euo pipefail
cd "$(dirname "$0")/.."
BINS=(kz kz-serve kz-worker kz-propose kz-train kz-generate kz-optimize kz_runtime_test_gpu kz_trace_test_gpu kz_sandbox_bench kz_ncu_gpu_tests)
ninja -C build "${BINS[@]}" kz_runtime >/dev/null
rm -rf build/carry-bin build/carry-libs build/clean
mkdir -p build/carry-bin build/carry-libs build/clean
for b in "${BINS[@]}"; do strip -o "build/carry-bin/$b" "build/bin/$b"; done
for l in libcpp-httplib.so.0.11 libbrotlicommon.so.1 libbrotlidec.so.1 libbrotlienc.so.1 libsqlite3.so.0; do
  cp -L "/lib/x86_64-linux-gnu/$l" build/carry-libs/
done
# kz-propose, kz-generate and kz-train link libcurl, whose closure (ssl, ...) the GPU host may
# lack or have in other versions: carried apart and found through those binaries' own DT_RPATH
# (searched before LD_LIBRARY_PATH, and used for their dependencies too), so that Python's
# processes on the host never load these copies.
mkdir -p build/carry-bin/curl-libs
for b in kz-propose kz-generate kz-train kz-optimize; do
  for l in $(ldd "build/bin/$b" | awk '$3 ~ /^\// {print $3}' | grep -v -E '/lib(c|m|pthread|dl|rt|resolv|gcc_s|stdc\+\+)\.so'); do
    cp -L "$l" build/carry-bin/curl-libs/
  done
  patchelf --force-rpath --set-rpath '$ORIGIN/curl-libs' "build/carry-bin/$b"
done
git archive HEAD python scripts bench tests examples data | tar -x -C build/clean
du -sh build/carry-bin build/carry-libs build/clean build/lib | tr '\n' ' '; echo
# The same binaries, libraries and runtime packed (xz: 45 MiB -> ~11 MB), so that a call can carry
# them beside a model part. Unpack on the device with `tar xJf build/carry/kz.tar.xz -C build`.
# When the tree is committed (git status clean), the tree that travels is HEAD: build/clean is
# then not needed.
mkdir -p build/carry && tar cf - -C build carry-bin carry-libs lib/libkz_runtime.so | xz -9 -T2 >build/carry/kz.tar.xz
ls -la build/carry/kz.tar.xz
# --model: the training miniature's extras (docs/gpu-results.md, "How to run"): the SmolLM2
# GGUF in two parts, the first 45,000,000 bytes (it travels beside build/carry/kz.tar.xz and the
# ~8 MB tracked tree within a call's 64 MiB), the second the rest (~53 MB, with build/pydeps);
# join them on the device with cat, check build/model/sha256; and the gguf
# package the GPU host's Python lacks (carry build/pydeps, set PYTHONPATH=$PWD/build/pydeps).
if [[ ${1:-} == --model ]]; then
  rm -rf build/model build/pydeps && mkdir -p build/model build/pydeps
  head -c 45000000 .models/SmolLM2-135M-Instruct.Q4_1.gguf >build/model/smollm2.gguf.part0
  tail -c +45000001 .models/SmolLM2-135M-Instruct.Q4_1.gguf >build/model/smollm2.gguf.part1
  (cd .models && sha256sum SmolLM2-135M-Instruct.Q4_1.gguf) >build/model/sha256
  site=$(.venv/bin/python -c 'import gguf, os; print(os.path.dirname(os.path.dirname(gguf.__file__)))')
  cp -r "$site"/gguf "$site"/gguf-*.dist-info build/pydeps/
  find build/pydeps -name __pycache__ -prune -exec rm -rf {} +
  ls -la build/model; du -sh build/pydeps
fi

#!/usr/bin/env bash
# Prepares what a device run carries (docs/gpu-results.md, "How to run"): stripped binaries in
# build/carry-bin, the shared libraries the GPU host lacks in build/carry-libs, and
# build/clean = python/ scripts/ bench/ tests/ examples/ as committed (HEAD), so that
# uncommitted edits never reach a measured run. On the device, start with
#   cp -r build/clean/* . && mkdir -p build/bin && cp build/carry-bin/* build/bin/ &&
#   export LD_LIBRARY_PATH=$PWD/build/carry-libs
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build kz kz-serve kz-worker kz_runtime kz_runtime_test_gpu kz_trace_test_gpu >/dev/null
rm -rf build/carry-bin build/carry-libs build/clean
mkdir -p build/carry-bin build/carry-libs build/clean
for b in kz kz-serve kz-worker kz_runtime_test_gpu kz_trace_test_gpu; do strip -o "build/carry-bin/$b" "build/bin/$b"; done
for l in libcpp-httplib.so.0.11 libbrotlicommon.so.1 libbrotlidec.so.1 libbrotlienc.so.1 libsqlite3.so.0; do
  cp -L "/lib/x86_64-linux-gnu/$l" build/carry-libs/
done
git archive HEAD python scripts bench tests examples | tar -x -C build/clean
du -sh build/carry-bin build/carry-libs build/clean build/lib | tr '\n' ' '; echo

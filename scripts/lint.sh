#!/usr/bin/env bash
# Guard rails (docs/decisions.md, "Guard rails"): the C++ files listed in scripts/lint_files.txt
# must match .clang-format and pass .clang-tidy; python/kz_worker, kz_train and kz_client must
# pass ruff (ruff.toml). The list grows as files are touched: a file joins it once clean.
# Usage: scripts/lint.sh [BUILD_DIR]   (BUILD_DIR holds compile_commands.json; default build)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
fail=0
mapfile -t files < <(grep -v -E '^\s*(#|$)' scripts/lint_files.txt)
for f in "${files[@]}"; do
  [[ -f $f ]] || { echo "lint: $f is listed but missing"; fail=1; continue; }
  clang-format --dry-run -Werror "$f" 2>&1 | head -5 | grep . && { echo "lint: $f: not clang-formatted (clang-format -i $f)"; fail=1; }
done
if [[ -f $BUILD/compile_commands.json ]]; then
  ccs=()
  for f in "${files[@]}"; do [[ $f == *.cc ]] && ccs+=("$f"); done
  out=$(clang-tidy -p "$BUILD" --quiet "${ccs[@]}" 2>/dev/null | grep -E "warning:|error:")
  [[ -n $out ]] && { echo "$out"; echo "lint: clang-tidy found the above"; fail=1; }
else
  echo "lint: $BUILD/compile_commands.json missing: clang-tidy skipped (configure with cmake first)"; fail=1
fi
RUFF=.venv/bin/ruff
[[ -x $RUFF ]] || RUFF=$(command -v ruff || true)
if [[ -n $RUFF ]]; then
  "$RUFF" check --quiet python/kz_worker python/kz_train python/kz_client || { echo "lint: ruff found the above"; fail=1; }
else
  echo "lint: ruff is not installed (scripts/setup.sh installs it)"; fail=1
fi
[[ $fail == 0 ]] && echo "lint: ${#files[@]} C++ files and the Python packages are clean"
exit $fail

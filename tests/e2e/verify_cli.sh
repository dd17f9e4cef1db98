#!/usr/bin/env bash
# kz verify from outside: bad inputs get a clear message and a distinct exit code; verdict
# JSON has the documented shape. Runs on a CPU-only host (KZ_FORCE_CPU=1).
KZ=$1
source "$(dirname "$0")/lib.sh"
T=examples/tasks C=examples/candidates
V=("$KZ" -q verify --cache-dir "$CACHE_DIR" --timeout 120)

expect_exit 2 "no arguments" -- "$KZ"
expect_exit 2 "verify without files" -- "${V[@]}"
err_contains "verify without files says what is missing" "--ref and --candidate are required"
expect_exit 2 "missing task file" -- "${V[@]}" --ref /nonexistent/task.py --candidate $C/relu_triton_ok.py
err_contains "missing file is named" "/nonexistent/task.py"
expect_exit 2 "unknown backend" -- "${V[@]}" --ref $T/relu.py --candidate $C/relu_triton_ok.py --backend opencl
expect_exit 2 "GPU index that does not exist" -- "${V[@]}" --ref $T/relu.py --candidate $C/relu_triton_ok.py --device 7

expect_exit 0 "correct Triton candidate under the interpreter" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/relu_triton_ok.py
json_check "schema and status" 'v["schema"] == "kz.verdict/1" and v["status"] == "correct"'
json_check "correctness ran 5 trials" 'v["stages"]["correctness"]["trials_run"] >= 5 and v["checked"]["correctness"]'
json_check "CPU run says timing was not checked" 'any(s.startswith("timing") for s in v["not_checked"]) and not v["checked"]["timing"]'
json_check "device is the CPU with the interpreter" 'v["device"]["kind"] == "cpu"'

expect_exit 15 "task without get_inputs" -- "${V[@]}" --json --ref $T/task_no_get_inputs.py --candidate $C/relu_triton_ok.py
json_check "invalid_task names get_inputs" '"get_inputs" in v["reason"]'
expect_exit 15 "task with a syntax error" -- "${V[@]}" --ref $T/task_syntax_error.py --candidate $C/relu_triton_ok.py
expect_exit 11 "candidate without ModelNew" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/cand_no_model_new.py
json_check "missing ModelNew is named" '"ModelNew" in v["reason"]'
expect_exit 11 "candidate with a syntax error" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/cand_syntax_error.py
json_check "syntax error kind" 'v["error"]["kind"] == "python_syntax"'
expect_exit 11 "constructor mismatch" -- "${V[@]}" --json --ref $T/linear_relu.py --candidate $C/cand_ctor_mismatch.py
json_check "constructor mismatch kind" 'v["error"]["kind"] == "constructor_mismatch"'
expect_exit 10 "wrong output shape" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/cand_wrong_shape.py
json_check "shape is named in the reason" '"shape" in v["reason"]'
expect_exit 10 "wrong output dtype" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/cand_wrong_dtype.py
json_check "dtype is named in the reason" '"dtype" in v["reason"]'
expect_exit 0 "candidate printing megabytes" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/cand_prints_megabytes.py
json_check "printed output is counted but only a tail kept" 'v["output"]["stdout_bytes"] > 4_000_000 and len(v["output"]["stdout_tail"]) <= 8192'
expect_exit 10 "candidate modifying its input" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/cand_modifies_input.py
json_check "input modification is reported" 'any(t.get("inputs_modified") for t in v["stages"]["correctness"]["trials"])'
expect_exit 10 "tiny softmax outputs must not pass on atol alone" -- "${V[@]}" --json --ref $T/softmax.py --candidate $C/softmax_triton_tiny_wrong.py
expect_exit 12 "candidate raising in forward" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/relu_triton_raises.py
json_check "traceback is kept" '"boom" in v["error"]["traceback"]'
expect_exit 12 "candidate allocating 10 TB beyond the task's footprint" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/relu_triton_alloc_huge.py
json_check "its reason names the allocation" '"allocate" in v["reason"] and v["error"]["kind"] == "runtime"'

# An enormous candidate is refused up front with the limit named.
BIG=$(mktemp --suffix=.py)
python3 -c "import sys; open(sys.argv[1], 'w').write('# ' + 'x' * (9 << 20) + '\n')" "$BIG"
expect_exit 11 "candidate over the source-size limit" -- "${V[@]}" --json --ref $T/relu.py --candidate "$BIG"
json_check "the limit is named" '"over the limit of 8 MiB" in v["reason"] and v["error"]["kind"] == "source_too_large"'
rm -f "$BIG"

# The static screen runs first: a cheat is rejected with its rule (exit 14), before any run.
CH=tests/corpus/cheats/silu_launched_torch_output_triton.py
expect_exit 14 "screen rejects PyTorch compute in forward (strict)" -- "${V[@]}" --json --ref tests/corpus/tasks/silu.py --candidate $CH
json_check "rejected verdict names the rule and the policy" 'v["status"] == "rejected" and v["policy"] == "strict" and "py.torch_compute" in v["reason"] and "correctness" not in v["stages"]'
json_check "screen stage lists the finding with a line" 'any(f["rule"] == "py.torch_compute" and f["line"] > 0 for f in v["stages"]["screen"]["findings"])'
# A file-level finding has no line (null): reported as "(whole file)", never a crash.
expect_exit 14 "screen rejects a file-level finding (gen.no_kernel)" -- "${V[@]}" --json --ref tests/corpus/tasks/layernorm.py --candidate tests/corpus/cheats/layernorm_pure_torch.py
json_check "whole-file finding named in the reason" '"gen.no_kernel (whole file)" in v["reason"]'
expect_exit 0 "kernelbench policy only warns on PyTorch compute" -- "${V[@]}" --json --policy kernelbench --ref tests/corpus/tasks/silu.py --candidate $CH
json_check "warning is kept in the verdict" 'v["policy"] == "kernelbench" and any(f["severity"] == "warn" for f in v["stages"]["screen"]["findings"])'
expect_exit 0 "--no-integrity: the cheat is judged on correctness alone (the baseline)" -- "${V[@]}" --json --no-integrity --ref tests/corpus/tasks/silu.py --candidate $CH
json_check "policy none, no screen, integrity named as not checked" 'v["policy"] == "none" and "screen" not in v["stages"] and "extra_checks" not in v["stages"] and any(n.startswith("integrity: off") for n in v["not_checked"])'
expect_exit 0 "--no-screen skips the screen" -- "${V[@]}" --json --no-screen --ref $T/relu.py --candidate $C/relu_triton_ok.py
json_check "no screen stage" '"screen" not in v["stages"]'
json_check "honest kernels pass the screen" 'True'
expect_exit 0 "honest candidate has a passing screen stage" -- "${V[@]}" --json --ref $T/relu.py --candidate $C/relu_triton_ok.py
json_check "screen status pass" 'v["stages"]["screen"]["status"] == "pass"'
expect_exit 2 "unknown policy" -- "${V[@]}" --policy lenient --ref $T/relu.py --candidate $C/relu_triton_ok.py

# A manifest whose expectation is wrong fails the run (exit 1) and says which sample.
M=$(mktemp --suffix=.jsonl)
echo "{\"task\": \"$T/relu.py\", \"candidate\": \"$C/relu_triton_wrong.py\", \"expect_cpu\": \"correct\"}" > "$M"
expect_exit 1 "manifest expectation mismatch" -- "${V[@]}" --manifest "$M"
err_contains "mismatch names the sample" "relu_triton_wrong.py: expected correct, got incorrect"
echo "not json" > "$M"
expect_exit 2 "malformed manifest" -- "${V[@]}" --manifest "$M"
rm -f "$M"
finish

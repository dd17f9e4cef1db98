#!/usr/bin/env bash
# kz propose / kz frontier from outside (docs/curriculum.md): the catalog listing, mining a
# corpus this script writes (with a non-UTF-8 and an unparsable file: skipped and counted),
# the plots, sampling and its coverage, bad API sets and catalogs, the labelled validation
# set (every module classified as labelled, with its stage; throughput printed), and the
# frontier pool (add through validate, stats, list, export, an older schema migrated).
KZ=$1
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/propose_lib.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
P=("$KZ" -q propose)
unset KZ_KERNELBENCH

expect_exit 0 "propose apis lists the catalog" -- "${P[@]}" apis --json
json_check "catalog entries have id, kind, aliases" 'v["id"] and v["kind"] in ("module", "functional", "function", "method") and v["aliases"]'
n_apis=$(wc -l <"$OUT_FILE")
[[ $n_apis -ge 200 ]] && { PASSES=$((PASSES + 1)); echo "ok   catalog has $n_apis APIs"; } || { FAILS=$((FAILS + 1)); echo "FAIL catalog has $n_apis APIs"; }
expect_exit 0 "propose apis --category convolution" -- "${P[@]}" apis --category convolution
grep -q "^conv2d" "$OUT_FILE" && ! grep -q "^relu" "$OUT_FILE" && { PASSES=$((PASSES + 1)); echo "ok   category filter"; } || { FAILS=$((FAILS + 1)); echo "FAIL category filter"; }

# A catalog of another version.
python3 -c 'import json,sys; c=json.load(open("data/api_catalog.json")); c["version"]=2; json.dump(c, open(sys.argv[1], "w"))' "$TMP/v2.json"
expect_exit 2 "catalog of another version" -- "${P[@]}" --catalog "$TMP/v2.json" apis
err_contains "versions named" "API catalog version 2, this kz reads version 1"

# A small corpus: three modules, one non-UTF-8 file, one syntax error, one without Model.
mkdir -p "$TMP/corpus/level1"
cat >"$TMP/corpus/level1/1_a.py" <<'PY'
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
    def forward(self, x):
        return torch.relu(self.conv(x))
PY
cat >"$TMP/corpus/level1/2_b.py" <<'PY'
import torch
import torch.nn.functional as F
class Model(torch.nn.Module):
    def forward(self, x):
        return F.conv2d(x, x).relu().sum()
PY
cat >"$TMP/corpus/level1/3_c.py" <<'PY'
from torch import nn
class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=0).softmax(dim=0)
PY
printf 'import torch\n# caf\xe9\nclass Model: pass\n' >"$TMP/corpus/level1/4_latin1.py"
printf 'class Model(:\n' >"$TMP/corpus/level1/5_broken.py"
printf 'import torch\nx = 1\n' >"$TMP/corpus/level1/6_nomodel.py"
expect_exit 0 "mine a corpus" -- "${P[@]}" mine --corpus "$TMP/corpus/level1" --out "$TMP/stats.json" --plots "$TMP/plots"
python3 - "$TMP/stats.json" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   statistics: counts, pairs, skips, hash"; } || { FAILS=$((FAILS + 1)); echo "FAIL statistics"; cat "$TMP/stats.json" | head -40; }
import json, sys
s = json.load(open(sys.argv[1]))
apis = {a["id"]: a["count"] for a in s["apis"]}
pairs = {(a, b): n for a, b, n in s["pairs"]}
assert s["format"] == "kz.cooccur" and s["catalog_version"] == 1 and len(s["corpus"]["hash"]) == 32
assert s["corpus"]["files"] == 6 and s["corpus"]["modules"] == 3, s["corpus"]
assert s["corpus"]["skipped"] == {"not_utf8": 1, "syntax_error": 1, "no_model": 1}, s["corpus"]["skipped"]
assert apis == {"conv2d": 2, "relu": 2, "sum": 2, "softmax": 1}, apis
assert pairs[("conv2d", "relu")] == 2 and pairs[("softmax", "sum")] == 1, pairs
PY
grep -q 'class="cell"' "$TMP/plots/cooccurrence.svg" && grep -q 'class="bar"' "$TMP/plots/coverage.svg" \
  && { PASSES=$((PASSES + 1)); echo "ok   plots written"; } || { FAILS=$((FAILS + 1)); echo "FAIL plots"; }
expect_exit 2 "mine a missing corpus" -- "${P[@]}" mine --corpus "$TMP/nope" --out "$TMP/x.json"
expect_exit 2 "mine without a corpus or KZ_KERNELBENCH" -- "${P[@]}" mine --out "$TMP/x.json"

# Sampling: reproducible, k APIs, coverage within the bound.
expect_exit 0 "sample 20 sets" -- "${P[@]}" sample --sets 20 -k 4 --seed 3 --stats "$TMP/stats.json"
cp "$OUT_FILE" "$TMP/sets1"
json_check "sets have k APIs" 'len(v["apis"]) == 4 and v["source"] == "fresh"'
"${P[@]}" sample --sets 20 -k 4 --seed 3 --stats "$TMP/stats.json" >"$TMP/sets2"
cmp -s "$TMP/sets1" "$TMP/sets2" && { PASSES=$((PASSES + 1)); echo "ok   same seed, same sets"; } || { FAILS=$((FAILS + 1)); echo "FAIL reproducible"; }
expect_exit 0 "coverage measured" -- "${P[@]}" sample --sets 2000 -k 3 --rho 0.2 --stats "$TMP/stats.json" --coverage
json_check "every API covered within the bound" 'v["all_covered_at"] is not None and v["all_covered_at"] <= v["bound"]'
cat "$OUT_FILE"
expect_exit 2 "k above the catalog" -- "${P[@]}" sample --sets 1 -k 100000
expect_exit 2 "rho of 1" -- "${P[@]}" sample --sets 1 --rho 1
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); s["catalog_version"]=3; json.dump(s, open(sys.argv[2], "w"))' "$TMP/stats.json" "$TMP/stats3.json"
expect_exit 2 "statistics of another catalog version" -- "${P[@]}" sample --sets 1 --stats "$TMP/stats3.json"
err_contains "catalog versions named" "statistics of API catalog version 3"

# Validation: bad API sets, then the labelled set.
L=tests/curriculum/labelled
expect_exit 2 "unknown API in a set" -- "${P[@]}" validate $L/v_relu_method.py --apis relu,no_such_api
err_contains "unknown API named" "unknown API 'no_such_api'"
expect_exit 2 "empty API set" -- "${P[@]}" validate $L/v_relu_method.py --apis ,
err_contains "empty set named" "empty API set"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  expect_exit 2 "--cuda without a GPU" -- "${P[@]}" validate $L/v_relu_method.py --apis relu --cuda
  err_contains "no GPU named" "--cuda: no GPU on this host"
fi
expect_exit 0 "one valid module, aliases accepted" -- "${P[@]}" validate $L/v_relu_method.py --apis torch.nn.ReLU
json_check "valid" 'v["valid"] and v["apis"] == ["relu"]'
start_ns=$(date +%s%N)
expect_exit 0 "labelled set: every module as labelled" -- "${P[@]}" validate --manifest $L/manifest.jsonl \
  --decontaminate tests/curriculum/eval_suite --pool "$TMP/frontier.db" --round 1 --timeout 5 --max-mem-mib 1024
ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
grep -F '"matches":false' "$OUT_FILE" | head -20
n=$(grep -c '"matches":true' "$OUT_FILE")
echo "     (labelled set: $n modules as labelled in $ms ms; $(tail -1 "$ERR_FILE"))"
[[ $n -ge 60 ]] && { PASSES=$((PASSES + 1)); echo "ok   at least 60 labelled modules"; } || { FAILS=$((FAILS + 1)); echo "FAIL only $n"; }

# The frontier pool the labelled run filled: one row per valid module.
expect_exit 0 "frontier stats" -- "$KZ" -q frontier --db "$TMP/frontier.db" stats
json_check "valid modules in the pool, untested" 'v["modules"] >= 40 and v["by_status"] == {"untested": v["modules"]}'
expect_exit 0 "frontier list" -- "$KZ" -q frontier --db "$TMP/frontier.db" list
json_check "list entries" 'v["status"] == "untested" and v["p_hat"] is None and v["apis"]'
expect_exit 0 "frontier export" -- "$KZ" -q frontier --db "$TMP/frontier.db" export --out "$TMP/export"
[[ $(ls "$TMP/export/level1" | wc -l) -ge 40 && -s "$TMP/export/frontier.jsonl" ]] \
  && { PASSES=$((PASSES + 1)); echo "ok   exported in KernelBench layout"; } || { FAILS=$((FAILS + 1)); echo "FAIL export"; }
expect_exit 1 "the same modules again are duplicates of the pool" -- "${P[@]}" validate $L/v_softmax.py --apis softmax --pool "$TMP/frontier.db"
json_check "duplicate of the pool" 'v["rule"] == "duplicate" and "frontier pool" in v["reason"]'
expect_exit 2 "frontier without a database" -- "$KZ" -q frontier --db "$TMP/none.db" stats

# An older (schema 1) pool is migrated.
python3 - "$TMP/old.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE modules(id INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
  api_set TEXT NOT NULL, source TEXT NOT NULL, round INTEGER NOT NULL, added_at INTEGER NOT NULL);
CREATE TABLE attempts(module_id INTEGER NOT NULL, round INTEGER NOT NULL, attempts INTEGER NOT NULL,
  successes INTEGER NOT NULL, PRIMARY KEY(module_id, round));
INSERT INTO meta VALUES('schema_version', '1');
INSERT INTO modules VALUES(1, 'h', 'm', '["relu","conv2d"]', 'src', 0, 0);
INSERT INTO attempts VALUES(1, 0, 8, 0);
""")
db.commit()
PY
expect_exit 0 "schema 1 pool migrated" -- "$KZ" -q frontier --db "$TMP/old.db" stats
json_check "migrated statuses" 'v["by_status"] == {"unsolved": 1} and v["mean_p_hat"] == 0'
expect_exit 0 "unsolved sets feed the sampler's frontier share" -- "${P[@]}" sample --sets 10 -k 2 --rho 0.5 --pool "$TMP/old.db"
grep -q '"apis":\["conv2d","relu"\],"epoch":[0-9]*,"set":1,"source":"frontier"\|"source":"frontier"' "$OUT_FILE" \
  && { PASSES=$((PASSES + 1)); echo "ok   frontier sets drawn"; } || { FAILS=$((FAILS + 1)); echo "FAIL frontier sets"; cat "$OUT_FILE"; }

# The Proposer loop's file interfaces: API sets for kz generate --proposer, and its run
# directory validated resumably (a hand-written run: kz.proposal/1 records and modules/).
expect_exit 0 "sample into a kz.api_sets file" -- "${P[@]}" sample --sets 3 -k 2 --seed 5 --api-sets "$TMP/sets.jsonl"
python3 - "$TMP/sets.jsonl" <<'PY' && { PASSES=$((PASSES + 1)); echo "ok   api-sets file"; } || { FAILS=$((FAILS + 1)); echo "FAIL api-sets file"; cat "$TMP/sets.jsonl"; }
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert [l["id"] for l in lines] == ["s000000", "s000001", "s000002"]
assert all(len(l["apis"]) == 2 and all(a.startswith(("torch.", "Tensor.")) for a in l["apis"]) and len(l["ids"]) == 2 for l in lines)
PY
RUN="$TMP/run"
python3 - "$RUN" tests/curriculum/labelled <<'PY'
import json, os, sys
run, lab = sys.argv[1], sys.argv[2]
os.makedirs(run + "/modules")
def rec(s, n, apis, code, reason=None):
    open(f"{run}/modules/{s}_sample_{n}.py", "w").write(code)
    return json.dumps({"format": "kz.proposal/1", "set": s, "apis": apis, "sample": n, "code": code, "reason": reason})
conv = open(lab + "/v_conv2d_relu.py").read()
soft = open(lab + "/v_softmax.py").read()
lines = [rec("a", 0, ["torch.nn.Conv2d", "torch.relu"], conv), rec("a", 1, ["torch.nn.Conv2d", "torch.relu"], "", "truncated"),
         rec("b", 0, ["torch.nn.functional.softmax", "torch.sigmoid"], soft), rec("c", 0, ["torch.nope"], soft), "not json"]
open(run + "/proposals.jsonl", "w").write("\n".join(lines) + "\n")
PY
expect_exit 1 "validate a proposer run (a bad line: exit 1)" -- "${P[@]}" validate --proposals "$RUN" --pool "$TMP/loop.db" --no-decontaminate
json_check "each proposal classified" 'v["proposals"] == 4 and v["validated_before"] == 0 and v["now"] == {"valid": 1, "extract.truncated": 1, "ast.unused_api": 1, "input.api_set": 1}'
err_contains "the bad line named" "proposals.jsonl:5: not JSON"
[[ $(wc -l <"$RUN/validation.jsonl") -eq 4 && $(ls "$RUN/valid/level1") == "1_a_sample_0.py" ]] \
  && { PASSES=$((PASSES + 1)); echo "ok   validation.jsonl and the valid module in KernelBench layout"; } || { FAILS=$((FAILS + 1)); echo "FAIL run outputs"; ls -R "$RUN"; }
expect_exit 0 "the valid module went to the pool" -- "$KZ" -q frontier --db "$TMP/loop.db" stats
json_check "one module in the pool" 'v["modules"] == 1'
expect_exit 1 "rerun: nothing validated twice" -- "${P[@]}" validate --proposals "$RUN" --no-decontaminate
json_check "all four validated before" 'v["validated_before"] == 4 and v["now"] == {}'
head -n 3 "$RUN/validation.jsonl" >"$TMP/v3" && mv "$TMP/v3" "$RUN/validation.jsonl"   # as if killed before the 4th
printf '{"format": "kz.valid' >>"$RUN/validation.jsonl"                                # and a torn line
expect_exit 1 "after a kill: only the missing one again" -- "${P[@]}" validate --proposals "$RUN" --no-decontaminate
json_check "one validated now" 'v["validated_before"] == 3 and sum(v["now"].values()) == 1'

# The Frontier Reward of the run: the valid module untested (null), the others the penalty;
# then the Coder's attempts recorded (3 of 4: p̂ 0.75, reward 0.5).
expect_exit 0 "rewards before any Coder attempt" -- "${P[@]}" rewards --proposals "$RUN" --pool "$TMP/loop.db" --invalid-penalty -0.5
python3 - "$RUN/rewards.jsonl" 'sorted((r["set"], r["sample"], r["reward"]) for r in R) == [("a", 0, None), ("a", 1, -0.5), ("b", 0, -0.5), ("c", 0, -0.5)]' <<'PY' \
  && { PASSES=$((PASSES + 1)); echo "ok   rewards: penalty, pending"; } || { FAILS=$((FAILS + 1)); echo "FAIL rewards"; cat "$RUN/rewards.jsonl"; }
import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
expect_exit 0 "record the Coder's attempts" -- "$KZ" -q frontier --db "$TMP/loop.db" record --id 1 --round 1 --attempts 4 --successes 3
json_check "p_hat and status" 'v["p_hat"] == 0.75 and v["status"] == "frontier"'
expect_exit 2 "more successes than attempts" -- "$KZ" -q frontier --db "$TMP/loop.db" record --id 1 --round 1 --attempts 1 --successes 2
expect_exit 2 "an unknown module" -- "$KZ" -q frontier --db "$TMP/loop.db" record --id 99 --round 1 --attempts 1 --successes 0
expect_exit 0 "rewards after the Coder's attempts" -- "${P[@]}" rewards --proposals "$RUN" --pool "$TMP/loop.db"
python3 - "$RUN/rewards.jsonl" '[r["reward"] for r in R if r["valid"]] == [0.5] and sorted(r["reward"] for r in R if not r["valid"]) == [-1, -1, -1]' <<'PY' \
  && { PASSES=$((PASSES + 1)); echo "ok   reward 1 - 2|0.75 - 0.5| = 0.5"; } || { FAILS=$((FAILS + 1)); echo "FAIL rewards after"; cat "$RUN/rewards.jsonl"; }
import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY

# The loop in one command, against a scripted Proposer server and a three-API catalog:
# 3 sets x 3 samples; per set sample 0 a module, 1 the same module again (a duplicate),
# 2 a reply without code. A rerun asks nothing; two lost records are asked again.
write_three_api_catalog "$TMP/cat3.json"
start_fake_proposer "$TMP"
URL=$FAKE_URL
L=("$KZ" -q propose --catalog "$TMP/cat3.json" --endpoint "$URL" --model fake --sets 3 -k 2 -n 3 --seed 0
   --out "$TMP/loop" --no-decontaminate --pool "$TMP/loop_pool.db" --round 1)
expect_exit 0 "kz propose --endpoint: the loop" -- "${L[@]}"
json_check "every proposal classified" 'v["proposals"] == 9 and v["now"].get("extract.no_code") == 3 and v["now"].get("valid", 0) >= 1 and v["now"].get("valid", 0) + v["now"].get("ast.duplicate", 0) == 6'
[[ $(wc -l <"$TMP/requests.log") -eq 9 && $(wc -l <"$TMP/loop/sets.jsonl") -eq 3 && $(ls "$TMP/loop/modules" | wc -l) -eq 9 ]] \
  && { PASSES=$((PASSES + 1)); echo "ok   9 requests, 3 sets, 9 module files"; } || { FAILS=$((FAILS + 1)); echo "FAIL loop files"; wc -l "$TMP/requests.log"; ls "$TMP/loop"; }
expect_exit 0 "the loop's valid modules are in the pool" -- "$KZ" -q frontier --db "$TMP/loop_pool.db" stats
json_check "pool holds the valid ones" 'v["modules"] >= 1 and v["by_status"] == {"untested": v["modules"]}'
expect_exit 0 "the loop again: nothing asked, nothing validated" -- "${L[@]}"
json_check "all validated before" 'v["validated_before"] == 9 and v["now"] == {}'
[[ $(wc -l <"$TMP/requests.log") -eq 9 ]] && { PASSES=$((PASSES + 1)); echo "ok   no request on the rerun"; } || { FAILS=$((FAILS + 1)); echo "FAIL requests on the rerun"; }
head -n 7 "$TMP/loop/proposals.jsonl" >"$TMP/p7" && mv "$TMP/p7" "$TMP/loop/proposals.jsonl"
expect_exit 0 "after losing two proposals: only those asked again" -- "${L[@]}"
[[ $(wc -l <"$TMP/requests.log") -eq 11 ]] && { PASSES=$((PASSES + 1)); echo "ok   two requests"; } || { FAILS=$((FAILS + 1)); echo "FAIL $(wc -l <"$TMP/requests.log") requests"; }
expect_exit 2 "the loop without --out" -- "$KZ" -q propose --endpoint "$URL" --model fake --sets 1
expect_exit 2 "the loop without a model" -- "$KZ" -q propose --endpoint "$URL" --sets 1 --out "$TMP/x"
expect_exit 2 "propose without anything" -- "$KZ" -q propose

finish

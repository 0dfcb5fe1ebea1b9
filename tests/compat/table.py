#!/usr/bin/python3.11
"""table.py OUT/matrix.tsv: the matrix as a Markdown table for
docs/compatibility.md (rows as compare.py --tsv wrote them), with totals."""
import sys

rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print("| suite | cases | pass bare | pass enrolled | regress | fail bare | skipped bare | wall bare (s) | wall enrolled (s) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
tot = [0] * 8
for r in rows:
    print("| " + " | ".join(r) + " |")
    for i, v in enumerate(r[1:]):
        try:
            tot[i] += float(v)
        except ValueError:
            pass
fmt = [str(int(v)) for v in tot[:6]] + [f"{v:.0f}" for v in tot[6:]]
print("| **all** | " + " | ".join(fmt) + " |")

"""json against orjson on the result files `ingest` walks (README: "3-4x faster parsing").

Usage: python benchmarks/screens/figcheck2/parse_speed.py [DIR ...]
Reads every *.json under the folders once into memory, then times json.loads and orjson.loads over all of them
(best of 5 rounds each) and prints the ratio. Default folders: the bundled Pythia runs and the shared Every Eval
Ever records of the Open LLM Leaderboard v2 when HARNESS_EXT_SHARED_DATA is set.
"""
import json
import os
import sys
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[3]


def best(fn, docs, rounds=5):
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for d in docs:
            fn(d)
        out.append(time.perf_counter() - t)
    return min(out)


def main(argv):
    dirs = [Path(a) for a in argv] or [ROOT / "harness_ext" / "data"]
    if not argv and os.environ.get("HARNESS_EXT_SHARED_DATA"):
        dirs.append(Path(os.environ["HARNESS_EXT_SHARED_DATA"]) / "every_eval_ever")
    for d in dirs:
        docs = [p.read_bytes() for p in sorted(d.rglob("*.json")) if p.is_file()]
        mb = sum(map(len, docs)) / 1e6
        tj, to = best(json.loads, docs), best(orjson.loads, docs)
        print(f"{d}: {len(docs)} files, {mb:.1f} MB: json {tj:.3f} s, orjson {to:.3f} s, {tj / to:.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])

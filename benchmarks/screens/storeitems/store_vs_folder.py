"""``quality_items.py --store`` against ``--items-dir`` on the same long item tables.

Usage::

    python benchmarks/screens/storeitems/store_vs_folder.py FOLDER BENCHMARK WORK [quality_items options ...]

``FOLDER`` holds ``<task>.parquet`` long tables ``model, item, score`` of one benchmark. Into ``WORK`` it writes a copy
with sidecars (``benchmark: BENCHMARK``, metric ``correct``) ingested into ``WORK/store.duckdb``, and a copy with each
table's rows in model-name order (the store's order); then it runs ``quality_items.py`` on the store, on the copy in
name order and on the original files with the same options, and counts the printed rows that differ per protocol.
"""

import subprocess
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parents[1] / "quality_items.py"


def main(argv=None) -> int:
    folder, bench, work, *opts = argv if argv is not None else sys.argv[1:]
    folder, work = Path(folder), Path(work)
    (work / "files" / bench).mkdir(parents=True, exist_ok=True)
    (work / "by_name" / bench).mkdir(parents=True, exist_ok=True)
    original = work / "original"
    (original / bench).mkdir(parents=True, exist_ok=True)
    for p in sorted(folder.glob("*.parquet")):
        df = pd.read_parquet(p)
        df.to_parquet(work / "files" / bench / p.name, index=False)
        df.to_parquet(original / bench / p.name, index=False)
        (work / "files" / bench / f"{p.name}.meta.yaml").write_text(
            f"benchmark: {bench}\nitems:\n  layout: long\n  task: {p.stem}\n  metric: correct\n")
        df.sort_values(["model", "item"], kind="stable").to_parquet(work / "by_name" / bench / p.name, index=False)
    db = work / "store.duckdb"
    db.unlink(missing_ok=True)
    exe = Path(sys.executable).parent / "harness-ext"
    subprocess.run([str(exe), "ingest", str(work / "files" / bench), "--db", str(db)], check=True)
    outs = {}
    for name, where in (("store", ["--store", str(db)]), ("by_name", ["--items-dir", str(work / "by_name")]),
                        ("original", ["--items-dir", str(original)])):
        outs[name] = subprocess.run([sys.executable, str(SCRIPT), *where, *opts], check=True, capture_output=True,
                                    text=True).stdout
        (work / f"{name}.txt").write_text(outs[name])
    print(f"store == by_name (byte for byte): {outs['store'] == outs['by_name']}")
    for protocol in ("interpolation", "extrapolation", "benchmark-frontier"):
        rows = {k: [r for r in v.splitlines() if f" | {protocol} | " in r and not r.startswith(f"{protocol} |")]
                for k, v in outs.items()}
        differ = sum(a != b for a, b in zip(rows["store"], rows["original"]))
        print(f"{protocol}: {differ} of {len(rows['store'])} rows differ between the store and the original order")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

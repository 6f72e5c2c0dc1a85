"""Count lm-eval 0.4 results files under ROOT whose n-samples say a task ran on part of its documents (--limit),
and the entries whose counts are no counts. Usage: python scan_limits.py ROOT"""

import json
import sys
from pathlib import Path

files = limited_files = limited_tasks = bad = 0
examples = []
for f in sorted(Path(sys.argv[1]).rglob("*.json")):
    try:
        doc = json.loads(f.read_text())
    except (ValueError, UnicodeDecodeError, OSError):
        continue
    ns = doc.get("n-samples") if isinstance(doc, dict) else None
    if not isinstance(ns, dict):
        continue
    files += 1
    cut = 0
    for t, v in ns.items():
        if not isinstance(v, dict):
            continue
        e, o = v.get("effective"), v.get("original")
        if type(e) is int and type(o) is int and 0 <= e < o:
            cut += 1
            if len(examples) < 5:
                examples.append(f"{f.relative_to(sys.argv[1])}: {t} {e} of {o}")
        elif not (type(e) is int and type(o) is int and 0 <= e <= o):
            bad += 1
    limited_files += cut > 0
    limited_tasks += cut
print(f"files with n-samples: {files}; with a --limit task: {limited_files} ({limited_tasks} task entries); "
      f"entries whose counts are no counts: {bad}")
print("\n".join(examples))

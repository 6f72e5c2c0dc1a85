"""lm-eval results files (with `configs`) under the given folders: how many name a task by an empty name or one filter
twice in a task's `filter_list`. python scan_filters.py FOLDER..."""
import json, os, sys, collections
n = dup = empty = 0
for root in sys.argv[1:]:
    for dp, dn, fn in os.walk(root):
        for f in fn:
            if not f.endswith(".json") or os.path.getsize(os.path.join(dp, f)) > 50e6: continue
            try: d = json.load(open(os.path.join(dp, f)))
            except Exception: continue
            if not isinstance(d, dict) or not isinstance(d.get("configs"), dict): continue
            n += 1
            for t, c in d["configs"].items():
                if t == "": empty += 1
                fl = c.get("filter_list") if isinstance(c, dict) else None
                if isinstance(fl, list):
                    names = [x.get("name") for x in fl if isinstance(x, dict)]
                    if len(names) != len(set(names)): dup += 1; print("dup", dp, f, t, names)
print("results files with configs:", n, "empty task names:", empty, "tasks with a filter named twice:", dup)

"""Memory held by reading lm-eval 0.4.0-0.4.2 logs beside padded results files, for the fifth red-team pass.

python padded_results.py ROOT N: writes N folders, each with twenty 20 MB results files (``config.model_args`` and
``configs`` as lm-eval writes them, ``configs.t.pad`` a list of 5,000,000 empty objects) and one ``x_t.jsonl``, then
asks ``is_samples_file`` of each log and prints the peak resident memory after each folder. Before the fix it held
every parsed file (7 GB per folder, 21 GB for N=3): run it with N=1 on a shared machine.
"""
import json
import resource
import sys
from pathlib import Path

from harness_ext.store.samples import is_samples_file


def main(root, n):
    root = Path(root)
    pad = [{}] * 5_000_000
    for f in range(n):
        d = root / f"f{f}"
        d.mkdir(parents=True)
        for j in range(20):
            doc = {"config": {"model_args": f"m{j}"}, "configs": {"t": {"pad": pad}}, "results": {}}
            (d / f"r{j:02d}.json").write_text(json.dumps(doc))
        (d / "x_t.jsonl").write_text("[]")
    for d in sorted(root.iterdir()):
        found = is_samples_file(d / "x_t.jsonl")
        print(d.name, found, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "MB peak", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

"""Read every file a `reduce` wrote into OUT and flag what could make lm-eval, helm-run or inspect read outside it.

python check.py OUT [WORKDIR]: prints one line per finding; WORKDIR is listed for files outside OUT."""
import json, re, sys
from pathlib import Path
import yaml

SUS = re.compile(r"(\.\.|^/|\\|~|\.ya?ml\b|\{\{|\{%|\$\{|\*|@)")


class L(yaml.SafeLoader):
    pass


TAGS = []
L.add_multi_constructor("!", lambda l, s, n: TAGS.append(s) or None)
L.add_multi_constructor("tag:yaml.org,2002:python", lambda l, s, n: TAGS.append(s) or None)


def walk(v, path, out):
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ("include", "class", "dataset_path", "process_results", "dataset_kwargs", "data_files", "custom_dataset"):
                out.append(f"key {k} at {path}: {str(x)[:80]!r}")
            walk(x, f"{path}.{k}", out)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, f"{path}[{i}]", out)
    elif isinstance(v, str) and path.endswith((".task", ".group", ".dataset_name", "]")) and SUS.search(v):
        out.append(f"value at {path}: {v[:80]!r}")


def main(out, work=None):
    out, found = Path(out), []
    for p in sorted(out.rglob("*")):
        if p.is_dir():
            continue
        text = p.read_text(encoding="utf-8", errors="replace")
        if p.suffix == ".yaml":
            TAGS.clear()
            for doc in yaml.load_all(text, Loader=L):
                walk(doc, p.name, found)
            found += [f"{p.name}: tag {t}" for t in TAGS if t != "function"]
            found += [f"{p.name}: !function {l.strip()[:80]}" for l in text.splitlines()
                      if "!function" in l and not l.lstrip().startswith("#") and "harness_ext_estimate.estimate" not in l]
        elif p.suffix == ".txt":
            found += [f"{p.name} line {l!r}"[:120] for l in text.splitlines() if SUS.search(l) or "," in l]
        elif p.suffix == ".conf":
            found += [f"{p.name} entry {l.strip()[:100]}" for l in text.splitlines()
                      if "description" in l and not l.lstrip().startswith("#") and SUS.search(l.split("description")[1])]
        elif p.name.endswith("samples.json") or p.name == "inspect_sample_ids.json":
            d = json.loads(text)
            found += [f"{p.name} key {k[:80]!r}" for k in d if SUS.search(k)]
    if work:
        extra = [str(p) for p in Path(work).iterdir() if p.name not in (out.name, "store.duckdb", "store.duckdb.wal", "in", "new") and not p.name.startswith(("ingest.", "reduce.", "predict."))]
        found += [f"outside --out: {e}" for e in extra]
    for e in ("/tmp/rt4_escaped", "/tmp/rt4_escaped.yaml"):
        if Path(e).exists():
            found.append(f"ESCAPED: {e}")
    files = sorted(p.name for p in out.rglob("*") if p.is_file())
    print(f"{out}: {len(files)} files {files}")
    for f in found:
        print("  FLAG", f.encode("unicode_escape").decode()[:160])


if __name__ == "__main__":
    main(*sys.argv[1:])

"""The HELM loop as a new user, on the shared HELM Classic leaderboard: reduce without one model, check the conf
against HELM's run-entry grammar, write the run directories helm-run would for it, predict, compare with the truth.

The shared data holds HELM Classic's leaderboard scores (Every Eval Ever records of ``core_scenarios.json``), not raw
runs of these models, so each run directory written here holds the held-out model's leaderboard score of the title
its entry belongs to (an MMLU subject the MMLU mean, so the subjects' mean is the leaderboard's): the runs' format is
simulated, the scores are the model's own. The conf is checked as ``helm-run`` reads it: HOCON holding only an
``entries`` list of ``{description, priority[, groups]}`` (crfm-helm ``presentation/run_entry.py``), each description
by ``common/object_spec.py``'s grammar (``name:key=value,...``: every piece has ``=``, no key twice, a ``model=``).

Usage: ``HARNESS_EXT_SHARED_DATA=../shared/data python benchmarks/helm_loop.py [--model meta/Llama-2-70B]
[--budget 4] [--helm-run PATH]`` (default: the strongest model by mean win rate, then a random one,
``random.Random(0)``). ``--helm-run``: crfm-helm's ``helm-run``, installed anywhere, also reads the conf and the
conf of every title's entries, and says how many entries it expanded into run specs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sys
import tempfile
from pathlib import Path

SHARED = Path(os.environ.get("HARNESS_EXT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
CLASSIC = SHARED / "every_eval_ever" / "data" / "helm_classic"


def _records() -> dict:
    """model id -> (record path, {title: score})."""
    out = {}
    for p in sorted(CLASSIC.rglob("*.json")):
        d = json.loads(p.read_text())
        out[d["model_info"]["id"]] = (p, {e["evaluation_name"]: e["score_details"]["score"]
                                          for e in d["evaluation_results"]})
    return out


def conf_problems(conf: Path) -> list:
    """Entries of ``conf`` that helm-run would not read as written (empty: every one parses)."""
    from pyhocon import ConfigFactory

    raw = ConfigFactory.parse_file(str(conf))
    bad = [f"top-level keys {sorted(raw)}"] if set(raw) != {"entries"} else []
    for e in raw.get("entries", []):
        desc = e.get("description")
        fields = set(e) <= {"description", "priority", "groups"} and isinstance(e.get("priority"), int)
        pieces = desc.partition(":")[2].split(",") if isinstance(desc, str) and ":" in desc else []
        keys = [p.split("=", 1)[0] for p in pieces]
        if not (fields and isinstance(desc, str) and desc.partition(":")[0] and all("=" in p for p in pieces)
                and len(keys) == len(set(keys)) and "model" in keys):
            bad.append(str(desc))
    return bad


def write_runs(conf: Path, scores: dict, model: str, out: Path) -> int:
    """The run directories helm-run writes for ``conf``'s entries, each holding ``model``'s score of its title."""
    from pyhocon import ConfigFactory

    from harness_ext.adapters.helm import MAIN_METRICS, parse_run_name
    from harness_ext.methods.reduction.harness_names import helm_description_list

    titles = {desc: t for t in scores for desc in helm_description_list({"name": t, "benchmark": "helm_classic"})}
    n = 0
    for entry in ConfigFactory.parse_file(str(conf))["entries"]:
        value = scores.get(titles.get(entry["description"]))
        if value is None or value < 0:  # the leaderboard's "No matching runs"
            continue
        name = entry["description"]
        for expander in ("model=full_functionality_text", "model=text"):
            name = name.replace(expander, f"model={model.replace('/', '_')}")
        run = parse_run_name(name)
        metric, split = MAIN_METRICS[run.group]
        folder = out / name
        folder.mkdir(parents=True)
        (folder / "run_spec.json").write_text(json.dumps({
            "name": name, "scenario_spec": {"class_name": run.scenario, "args": {}}, "groups": [run.group],
            "adapter_spec": {"method": "generation", "max_train_instances": 5, "max_eval_instances": 1000,
                             "model": model}}))
        (folder / "stats.json").write_text(json.dumps([{"name": {"name": metric, "split": split}, "count": 1,
                                                        "sum": value, "mean": value}]))
        n += 1
    return n


def helm_run_check(helm_run: str, conf: Path, tmp: Path) -> str:
    """What crfm-helm's own ``helm-run`` makes of ``conf``: how many entries it expanded into run specs. Run with
    ``--skip-instances`` and HELM's offline test model; a run that needs its scenario's data downloaded fails after
    its run spec was built, which is all this checks. When no run spec was built (one entry's run spec function
    needs the network: RAFT's downloads its prompt settings), each entry is tried alone, and those that fail are
    named with helm-run's last error line."""
    entries = conf_entries(conf)
    built, _ = _specs_built(helm_run, conf, tmp)
    failed = []
    if built == 0 and len(entries) > 1:
        for i, e in enumerate(entries):
            one = tmp / f"entry_{i}.conf"
            one.write_text(f'entries: [{{description: "{e["description"]}", priority: 1}}]\n')
            n, why = _specs_built(helm_run, one, tmp)
            built += n
            if not n:
                failed.append(f"{e['description']} ({why})")
    text = f"helm-run expanded {built} of the conf's {len(entries)} entries into run specs"
    return text + (f"; not expanded: {'; '.join(failed)}" if failed else "")


def _specs_built(helm_run: str, conf: Path, tmp: Path) -> tuple:
    """``(run specs helm-run started, its last error line)`` for ``conf``."""
    import re
    import subprocess

    out = subprocess.run([helm_run, "--conf-paths", str(conf), "--suite", "harness_ext_check", "--max-eval-instances",
                          "5", "--models-to-run", "simple/model1", "--skip-instances", "-o", str(tmp / "helm_out")],
                         capture_output=True, text=True, cwd=tmp)
    text = out.stdout + out.stderr
    errors = [line for line in text.splitlines() if re.match(r"^\w+(\.\w+)*(Error|Exception)\b", line)]
    return len(set(re.findall(r"INFO\s+Running (\S+) \{", text))), (errors[-1][:120] if errors else "")


def conf_entries(conf: Path) -> list:
    from pyhocon import ConfigFactory

    return list(ConfigFactory.parse_file(str(conf))["entries"])


def loop(model: str, budget: int, tmp: Path, records: dict, helm_run=None) -> None:
    from harness_ext.cli import main as cli

    db, red = tmp / "classic.duckdb", tmp / f"reduced-{model.replace('/', '_')}"
    if not db.exists():
        assert cli(["ingest", "--db", str(db), "-q", str(CLASSIC)]) == 0
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli(["reduce", "--db", str(db), "--benchmark", "helm_classic", "--budget", str(budget),
                    "--exclude-models", model, "--out", str(red), "--no-plot"]) == 0
    conf = next(red.glob("run_entries_*.conf"))
    if helm_run:
        print(f"{model}: {helm_run_check(helm_run, conf, tmp)}")
    _, scores = records[model]
    subset = [e["name"] for e in json.loads((red / "manifest.json").read_text())["subset"]]
    for label, confs in (("subset", conf), ("all titles", None)):
        if confs is None:  # every title's entries: the truth on the normalised scale where the model has them all
            from harness_ext.methods.reduction.harness_names import helm_description_list

            descs = [d for t in scores if t != "Mean win rate"
                     for d in helm_description_list({"name": t, "benchmark": "helm_classic"})]
            confs = tmp / "all.conf"
            confs.write_text("entries: [\n" + ",\n".join(f'  {{description: "{d}", priority: 1}}' for d in descs)
                             + "\n]\n")
            if helm_run:
                print(f"{model}, every title: {helm_run_check(helm_run, confs, tmp)}")
        runs = tmp / f"runs-{model.replace('/', '_')}-{label.replace(' ', '_')}"
        n = write_runs(confs, scores, model.lower(), runs)
        out = tmp / f"pred-{label.replace(' ', '_')}.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert cli(["predict", "--manifest", str(red), str(runs), "--json", str(out)]) == 0
        doc = json.loads(out.read_text())
        (a,) = doc["aggregate"]
        print(f"{model}, {label}: {confs.name}: {len(conf_problems(confs))} entries helm-run would not read; "
              f"{n} run directories; subset {subset}; normalised {a['aggregate']:.3f} [{a['lower']:.3f}, "
              f"{a['upper']:.3f}], actual {a['actual'] if a['actual'] is None else round(a['actual'], 3)}, "
              f"observed {a['n_observed']}, frontier {a['frontier']:.2f}")
    errs, inside = [], 0
    for d in doc["datasets"]:
        t = scores.get(d["dataset"])
        if d["observed"] or t is None or t < 0:
            continue
        errs.append(abs(d["raw"] - t))
        inside += d["raw_lower"] <= t <= d["raw_upper"]
        print(f"  {d['dataset']:30s} true {t:.3f}  predicted {d['raw']:.3f} [{d['raw_lower']:.3f}, {d['raw_upper']:.3f}]")
    if errs:
        print(f"  {len(errs)} predicted titles with a true score: mean |error| {sum(errs) / len(errs):.3f}, "
              f"{inside}/{len(errs)} inside 90%; HELM's mean win rate {scores.get('Mean win rate')} (not predicted)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="held-out model id (repeatable)")
    parser.add_argument("--budget", type=int, default=4)
    parser.add_argument("--helm-run", help="crfm-helm's helm-run executable: also check that it expands every entry "
                                           "of the conf into a run spec (--skip-instances, no model run)")
    args = parser.parse_args()
    if not CLASSIC.is_dir():
        print(f"no HELM Classic records at {CLASSIC}", file=sys.stderr)
        return 1
    os.environ.setdefault("HARNESS_EXT_NO_PROGRESS", "1")
    records = _records()
    models = args.model
    if not models:
        strongest = max(records, key=lambda m: records[m][1].get("Mean win rate") or -1)
        models = [strongest, random.Random(0).choice(sorted(m for m in records if m != strongest))]
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            loop(m, args.budget, Path(tmp), records, args.helm_run)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Hostile lm-eval group names and member lists: ingest, reduce --items --datasets/--benchmark GROUP, every file
written inspected.

    python benchmarks/screens/redteam43/groups.py ROOT [CASE ...]

Each case is the Open LLM Leaderboard runs of tests/test_item_group_weights.py (lm-eval 0.4.7's layout: groups
leaderboard_math_hard and leaderboard_musr without a score) with the MuSR group renamed or its member list edited.
Prints per case: ingest rc and notes, reduce rc, the files written (outside the folder: ESCAPE), YAML tags, whether
a hostile string reached a YAML or JSON file.
"""
import io, json, os, sys, contextlib, signal, shutil, traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from test_item_group_weights import MATH, MUSR, SCORES, _leaderboard_run  # noqa: E402
from harness_ext.cli import main  # noqa: E402
import yaml  # noqa: E402

M = list(MUSR)
CASES = {
    "function": ("!function evil.fn", None),
    "include_tag": ("!include /etc/passwd", None),
    "anchor": ("&a x", None),
    "include_key": ("include: /etc/passwd", None),
    "dotdot": ("../../rt43_escape", None),
    "slash": ("a/b", None),
    "newline": ("x\ny: 1\ninclude: /etc/passwd", None),
    "nul": ("x\x00y", None),
    "long299": ("g" * 299, None),
    "long5000": ("g" * 5000, None),
    "lookalike": ("leaderboard_mus\u0433", None),
    "rtl": ("evil\u202egpj.yaml", None),
    "real_task": ("leaderboard_math_algebra_hard", None),   # a group named as a task of the other group
    "shipped_group": ("mmlu", None),
    "reduced_name": ("harness_ext_reduced", None),
    "self_member": ("leaderboard_musr", M + ["leaderboard_musr"]),
    "other_bench": ("leaderboard_musr", M + ["leaderboard_math_algebra_hard"]),
    "glob_member": ("leaderboard_musr", ["leaderboard_*"]),
    "glob_member_q": ("leaderboard_musr", M[:2] + ["leaderboard_math_?lgebra_hard"]),
    "path_member": ("leaderboard_musr", M + ["../../etc/passwd", "!function x.y", "a\nb: 1"]),
    "huge": ("leaderboard_musr", M + [f"t{i}" for i in range(4_990)]),
    "huge_over": ("leaderboard_musr", M + [f"t{i}" for i in range(5_001)]),
    "deep": ("leaderboard_musr", "DEEP"),
    # The math group given its own score (a row), so its member list is kept in its dataset metadata.
    "scored_glob_member": ("leaderboard_math_hard", "SCORED", ["leaderboard_*"]),
    "scored_glob_q": ("leaderboard_math_hard", "SCORED", list(MATH)[:2] + ["leaderboard_musr_*"]),
    "scored_bracket": ("leaderboard_math_hard", "SCORED", list(MATH)[:2] + ["leaderboard_[m]*"]),
    "scored_function": ("!function evil.fn", "SCORED", None),
    "scored_newline": ("x\ninclude: /etc/passwd", "SCORED", None),
    "scored_self": ("leaderboard_math_hard", "SCORED", list(MATH) + ["leaderboard_math_hard"]),
    "scored_is_task": ("leaderboard_musr_murder_mysteries", "SCORED", None),
}


def build(root: Path, name: str, members, scored_members=None) -> list:
    files = []
    for model in SCORES:
        p = _leaderboard_run(root / "runs", model, math_group=(lambda v: 0.3) if members == "SCORED" else None)
        doc = json.loads(p.read_text())
        if members == "SCORED":
            subs = doc["group_subtasks"]
            old = subs.pop("leaderboard_math_hard")
            res = doc["results"].pop("leaderboard_math_hard")
            subs[name] = scored_members if scored_members is not None else old
            doc["results"][name] = dict(res, alias=name)
            p.write_text(json.dumps(doc))
            files.append(str(p))
            continue
        subs = doc["group_subtasks"]
        old = subs.pop("leaderboard_musr")
        res = doc["results"].pop("leaderboard_musr")
        if members == "DEEP":  # 20,000 nested groups, the innermost holding MuSR
            chain = [f"n{i}" for i in range(int(os.environ.get("RT43_DEPTH", 20_000)))]
            subs[name] = [chain[0]]
            for a, b in zip(chain, chain[1:]):
                subs[a] = [b]
            subs[chain[-1]] = old
        else:
            subs[name] = members if members is not None else old
        doc["results"][name] = dict(res, alias=name)
        p.write_text(json.dumps(doc))
        files.append(str(p))
    return files


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    signal.alarm(120)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    except SystemExit as e:
        rc = f"exit {e.code}"
    except BaseException:
        rc = "TRACEBACK " + traceback.format_exc().strip().splitlines()[-1]
    finally:
        signal.alarm(0)
    return rc, out.getvalue() + err.getvalue()


class Tags(yaml.SafeLoader):
    pass


def _tag(loader, suffix, node):
    Tags.seen.append(node.tag)
    return None


Tags.add_multi_constructor("!", _tag)
Tags.add_multi_constructor("tag:", lambda l, s, n: (Tags.seen.append(n.tag), None)[1] if not n.tag.startswith("tag:yaml.org,2002:") else None)


def inspect(out: Path, hostile: str, root: Path):
    seen = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and "runs" not in p.parts and p.suffix != ".duckdb" and not p.relative_to(root).parts[0].startswith("out"):
            seen.append(f"ESCAPE {p}")
    for p in sorted(out.rglob("*")) if out.exists() else ():
        if not p.is_file():
            continue
        text = p.read_text(errors="replace")
        if p.suffix == ".yaml":
            Tags.seen = []
            try:
                yaml.load(text.replace("!function", "!fn"), Loader=Tags)
            except yaml.YAMLError as e:
                seen.append(f"{p.name}: YAML ERROR {str(e).splitlines()[0]}")
            if any(t != "!fn" for t in Tags.seen):
                seen.append(f"{p.name}: tags {Tags.seen}")
            if "include:" in text:
                seen.append(f"{p.name}: has include:")
        if hostile and len(hostile) < 400 and hostile in text:
            seen.append(f"{p.name}: hostile name verbatim")
    return seen


def main_(root, names):
    root = Path(root)
    for case in names or CASES:
        name, members, *extra = CASES[case]
        d = root / case
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        files = build(d, name, members, *extra)
        db = d / "store.duckdb"
        rc, text = run(["ingest", "--db", str(db), *files])
        notes = [l.strip()[:200] for l in text.splitlines() if "group" in l.lower()][:3]
        print(f"== {case}: ingest {rc}; {notes}")
        q = name if members != "DEEP" else name
        for flag in ("--datasets", "--benchmark"):
            out = d / f"out{flag}"
            rc, text = run(["reduce", "--db", str(db), "--items", "10", "--out", str(out), "--no-plot", flag, q])
            lines = [l.strip()[:220] for l in text.splitlines() if l.strip()]
            key = [l for l in lines if "Groups named" in l or "rror" in l or "TRACE" in l or "match" in l][:3]
            m = out / "manifest.json"
            tasks = sorted(json.loads(m.read_text())["tasks"]) if m.exists() else None
            g = json.loads(m.read_text()).get("lm_eval_group") if m.exists() else None
            print(f"   {flag}: rc {rc}; n tasks {len(tasks) if tasks else tasks}; group {str(g)[:120]}; {key}")
            print("     files:", sorted(p.name for p in out.rglob('*') if p.is_file())[:12] if out.exists() else None)
            for s in inspect(out, name if isinstance(name, str) else "", d):
                print("     !", s[:200])


if __name__ == "__main__":
    main_(sys.argv[1], sys.argv[2:])

"""The Inspect AI item loop as a new user, run live: Inspect writes the logs, harness-ext reduces, Inspect runs the drawn
samples, harness-ext predicts, and the estimates are compared with the new models' full runs.

Needs ``pip install inspect-ai`` (Inspect runs here; nothing is downloaded). The models are Inspect's ``mockllm``
provider answering each sample right with probability ``logistic(ability - difficulty)`` (a fixed hash of the model,
the task and the sample decides), so the population has a known structure and the truth of every new model is its
own full run. Two tasks defined in a local file: ``arith`` (60 samples, whole-number ids) and ``words`` (40 samples,
text ids ``w-00`` ...). The population is 30 models of abilities -1.5 to 1.5; the new models are inside that range and
beyond its strongest (the frontier). Each new model's drawn samples are run twice: with ``inspect_ai.eval(...,
sample_id=...)``, and with Inspect's own command line, ``inspect eval words.py@words --sample-id IDS`` with IDS
joined from ``inspect_sample_ids.json`` as the user guide says (the command line is run in-process with mockllm's
token count turned off: it would download a tokenizer).

Usage: ``python benchmarks/inspect_loop.py [--models 30] [--items 15] [--new 8] [--keep DIR]``. Prints, per new model,
the benchmark estimate, its 90% interval and the full run's score, then the coverage and mean absolute error in
points, and whether the command line's logs gave the same estimates.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TASKS = '''
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate


@task
def arith():
    return Task(dataset=MemoryDataset([Sample(input=f"Q{i}: What is {i} + {2 * i + 3}?", target=str(3 * i + 3), id=i)
                                       for i in range(60)]), solver=generate(), scorer=match())


@task
def words():
    return Task(dataset=MemoryDataset([Sample(input=f"Q{i}: Spell item {i} backwards: ab{i}cd",
                                              target=f"dc{str(i)[::-1]}ba", id=f"w-{i:02d}") for i in range(40)]),
                solver=generate(), scorer=match())
'''

# Inspect's command line, in-process: mockllm answers by the rule of _answer for the model named in --model.
CLI = '''
import sys
sys.path.insert(0, {here!r})
from inspect_loop import patch_mockllm
patch_mockllm()
from inspect_ai._cli.main import main
sys.argv = ["inspect", *sys.argv[1:]]
main()
'''


def _u(*key) -> float:
    return int(hashlib.sha256(repr(key).encode()).hexdigest()[:8], 16) / 2 ** 32


def ability_of(name: str) -> float:
    """A model's ability, from its name ``m<ability>``."""
    return float(name.split("/")[-1][1:])


def _answer(name: str, text: str) -> str:
    i = int(re.match(r"Q(\d+):", text).group(1))
    task = "arith" if "What is" in text else "words"
    difficulty = 4 * _u("difficulty", task, i) - 2
    right = _u(name, task, i) < 1 / (1 + math.exp(-(ability_of(name) - difficulty)))
    if task == "arith":
        a, b = re.findall(r"(\d+) \+ (\d+)", text)[0]
        return str(int(a) + int(b)) if right else "no idea"
    digits = re.findall(r"ab(\d+)cd", text)[0]
    return f"dc{digits[::-1]}ba" if right else "unsure"


def patch_mockllm() -> None:
    """mockllm answers by :func:`_answer` for its model name, with a token count (no tokenizer download)."""
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.model._providers.mockllm import MockLLM

    async def generate(self, input, tools, tool_choice, config):
        out = ModelOutput.from_content(model=self.model_name, content=_answer(self.model_name, input[-1].text))
        out.usage = ModelUsage(input_tokens=12, output_tokens=2, total_tokens=14)
        return out

    MockLLM.generate = generate


def _run(name: str, log_dir: Path, sample_ids=None) -> None:
    from inspect_ai import eval as inspect_eval
    from loop_tasks import arith, words  # main() puts the work folder on the path

    tasks = {"arith": arith, "words": words}
    for t, make in tasks.items():
        ids = None if sample_ids is None else sample_ids[t]
        logs = inspect_eval(make(), model=f"mockllm/{name}", log_dir=str(log_dir), display="none", sample_id=ids)
        assert all(lg.status == "success" for lg in logs), [lg.error for lg in logs]


def _hx(*args) -> str:
    out = subprocess.run([sys.executable, "-m", "harness_ext", *map(str, args)], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"harness-ext {' '.join(map(str, args))} failed:\n{out.stderr}")
    return out.stdout + out.stderr


def _truth(folder: Path, log_dir: Path) -> float:
    """The full run's benchmark score: the tasks' mean accuracy (uniform over tasks, as the manifest weighs them)."""
    db = folder / f"truth_{log_dir.name}.duckdb"
    _hx("ingest", "-q", "--db", db, log_dir)
    csv = _hx("matrix", "--db", db, "--normalise", "none")
    row = [line for line in csv.splitlines() if line.startswith("mockllm/")][0].split(",")
    return sum(map(float, row[1:])) / (len(row) - 1)


def _estimate(folder: Path, reduced: Path, logs: Path) -> dict:
    out = folder / f"pred_{logs.name}.json"
    _hx("predict", "-m", reduced, logs, "--json", out)
    [agg] = json.loads(out.read_text())["aggregate"]
    return agg


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=int, default=30)
    p.add_argument("--items", type=int, default=15)
    p.add_argument("--new", type=int, default=8, help="new models: half inside the population's range, half beyond")
    p.add_argument("--keep", type=Path, help="work in this folder and keep it")
    a = p.parse_args(argv)
    if importlib.util.find_spec("inspect_ai") is None:
        print("inspect-ai is not installed: pip install inspect-ai", file=sys.stderr)
        return 2
    patch_mockllm()
    with tempfile.TemporaryDirectory() as tmp:
        folder = a.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "loop_tasks.py").write_text(TASKS)
        sys.path.insert(0, str(folder))
        (folder / "cli.py").write_text(CLI.format(here=str(Path(__file__).resolve().parent)))
        for m in range(a.models):
            _run(f"m{-1.5 + 3 * m / (a.models - 1):.3f}", folder / "pop")
        db, reduced = folder / "store.duckdb", folder / "reduced"
        print(_hx("ingest", "--db", db, folder / "pop").strip().splitlines()[-1])
        _hx("reduce", "--db", db, "--benchmark", "inspect", "--items", a.items, "--out", reduced, "--no-plot")
        ids = json.loads((reduced / "inspect_sample_ids.json").read_text())
        half = a.new // 2
        abilities = [-1.2 + 2.4 * k / max(half - 1, 1) for k in range(half)] + [1.8 + k * 0.4 for k in range(a.new - half)]
        rows = []
        for ab in abilities:
            name = f"m{ab:.3f}"
            sub, full, cli = (folder / f"{kind}_{name}" for kind in ("sub", "full", "cli"))
            _run(name, sub, ids)
            _run(name, full)
            for t in ids:  # Inspect's command line, the ids joined with commas as the guide says
                subprocess.run([sys.executable, str(folder / "cli.py"), "eval", f"{folder / 'loop_tasks.py'}@{t}",
                                "--model", f"mockllm/{name}", "--log-dir", str(cli), "--display", "none",
                                "--sample-id", ",".join(map(str, ids[t]))], check=True, cwd=folder,
                               capture_output=True)
            est, by_cli, truth = _estimate(folder, reduced, sub), _estimate(folder, reduced, cli), _truth(folder, full)
            rows.append((name, ab > 1.5, est, by_cli, truth))
    print(f"{'model':>10} {'where':>8} {'estimate':>9} {'lower':>7} {'upper':>7} {'truth':>7} covered  cli same")
    for name, beyond, e, c, t in rows:
        print(f"{name:>10} {'frontier' if beyond else 'inside':>8} {e['aggregate']:9.3f} {e['lower']:7.3f} "
              f"{e['upper']:7.3f} {t:7.3f} {str(e['lower'] <= t <= e['upper']):>7}  {c['aggregate'] == e['aggregate']}")
    for label, sel in (("inside", False), ("frontier", True)):
        got = [(e, t) for _, b, e, _, t in rows if b == sel]
        if got:
            cover = sum(e["lower"] <= t <= e["upper"] for e, t in got) / len(got)
            mae = 100 * sum(abs(e["aggregate"] - t) for e, t in got) / len(got)
            print(f"{label}: {len(got)} models, 90% coverage {cover:.2f}, mean |error| {mae:.1f} points")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

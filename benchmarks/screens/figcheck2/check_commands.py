"""Check every command the user-facing pages quote: the script or subcommand exists and takes each quoted option.

Usage: python benchmarks/screens/figcheck2/check_commands.py
Reads the five pages' inline code and code blocks, finds `python benchmarks/... .py`, `python tests/... .py` and
`harness-ext SUB` invocations, runs each one's `--help` once, and prints every quoted `--option` that help lacks.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGES = ["README.md", "docs/quality.md", "docs/frontier.md", "docs/guide/items.md",
         "docs/guide/reduce-predict.md"]
CMD = re.compile(r"(python (?:benchmarks|tests)/[\w/]+\.py|harness-ext (?:ingest|info|matrix|models|plugins|stalk|prowl|compare|pounce|weights|reduce|predict)\b)((?:[^`\n&|;)]|\\\n)*)")
HELP = {}


def helptext(cmd):
    if cmd not in HELP and cmd.startswith("python") and "argparse" not in (ROOT / cmd.split()[1]).read_text():
        # A script without argparse would run, not print help: its options are read from its source instead.
        HELP[cmd] = (ROOT / cmd.split()[1]).read_text()
    if cmd not in HELP:
        argv = ([sys.executable] + cmd.split()[1:]) if cmd.startswith("python") else \
            [str(Path(sys.executable).with_name("harness-ext")), *cmd.split()[1:]]
        p = subprocess.run(argv + ["--help"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        HELP[cmd] = p.stdout + p.stderr if p.returncode == 0 else None
    return HELP[cmd]


def main():
    bad = 0
    for page in PAGES:
        text = (ROOT / page).read_text()
        for m in CMD.finditer(text):
            cmd, rest = m.group(1), m.group(2)
            line = text[:m.start()].count("\n") + 1
            h = helptext(cmd)
            if h is None:
                print(f"{page}:{line}: {cmd}: --help failed"); bad += 1; continue
            for opt in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", rest):
                if not re.search(re.escape(opt) + r"(?![\w-])", h):
                    print(f"{page}:{line}: {cmd} {opt}: not in --help"); bad += 1
    print(f"{len(HELP)} commands checked, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

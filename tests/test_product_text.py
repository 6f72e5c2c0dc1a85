"""Product text cites papers, never the project's own bookkeeping.

Docstrings, comments, help text and messages in the package, the plugins and the adapters, and the user
documentation (docs/, README.md, README_PLUGINS.md), and the benchmark scripts users run from the README, name a paper by its authors (and year, section,
equation) or just say why; issue numbers, the numbers of the seed papers' files ("003 §3.3", "(000)"),
measurement-run letters and commit hashes mean nothing to a user and go in benchmarks/HISTORY.md or
CHANGELOG.md, which this test does not read.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = [ROOT / "harness_ext", ROOT / "plugins", ROOT / "adapters", ROOT / "docs", ROOT / "README.md",
           ROOT / "README_PLUGINS.md"]
SUFFIXES = {".py", ".md", ".rst", ".txt", ".yaml", ".yml", ".toml", ".cfg"}
#: The benchmark scripts' help and output are read by users too; benchmarks/HISTORY.md is the record, not scanned.
SCRIPTS = ROOT / "benchmarks"

PATTERNS = {
    "an issue number": re.compile(r"\bissues? #?\d", re.I),
    "a seed file's number in parentheses": re.compile(r"(?<![\w.])\(\d{3}\)"),
    "a seed file's number as a citation": re.compile(
        r"(?<![\w.,/-])00\d(?:'s)?\s+(?:§|Fig|Figure|Table|eq\b|baseline|protocol|uses|calls|does)"),
    "a path into the seed papers": re.compile(r"seeds/\d{3}"),
    "a measurement run's letter": re.compile(r"\bruns? [A-Z]'?(?=[,;)]|\s+and\s+[A-Z]\b)"),
    "a commit hash": re.compile(r"(?<![\w./-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,12}(?![\w/-])"),
}

#: Genuine false positives: (path relative to the repository, the exact text matched), each with why.
ALLOWED: set = set()


def _files():
    yield from sorted(SCRIPTS.glob("*.py"))
    for base in SCANNED:
        paths = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for path in paths:
            if path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                yield path


def findings():
    out = []
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for what, pattern in PATTERNS.items():
                for m in pattern.finditer(line):
                    if (rel, m.group(0)) not in ALLOWED:
                        out.append(f"{rel}:{n}: {what} ({m.group(0)!r}): {line.strip()[:120]}")
    return out


def test_product_text_cites_papers_not_bookkeeping():
    found = findings()
    assert not found, ("product text cites the project's bookkeeping; name the paper (authors, year, section, "
                       "equation) or say why, and keep the record in benchmarks/HISTORY.md:\n" + "\n".join(found))


@pytest.mark.parametrize("text", ["see issue 14 items 1, 5, 7", "Issue #19", "SimBA (000) §2", "(003 §3.3-2i)",
                                  "as 004's Table 11", "../shared/seeds/004_x", "README, runs P, P', K and X",
                                  "fixed in 3f74b1d"])
def test_patterns_catch_the_bookkeeping(text):
    assert any(p.search(text) for p in PATTERNS.values()), text


@pytest.mark.parametrize("text", ["range(256)", "2,000 x 100", "0.004 / 0.006", "sha256", "exactly 003",
                                  "Zhao et al. §4.2", "the run A model", "deadbeef", "run_entries"])
def test_patterns_spare_ordinary_text(text):
    assert not any(p.search(text) for p in PATTERNS.values()), text

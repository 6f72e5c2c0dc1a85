"""Trace every decimal figure of the user-facing pages to the newest HISTORY.md section quoting it.

Usage: python benchmarks/screens/figcheck2/trace.py > benchmarks/screens/figcheck2/trace.tsv
Prints file, line, figure, the newest section (HISTORY is newest first) whose text holds the figure
as a token, and how many sections hold it. A match is a lead for the manual audit, not a proof.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PAGES = ["README.md", "docs/quality.md", "docs/frontier.md", "docs/guide/items.md",
         "docs/guide/reduce-predict.md"]
NUM = re.compile(r"(?<![\w.])[-+]?\d[\d,]*\.\d+x?|(?<![\w.])\d+(?:\.\d+)?%")


def sections():
    out, title, buf = [], None, []
    for line in (ROOT / "benchmarks/HISTORY.md").read_text().splitlines():
        if line.startswith("## "):
            if title:
                out.append((title, "\n".join(buf)))
            title, buf = line[3:], []
        else:
            buf.append(line)
    out.append((title, "\n".join(buf)))
    return out


def main():
    secs = sections()
    for page in PAGES:
        in_code = False
        for no, line in enumerate((ROOT / page).read_text().splitlines(), 1):
            if line.startswith("```"):
                in_code = not in_code
            for fig in NUM.findall(line):
                pat = re.compile(r"(?<![\w.])" + re.escape(fig.rstrip("x")) + r"(?![\d])")
                hits = [t for t, body in secs if pat.search(body)]
                src = hits[0][:110] if hits else "NO SOURCE FOUND"
                print(f"{page}\t{no}\t{fig}\t{len(hits)}\t{src}")


if __name__ == "__main__":
    sys.exit(main())

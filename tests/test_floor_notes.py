"""The analyses say how many scores the chance correction floored; ``matrix`` says it once; ``reduce`` not at all.

``matrix`` and the analyses (``stalk``, ``prowl``, ``weights``, ``compare``, ``pounce``) read the chance-normalised
matrix, in which a score below chance is floored at 0; ``reduce`` and ``predict`` fit those scores as they are. Real
data: the bundled Pythia-70M runs (lm-eval v0.3 results, Apache-2.0), about half of whose MMLU cells lie below chance.
"""

from __future__ import annotations

import pytest

from harness_ext.cli import main

SUBJECTS = [a for s in ("abstract_algebra", "anatomy", "astronomy", "virology", "marketing", "nutrition", "econometrics",
                      "sociology") for a in ("--datasets", s)]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from harness_ext.store.ingest import bundled_data_path

    db = tmp_path_factory.mktemp("floor") / "s.duckdb"
    for run in ("pythia-70m", "pythia-70m-deduped", "pythia-160m"):
        assert main(["ingest", "-q", "--db", str(db), str(bundled_data_path() / run)]) == 0
    return db


def _said(capsys, argv):
    assert main(argv) == 0
    out = capsys.readouterr()
    return (out.out + out.err).count("scores clipped by the chance correction"), out.out + out.err


def test_an_analysis_says_how_many_scores_it_reads_at_chance(store, capsys, tmp_path):
    n, text = _said(capsys, ["stalk", "--db", str(store), "--benchmark", "mmlu", *SUBJECTS, "--out",
                             str(tmp_path / "out")])
    assert n == 1 and "below chance analysed as 0 (reduce and predict fit them as they are" in text


def test_matrix_says_it_once_and_reduce_not_at_all(store, capsys, tmp_path):
    n, text = _said(capsys, ["matrix", "--db", str(store), "--benchmark", "mmlu", *SUBJECTS])
    assert n == 1 and "below chance shown as 0 (--normalise none shows the raw scores)" in text
    n, _ = _said(capsys, ["reduce", "--db", str(store), "--benchmark", "mmlu", *SUBJECTS, "--budget", "2",
                          "--n-random-subsets", "20", "--out", str(tmp_path / "r"), "--no-plot", "-q"])
    assert n == 0
    n, _ = _said(capsys, ["matrix", "--db", str(store), "--benchmark", "mmlu", *SUBJECTS,
                          "--normalise", "none"])
    assert n == 0

"""The manifest of one small reduction of the bundled data, pinned to its bytes.

``tests/test_manifest_predict.py`` checks that running ``reduce`` twice gives the same files; this test
checks that a code change (a refactor, a faster implementation) gives the same manifest as before it, byte
for byte, on a fresh clone (bundled data only).

When a change is *meant* to change the manifest (a new field, another default, a fixed bug), update the pin:
run ``python tests/test_manifest_pinned.py``, which prints the new hash and the releases of the numerical
libraries it ran under, check with ``git diff`` of the manifest it writes to ``manifest_pinned.json`` (in the
current folder) that only the intended part changed, and replace :data:`PINNED` and :data:`PINNED_UNDER` (say why
in the commit message). The tool's version is left out of the hash, so a release does not change it.

The bytes are only promised under the releases the hash was checked under (:data:`PINNED_UNDER`): another
numpy, scipy, pandas, scikit-learn or duckdb may round a sum or a solve differently in its last digits, and a
choice the reduction makes between near-equal options (a blend weight of the frontier folds) can follow that
rounding. Under other releases the test skips and says which differ; that the same inputs and seed give the same
manifest wherever it runs is ``tests/test_manifest_predict.py``'s check.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

#: sha256 of the manifest.json ``reduce`` writes for :func:`pinned_manifest` (the tool version masked).
PINNED = "c4f9dbe9570bc5426fc23ca4649ff7d896adade4377ac3d514a24a516a6cdf7c"
#: The numerical libraries' releases :data:`PINNED` was checked under (each gave the same bytes).
PINNED_UNDER = (
    {"numpy": "2.4.6", "scipy": "1.17.1", "pandas": "3.1.1", "scikit-learn": "1.9.1", "duckdb": "2.0.1"},
    {"numpy": "2.4.6", "scipy": "1.17.1", "pandas": "2.3.3", "scikit-learn": "1.9.1", "duckdb": "2.0.1"},
    {"numpy": "2.3.5", "scipy": "1.17.1", "pandas": "3.1.1", "scikit-learn": "1.9.1", "duckdb": "2.0.1"},
    {"numpy": "2.3.5", "scipy": "1.17.1", "pandas": "2.3.3", "scikit-learn": "1.9.1", "duckdb": "2.0.1"},
)
#: The distributions whose release can change a reduction's last digits.
NUMERICAL_LIBRARIES = ("numpy", "scipy", "pandas", "scikit-learn", "duckdb")


def releases() -> dict:
    """The installed release of each of :data:`NUMERICAL_LIBRARIES`."""
    from importlib.metadata import version

    return {name: version(name) for name in NUMERICAL_LIBRARIES}


def pinned_manifest(out: Path) -> tuple:
    """``(sha256, bytes)`` of the manifest of the bundled Pythia 160M runs' lm-eval tasks (30 checkpoints x 8
    tasks), 3 datasets chosen with the default selector and predictor, seed 0, written by the json writer."""
    import harness_ext
    from harness_ext.methods.reduction.manifest import build_manifest, write_outputs
    from harness_ext.store.db import Store
    from harness_ext.store.ingest import bundled_data_path, ingest_paths
    from harness_ext.store.matrix import MatrixQuery, load_matrix

    with Store.open(":memory:") as store:
        ingest_paths(store, sorted(bundled_data_path().glob("pythia-160m*")), show_progress=False)
        df = load_matrix(store, MatrixQuery(benchmarks=("lm_eval",), models="*-160m*"))
    assert df.shape == (30, 8)
    manifest = build_manifest(df, budget="3", n_random=20, n_random_subsets=10, random_state=0, group_name="pinned")
    [path] = write_outputs(manifest, out, ["json"])
    data = path.read_bytes().replace(f'"version": "{harness_ext.__version__}"'.encode(), b'"version": "@VERSION@"')
    return hashlib.sha256(data).hexdigest(), data


def test_manifest_bytes_are_pinned(tmp_path):
    here = releases()
    if here not in PINNED_UNDER:
        nearest = min(PINNED_UNDER, key=lambda env: sum(env[k] != here[k] for k in NUMERICAL_LIBRARIES))
        differ = ", ".join(f"{k} {here[k]} (pinned under {nearest[k]})" for k in NUMERICAL_LIBRARIES
                           if here[k] != nearest[k])
        pytest.skip(f"the manifest's bytes were pinned under other releases of the numerical libraries: {differ}; "
                    "they may round differently. Re-pin under these releases (this file's docstring says how) to "
                    "check the bytes here.")
    digest, data = pinned_manifest(tmp_path)
    if digest != PINNED:
        pytest.fail(f"the manifest of the pinned reduction changed (sha256 {digest}, pinned {PINNED}). If the change "
                    "is intended, update PINNED as this file's docstring says; if not, the change altered what "
                    "reduce records for the same inputs and seed.")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        digest, data = pinned_manifest(Path(tmp))
    Path("manifest_pinned.json").write_bytes(data)
    print(digest)
    print(releases())

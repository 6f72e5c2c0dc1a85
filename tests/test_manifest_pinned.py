"""The manifest of one small reduction of the bundled data, pinned to its bytes.

``tests/test_manifest_predict.py`` checks that running ``reduce`` twice gives the same files; this test
checks that a code change (a refactor, a faster implementation) gives the same manifest as before it, byte
for byte, on a fresh clone (bundled data only).

When a change is *meant* to change the manifest (a new field, another default, a fixed bug), update the pin:
run ``python tests/test_manifest_pinned.py``, which prints the new hash, check with ``git diff`` of the manifest
it writes to ``manifest_pinned.json`` (in the current folder) that only the intended part changed, and replace
:data:`PINNED` (say why in the commit message). The tool's version is left out of the hash, so a release
does not change it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

#: sha256 of the manifest.json ``reduce`` writes for :func:`pinned_manifest` (the tool version masked).
PINNED = "64c6a7b6a6f5c143293709705bc8586d4d3790e09f6e62a1fc783285c9f96580"


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

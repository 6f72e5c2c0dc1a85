"""Check test_manifest_pinned: a skip naming the releases that differ, a failure on a changed hash under the pinned ones."""
import sys, importlib.util, pytest
spec = importlib.util.spec_from_file_location("pin", __import__("pathlib").Path(__file__).resolve().parents[3] / "tests" / "test_manifest_pinned.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
m.releases = lambda: {**m.PINNED_UNDER[0], "numpy": "2.5.0", "duckdb": "2.1.0"}
try:
    m.test_manifest_bytes_are_pinned(None)
except pytest.skip.Exception as e:
    print("SKIP:", e)
# a code change under the pinned releases still fails
m.releases = lambda: dict(m.PINNED_UNDER[0])
m.PINNED = "0" * 64
import pathlib, tempfile
try:
    m.test_manifest_bytes_are_pinned(pathlib.Path(tempfile.mkdtemp()))
except pytest.fail.Exception as e:
    print("FAIL:", str(e)[:120])

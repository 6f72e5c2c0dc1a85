"""Hostile prediction.completion_settings records, fed to validate_manifest and predict_from_manifest (the small
manifest of tests/test_completion_reuse.py): python benchmarks/screens/redteam43/settings.py"""
import copy, signal, sys, time, traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
import test_completion_reuse as T  # noqa: E402
from harness_ext.errors import HarnessExtError  # noqa: E402
from harness_ext.methods.reduction.manifest import validate_manifest  # noqa: E402
from harness_ext.methods.reduction.predict import predict_from_manifest  # noqa: E402


class _TP:
    def mktemp(self, n):
        import tempfile
        return Path(tempfile.mkdtemp())


EDITS = {
    "record a list": lambda m: m["prediction"].update(completion_settings=[1, 2]),
    "record a string": lambda m: m["prediction"].update(completion_settings="../../etc/passwd"),
    "record 0": lambda m: m["prediction"].update(completion_settings=0),
    "digest a list": lambda m: m["prediction"]["completion_settings"].update(digest=["x"]),
    "info a list": lambda m: m["prediction"]["completion_settings"].update(info=[1]),
    "lam negative (rank_cv)": lambda m: m["prediction"]["completion_settings"]["rank_cv"].update(lam=-1e300)
    if m["prediction"]["completion_settings"].get("rank_cv") else None,
    "lam 1e308 (ensemble)": lambda m: m["prediction"]["completion_settings"]["info"].update(
        ensemble={"lam": 1e308, "ranks": [1, 2]}),
    "lam negative (ensemble)": lambda m: m["prediction"]["completion_settings"]["info"].update(
        ensemble={"lam": -5.0, "ranks": [1, 2]}),
    "ensemble of 200,000 ranks": lambda m: m["prediction"]["completion_settings"]["info"].update(
        ensemble={"lam": 1.0, "ranks": [1] * 200_000}),
    "cv_mse 10^6 rows": lambda m: m["prediction"]["completion_settings"].update(
        rank_cv={"rank": 1, "lam": 1.0, "n_folds": 5, "cv_mse": [[1, 1.0, 0.1]] * 1_000_000}),
    "n_folds -3": lambda m: m["prediction"]["completion_settings"].update(
        rank_cv={"rank": 1, "lam": 1.0, "n_folds": -3, "cv_mse": []}),
    "cell_blend NaN": lambda m: m["prediction"]["completion_settings"]["info"].update(cell_blend=float("nan")),
    "cell_blend True": lambda m: m["prediction"]["completion_settings"]["info"].update(cell_blend=True),
    "prediction a list": lambda m: m.update(prediction=[1]),
    "params a list": lambda m: m["prediction"]["predictor"].update(params=[1]),
}


def main():
    manifest, new = T.small.__wrapped__(_TP())
    print("record:", {k: (v if k != "rank_cv" else "...") for k, v in manifest["prediction"]["completion_settings"].items() if k != "description"})
    for name, edit in EDITS.items():
        m = copy.deepcopy(manifest)
        edit(m)
        t = time.time()
        signal.alarm(120)
        try:
            try:
                validate_manifest(m)
                v = "valid"
            except HarnessExtError as e:
                v = f"refused: {str(e)[:120]}"
            pred = predict_from_manifest(m, [new])
            said = [w[:150] for w in pred.warnings if "completion_settings" in w]
            out = f"ran; {said}"
        except HarnessExtError as e:
            out = f"HarnessExtError: {str(e)[:150]}"
        except BaseException as e:
            out = f"TRACEBACK {type(e).__name__}: {str(e)[:150]} @ {traceback.extract_tb(e.__traceback__)[-1].name}"
        finally:
            signal.alarm(0)
        print(f"{name}: validate {v}; predict {out} ({time.time() - t:.1f} s)")


if __name__ == "__main__":
    main()

"""Diagnosis: the error the 2PL itself expects for O1 (``oracle.py``), against the error O1 makes.

For the 2PL fitted on every model's full answers (the targets included; ranks ``--ranks``), each target's p-IRT
estimate from every task's sample has a model-based standard deviation (``item_irt.pirt_estimates``: the
unsampled items' Bernoulli variance at its ability plus the delta-method variance of the ability from its
sampled answers). If the model were true, the mean |error| would be sqrt(2 / pi) times it: the floor of an
estimator that knows the item parameters, ability uncertainty included. Printed per table with O1's actual mean
|error| on the same draws and the Bernoulli part alone at the ability from all the target's answers (O3), each
over the best baseline's mean |error| read from ``oracle.py``'s ``--dump`` files of the same seeds.

    export HARNESS_EXT_SHARED_DATA=/work/shared/data
    D=benchmarks/screens/interpbound
    nice -n 10 python $D/floor.py --load $D/helm_seeds0-19.json $D/ollb_a_seeds0-19.json $D/ollb_b_seeds0-19.json
"""
import argparse
import json
import os
import sys
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle  # noqa: E402

q = oracle.q


def one_table(t: str, ranks, seeds) -> dict:
    """label -> per-seed means (points) of O1's |error|, its model-based expected |error| and the Bernoulli floor."""
    scores, models, others, strength = q.load_task(t)
    X = np.hstack([scores, *others])
    widths = [scores.shape[1]] + [o.shape[1] for o in others]
    n_task, acc = widths[0], {}
    for r in ranks:
        irt = oracle.fit_2pl(X, dims=r, max_iter=100)
        A, b, _ = irt
        for seed in seeds:
            d = q.draw(scores, "interpolation", 50, seed, others, 1.0, strength)
            _, every = oracle.columns(d, widths)
            _, pirt, _, sd, _ = oracle.pirt_estimates(X[d["targets"]][:, every], every, A, b, task=np.arange(n_task))
            bern = oracle.floor(irt, d["targets"], d["items"], n_task)["O3_floor_abs"]
            rows = {f"O1_2pl{r}_all actual": np.abs(pirt - d["truth"]) * 100,
                    f"O1_2pl{r}_all expected by the model": np.sqrt(2 / np.pi) * sd * 100,
                    f"O3_floor_abs at rank {r}": bern * 100}
            for k, v in rows.items():
                acc.setdefault(k, []).append(float(np.mean(v)))
    return acc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--load", nargs="+", type=Path, required=True, help="oracle.py --dump files (the baselines)")
    ap.add_argument("--ranks", nargs="*", type=int, default=[4, 16])
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args(argv)
    dumps = {}
    for path in args.load:
        for t, acc in json.loads(path.read_text()).items():
            for k, v in acc.items():
                dumps.setdefault(t, {}).setdefault(k, []).extend(v)
    print("table | label | mean |err| (pts) | / best baseline")
    avg = {}
    for t, base_acc in dumps.items():
        base = min(np.mean(base_acc[k][: args.seeds]) for k in q.BASELINES)
        for k, v in one_table(t, args.ranks, range(args.seeds)).items():
            avg.setdefault(k, []).append(np.mean(v) / base)
            print(f"{t} | {k} | {np.mean(v):.3f} | {np.mean(v) / base:.3f}", flush=True)
    print("\naverage over tables: label | mean ratio to the best baseline | per table")
    for k, v in avg.items():
        print(f"{k} | {np.mean(v):.3f} | " + " ".join(f"{x:.3f}" for x in v))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Offline variants of ``crosstask``'s interval on the parts ``dump.py`` saved: coverage and width per table/protocol.

    python benchmarks/screens/smallcov/variants.py DUMP.pkl            # main replayed, the conservative conformal rank
    python benchmarks/screens/smallcov/variants.py --factors DUMP.pkl  # the whole-interval (Mondrian) factors
    python benchmarks/screens/smallcov/variants.py --combo DUMP.pkl    # the carried-group factor with the conservative rank

Dumps written before ``dump.py`` recorded only a fit's first calibration hold, for tables whose task-alone refit
(``own_``) runs (Open LLM v2 here), that refit's calibration: their replays are not main's.
"""
import pickle
import sys

import numpy as np

sys.path.insert(0, ".")
from harness_ext.methods.engine.conformal import conformal_quantile  # noqa: E402
from harness_ext.methods.engine import item_composite  # noqa: E402

Z = 1.6448536269514722


def k_of(cal, conservative=False, share=item_composite.MIN_SCALED_SHARE, min_models=item_composite.MIN_SCALE_MODELS):
    if not cal:
        return 1.0
    A, B, C = cal["A"], cal["B"], cal["C"]
    total = A + np.abs(B) + C
    keep = A >= share * np.where(total > 0, total, np.inf)
    if keep.sum() < min_models:
        return 1.0
    A, B, C = A[keep], B[keep], C[keep] - (cal["resid"][keep] / Z) ** 2
    disc = np.maximum(B * B - 4 * A * C, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(A > 0, (-B + np.sqrt(disc)) / (2 * A), np.where(B > 0, -C / B, np.inf))
    k = np.where(C >= 0, 0.0, np.minimum(root, 1e3))
    return float(conformal_quantile(k, 0.9, conservative=conservative))


def evaluate(r, variant):
    k = variant.get("k", lambda r: r["k"])(r)
    A, B, C = r["A"], r["B"], r["C"]
    C = variant.get("fixed", lambda r, C: C)(r, C)
    h = Z * np.sqrt(np.maximum(k * k * A + k * B + C, 0))
    lo, hi = r["centre"] - h, r["centre"] + h
    # targets beyond the sources on the other tasks keep main's widened interval
    lo = np.where(r["beyond"], np.minimum(lo, r["lower"]), lo)
    hi = np.where(r["beyond"], np.maximum(hi, r["upper"]), hi)
    t = r["truth"]
    return (lo <= t) & (t <= hi), hi - lo


VARIANTS = {
    "main(replay)": {},
    "conservative": {"k": lambda r: k_of(r["cal"], conservative=True)},
}


def main():
    data = pickle.loads(open(sys.argv[1], "rb").read())
    names = sys.argv[2:] or list(VARIANTS)
    for key, rows in data.items():
        stored = np.concatenate([(r["lower"] <= r["truth"]) & (r["truth"] <= r["upper"]) for r in rows])
        wid0 = np.median(np.concatenate([r["upper"] - r["lower"] for r in rows]))
        line = [f"{key[0]} {key[1][:6]}: stored {stored.mean():.3f} ({wid0 * 100:.2f})"]
        for n in names:
            cw = [evaluate(r, VARIANTS[n]) for r in rows]
            c = np.concatenate([x[0] for x in cw])
            w = np.median(np.concatenate([x[1] for x in cw]))
            line.append(f"{n} {c.mean():.3f} ({w * 100:.2f})")
        print(" | ".join(line))



def _total_sd(k, A, B, C):
    return np.sqrt(np.maximum(k * k * A + k * B + C, 1e-300))


def group_factor(r, split=0.5, min_n=10, groups=("low",), conservative=False):
    """Per-target factor on the whole interval: Mondrian split-conformal by the regression's weight."""
    c, k = r["cal"], r["k"]
    f = np.ones(len(r["w"]))
    if not c:
        return f
    s = np.abs(c["resid"]) / _total_sd(k, c["A"], c["B"], c["C"])
    for g in groups:
        cm = c["w"] < split if g == "low" else c["w"] >= split
        tm = r["w"] < split if g == "low" else r["w"] >= split
        if g == "all":
            cm, tm = np.ones_like(c["w"], bool), np.ones_like(r["w"], bool)
        if cm.sum() >= min_n:
            f[tm] = conformal_quantile(s[cm], 0.9, conservative=conservative) / Z
    return f


def evaluate_f(r, fn):
    f = fn(r)
    h = f * Z * _total_sd(r["k"], r["A"], r["B"], r["C"])
    lo, hi = r["centre"] - h, r["centre"] + h
    lo = np.where(r["beyond"], np.minimum(lo, r["lower"]), lo)
    hi = np.where(r["beyond"], np.maximum(hi, r["upper"]), hi)
    t = r["truth"]
    return (lo <= t) & (t <= hi), hi - lo


FVARIANTS = {
    "mond_low10": lambda r: group_factor(r),
    "mond_low10_up": lambda r: np.maximum(group_factor(r), 1.0),
    "mond_low20": lambda r: group_factor(r, min_n=20),
    "mond_both10": lambda r: group_factor(r, groups=("low", "high")),
    "all": lambda r: group_factor(r, groups=("all",)),
    "all_up": lambda r: np.maximum(group_factor(r, groups=("all",)), 1.0),
}


def main_f():
    data = pickle.loads(open(sys.argv[-1], "rb").read())
    for key, rows in data.items():
        stored = np.concatenate([(r["lower"] <= r["truth"]) & (r["truth"] <= r["upper"]) for r in rows])
        wid0 = np.median(np.concatenate([r["upper"] - r["lower"] for r in rows]))
        line = [f"{key[0]} {key[1][:6]}: main {stored.mean():.3f} ({wid0 * 100:.2f})"]
        for n, fn in FVARIANTS.items():
            cw = [evaluate_f(r, fn) for r in rows]
            c = np.concatenate([x[0] for x in cw])
            w = np.median(np.concatenate([x[1] for x in cw]))
            line.append(f"{n} {c.mean():.3f} ({w * 100:.2f})")
        print(" | ".join(line))


def group_factor_inside(r, split=0.5, min_n=10, up=True, cal_inside=True):
    """As :func:`group_factor` (the low-weight group), only for targets inside the sources' range (gap 0)."""
    c, k = r["cal"], r["k"]
    f = np.ones(len(r["w"]))
    if not c:
        return f
    s = np.abs(c["resid"]) / _total_sd(k, c["A"], c["B"], c["C"])
    cm = (c["w"] < split) & ((c["gap"] <= 0) if cal_inside else True)
    tm = (r["w"] < split) & (r["gap"] <= 0)
    if cm.sum() >= min_n:
        q = conformal_quantile(s[cm], 0.9) / Z
        f[tm] = max(q, 1.0) if up else q
    return f


FVARIANTS.update({
    "low_in_up": lambda r: group_factor_inside(r),
    "low_in": lambda r: group_factor_inside(r, up=False),
    "low_in_calall_up": lambda r: group_factor_inside(r, cal_inside=False),
})


def with_k(r, k):
    return dict(r, k=k)


def evaluate_combo(r):
    r2 = with_k(r, k_of(r["cal"], conservative=True))
    return evaluate_f(r2, FVARIANTS["low_in_up"])


def main_combo(path):
    data = pickle.loads(open(path, "rb").read())
    for key, rows in data.items():
        stored = np.concatenate([(r["lower"] <= r["truth"]) & (r["truth"] <= r["upper"]) for r in rows])
        wid0 = np.median(np.concatenate([r["upper"] - r["lower"] for r in rows]))
        out = [f"{key[0].split('/')[-1]} {key[1][:6]}: main {stored.mean():.3f} ({wid0 * 100:.2f})"]
        for name, fn in [("low_in_up", lambda r: evaluate_f(r, FVARIANTS["low_in_up"])),
                         ("conservative", lambda r: evaluate(r, VARIANTS["conservative"])), ("combo", evaluate_combo)]:
            cw = [fn(r) for r in rows]
            out.append(f"{name} {np.concatenate([x[0] for x in cw]).mean():.3f} ({np.median(np.concatenate([x[1] for x in cw])) * 100:.2f})")
        print(" | ".join(out))


if __name__ == "__main__":
    if sys.argv[1] == "--factors":
        main_f()
    elif sys.argv[1] == "--combo":
        main_combo(sys.argv[2])
    else:
        main()

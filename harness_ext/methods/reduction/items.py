"""Item subsets: a few anchor items per subset task instead of the whole task (the anchor points of Polo et al. 2024).

For each lm-eval task of a reduction whose per-sample logs are in the store, the
items are clustered by how the population's models answered them (k-means on
the items x models score matrix) and the item nearest each cluster centre is an
anchor, weighted by its cluster's share of the items. A new model runs only the
anchors (``lm_eval ... --samples <group>_samples.json``) and its task score is
the weighted mean of its anchor scores. The error of that estimate is measured
on held-out models (anchors chosen on the other folds' models) and recorded, so
``predict`` widens its intervals by it.

References
----------
Polo et al., tinyBenchmarks (2024) §3.1 (anchor points: clustering of correctness
patterns, cluster-size weights).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

METHOD = ("anchor items (tinyBenchmarks): k-means on the items' per-model scores, the item nearest each centre, "
          "weighted by its cluster's share; error cross-validated over models")


def anchor_items(P: np.ndarray, n_items: int, random_state: int = 0) -> tuple:
    """``(anchor row indices, weights)`` of ``n_items`` anchors of the items x models matrix ``P``.

    Missing scores are filled with the item's mean over the models that answered it.
    """
    from sklearn.cluster import KMeans

    P = np.asarray(P, dtype=float)
    fill = np.nanmean(np.where(np.isnan(P).all(axis=1, keepdims=True), 0.0, P), axis=1, keepdims=True)
    Z = np.where(np.isnan(P), fill, P)
    k = int(min(n_items, len(Z)))
    km = KMeans(n_clusters=k, n_init=10, random_state=random_state).fit(Z)
    anchors, weights = [], []
    for c in range(k):
        members = np.flatnonzero(km.labels_ == c)
        if members.size == 0:
            continue
        dist = ((Z[members] - km.cluster_centers_[c]) ** 2).sum(axis=1)
        anchors.append(int(members[np.argmin(dist)]))
        weights.append(members.size / len(Z))
    order = np.argsort(anchors)
    return np.asarray(anchors)[order], np.asarray(weights)[order]


def anchor_error(P: np.ndarray, n_items: int, random_state: int = 0, n_splits: int = 5) -> float:
    """RMSE (the task's own scale) of the weighted anchor estimate of each held-out model's task score.

    Anchors are chosen on the other folds' models; the truth is the model's mean over all items.
    """
    P = np.asarray(P, dtype=float)
    n_models = P.shape[1]
    rng = np.random.default_rng(random_state)
    fold_of = rng.permutation(n_models) % max(2, min(n_splits, n_models))
    errs = []
    for f in np.unique(fold_of):
        test = fold_of == f
        if test.all() or not test.any():
            continue
        idx, w = anchor_items(P[:, ~test], n_items, random_state)
        est = np.nansum(P[np.ix_(idx, test)] * w[:, None], axis=0) / np.sum(w)
        errs.append(est - np.nanmean(P[:, test], axis=0))
    e = np.concatenate(errs) if errs else np.array([np.nan])
    return float(np.sqrt(np.nanmean(e ** 2)))


def anchor_population(store, names, query: Optional[dict] = None) -> list:
    """The models of ``names`` (the per-sample logs' model names) that the dataset matrix's ``query`` selects.

    Matched as the matrix matches them: ``models`` (``--models``) on a model's name or its canonical name under
    the store's aliases, ``exclude_models`` (``--exclude-models``) on any name merged into it, so a model held
    out of the subset's choice is held out of its anchors too. Sorted by name.
    """
    from ...store.globs import matches
    from ...store.identity import has_alias_table

    query = query or {}
    canon = {}
    if query.get("aliases", True) and has_alias_table(store):
        canon = dict(store.con.execute("SELECT alias, canonical FROM model_aliases").fetchall())
    group = {}  # canonical name -> every name merged into it
    for n in set(names) | set(canon):
        group.setdefault(canon.get(n, n), {canon.get(n, n)}).add(n)
    models, exclude = query.get("models"), query.get("exclude_models")
    return sorted(n for n in set(names)
                  if (not models or matches(n, models) or matches(canon.get(n, n), models))
                  and not (exclude and any(matches(x, exclude) for x in group[canon.get(n, n)])))


def select_items(store, tasks: dict, n_items: int, random_state: int = 0, query: Optional[dict] = None) -> tuple:
    """Anchors for each task with per-sample logs in ``store``: ``(items block, warnings)``.

    Parameters
    ----------
    tasks : dict
        lm-eval task name -> (manifest dataset name, per-sample metric, normalisation dict).
    query : dict, optional
        The dataset matrix's query (a manifest's ``source.query``): the anchors are chosen on the models it
        selects (:func:`anchor_population`); the others with per-sample logs are left out, counted in a warning.
    """
    from ...store.matrix import invert_normalisation, params_frame
    from ...errors import StoreError
    from ...store.samples import prompt_matrix

    out, warnings = {}, []
    for task, (dataset, metric, norm) in tasks.items():
        try:
            P = prompt_matrix(store, task, metric)
        except StoreError as exc:
            warnings.append(f"no item subset for {task}: {exc}; the whole task runs")
            continue
        kept = anchor_population(store, list(P.columns), query)
        if len(kept) < P.shape[1]:
            only = P.drop(columns=kept).notna().any(axis=1) & P[kept].isna().all(axis=1)
            warnings.append(f"{task}: {P.shape[1] - len(kept)} of {P.shape[1]} models with per-sample logs are outside "
                            "the matrix's selection (--models/--exclude-models): left out of the anchors"
                            + (f", with the {int(only.sum())} items only they answered" if only.any() else ""))
            P = P.loc[~only, kept]
        if P.shape[1] < 2:
            warnings.append(f"no item subset for {task}: {P.shape[1]} selected model(s) with per-sample logs "
                            "(2 or more needed); the whole task runs")
            continue
        if len(P) <= n_items:
            warnings.append(f"no item subset for {task}: it has {len(P)} items, not more than --items {n_items}")
            continue
        idx, w = anchor_items(P.to_numpy(dtype=float), n_items, random_state)
        err = anchor_error(P.to_numpy(dtype=float), n_items, random_state)
        # The error in the manifest's normalised units (normalisation is affine inside its range).
        params = params_frame({dataset: norm}, [dataset])
        raw_lo, raw_hi = invert_normalisation(np.array([[0.4], [0.6]]), params)[:, 0]
        scale = 0.2 / abs(raw_hi - raw_lo) if raw_hi != raw_lo else 1.0
        out[task] = {"dataset": dataset, "metric": metric, "n_items": int(len(P)), "n_models": int(P.shape[1]),
                     "doc_ids": [int(v) if float(v).is_integer() else v for v in P.index[idx].tolist()],
                     "weights": [round(float(x), 10) for x in w],
                     "cv_rmse": round(err, 10), "cv_rmse_normalised": round(err * scale, 10)}
    return out, warnings


def weighted_scores(store, items: dict, models: Optional[list] = None) -> dict:
    """``{(model, dataset): weighted anchor score}`` from the per-sample logs in ``store`` (e.g. a new model's run)."""
    from ...errors import StoreError
    from ...store.samples import prompt_matrix

    out = {}
    for task, block in (items.get("tasks") or {}).items():
        try:
            P = prompt_matrix(store, task, block["metric"])
        except StoreError:
            continue
        out.update(_weighted_anchors(P, block, models))
    return out


def anchor_conflicts(store, items: dict) -> list:
    """The anchored tasks' item scores two files of ``store`` (a new model's) give differently: one tuple per model
    and task, ``(model, task, items, anchors, files used, files not used)``.

    ``items`` counts the task's items scored differently on the manifest's metric, ``anchors`` how many of them are
    the manifest's anchors (the ones the task's estimate reads); every reader takes the first stored score
    (:func:`harness_ext.store.item_info.item_conflicts`), from ``files used``.
    """
    from ...store.item_info import USED_FIRST_STORED, item_conflicts

    tasks = items.get("tasks") or {}
    c = item_conflicts(store)
    out = []
    if c.empty or not tasks:
        return out
    for (model, task), rows in c.groupby(["model", "task"], sort=True):
        block = tasks.get(task)
        rows = rows[rows["metric"] == block["metric"]] if block else rows.iloc[:0]
        if rows.empty:
            continue
        ids = set(rows["item"].tolist())
        anchors = {d for d in block["doc_ids"] if d in ids}
        used = rows["used"] == USED_FIRST_STORED
        out.append((model, task, len(ids), len(anchors), tuple(dict.fromkeys(rows.loc[used, "source"])),
                    tuple(dict.fromkeys(s for s in rows.loc[~used, "source"]))))
    return out


def logged_anchor_scores(items: dict, samples: dict) -> dict:
    """``{dataset: weighted anchor score}`` of one run from lm-eval's logged samples in memory (``{task: [sample,
    ...]}``, as lm-eval keeps them with ``--log_samples``): what :func:`weighted_scores` reads from a store."""
    import pandas as pd

    from ...store.samples import sample_frame

    out = {}
    for task, block in (items.get("tasks") or {}).items():
        f = sample_frame(f"lm-eval's logged samples of {task}", enumerate(samples.get(task) or [], start=1))
        f = f[f["metric"] == block["metric"]].drop_duplicates("doc_id")
        P = pd.DataFrame({"run": f["value"].to_numpy(dtype=float)}, index=f["doc_id"].to_numpy())
        out.update({c: v for (_, c), v in _weighted_anchors(P, block).items()})
    return out


def _weighted_anchors(P, block: dict, models: Optional[list] = None) -> dict:
    """``{(model, dataset): weighted mean}`` of the anchors of ``block`` in the items x models frame ``P``."""
    weights = dict(zip(block["doc_ids"], block["weights"]))
    have = [d for d in P.index if d in weights]
    out = {}
    if not have:
        return out
    w = np.array([weights[d] for d in have])
    for model in P.columns:
        v = P.loc[have, model].to_numpy(dtype=float)
        ok = ~np.isnan(v)
        if ok.any() and (models is None or model in models):
            out[(model, block["dataset"])] = float(np.sum(v[ok] * w[ok]) / np.sum(w[ok]))
    return out


def attach_items(manifest: dict, db, n_items: int, random_state: int = 0) -> dict:
    """Record anchor items for the subset's lm-eval tasks in ``manifest["items"]`` (from the store's sample logs)."""
    from pathlib import Path

    from harness_ext.methods.reduction.harness_names import lm_eval_task_list

    from ...store.db import Store

    norms = {d["name"]: d.get("normalisation") or {} for d in manifest["datasets"]}
    tasks, whole = {}, []
    for e in manifest["subset"]:
        names = lm_eval_task_list(e)
        if len(names) == 1:  # a scenario run as several lm-eval tasks has no single item list
            tasks[names[0]] = (e["name"], (e.get("metric") or "acc").split(",")[0], norms[e["name"]])
        else:
            whole.append(f"{e['name']} ({len(names)} lm-eval tasks)")
    if db in (None, ":memory:") or not Path(db).exists():
        block, warnings = {}, ["--items needs the store the population's per-sample logs were ingested into"]
    else:
        with Store.open(db, read_only=True) as store:
            block, warnings = select_items(store, tasks, n_items, random_state,
                                           (manifest.get("source") or {}).get("query"))
    if whole:
        warnings.append(f"no anchor items for {len(whole)} subset dataset(s) not run as one lm-eval task, so run "
                        f"whole: {', '.join(whole)}")
    manifest["items"] = {"method": METHOD, "n_per_task": int(n_items), "random_state": int(random_state),
                         "tasks": block}
    manifest["warnings"].extend(warnings)
    return manifest


def item_noise(manifest: dict, columns: list, subset_idx, have, Z_new, predict_fn, weights) -> tuple:
    """Extra variance, per cell and of the aggregate, from subset scores that are anchor estimates.

    Each anchor-estimated subset score carries its cross-validated error (normalised); it
    reaches every predicted cell through the predictor, whose sensitivity to that input is
    taken by a finite difference. Errors of different tasks are treated as independent.

    ``weights``: ``(d,)``, or ``(d, k)`` for ``k`` aggregates (then ``agg_var`` is ``(n_new, k)``).

    Returns
    -------
    (cell_var, agg_var) : ``(n_new, d)`` and ``(n_new,)`` arrays, or ``(None, None)`` without item subsets.
    """
    blocks = (manifest.get("items") or {}).get("tasks") or {}
    if not blocks:
        return None, None
    err = np.zeros(len(columns))
    for b in blocks.values():
        if b["dataset"] in columns:
            err[columns.index(b["dataset"])] = b["cv_rmse_normalised"]
    base = predict_fn(Z_new)
    cell_var = np.zeros_like(base)
    agg_var = np.zeros((base.shape[0],) + np.shape(weights)[1:])
    per_agg = (-1,) + (1,) * (np.ndim(weights) - 1)
    h = 0.01
    for jj, j in enumerate(np.asarray(subset_idx)):
        e = err[j] * have[:, jj]
        if not e.any():
            continue
        Zp = Z_new.copy()
        Zp[:, j] = Zp[:, j] + h
        g = (predict_fn(Zp) - base) / h
        cell_var += (g * e[:, None]) ** 2
        agg_var += ((g @ weights) * e.reshape(per_agg)) ** 2
    return cell_var, agg_var

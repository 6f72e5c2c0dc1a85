"""The ``predict`` command: options are in :mod:`harness_ext.cli.options`; this module calls the method and shows its result."""

from __future__ import annotations

import logging

log = logging.getLogger("harness_ext.methods.reduction.predict")


def run(args) -> int:
    from ..methods.reduction.manifest import load_manifest
    from ..methods.reduction.predict import predict_from_manifest
    from ..methods.reduction.predict_export import check_eee_folder, write_eee_records, write_lm_eval_results

    # Everything the command was given is checked before the work: the manifest, where records go.
    if getattr(args, "eee", None):
        check_eee_folder(args.eee)
    manifest = load_manifest(args.manifest)
    if manifest.get("kind") == "items":  # reduce --items: estimated from the new model's per-item logs
        from ..methods.reduction.item_predict import predict_items

        if getattr(args, "adapter", None):
            from ..errors import HarnessExtError

            raise HarnessExtError(f"--adapter {args.adapter}: {args.manifest} is an item-level manifest (reduce --items), "
                                  "predicted from lm-eval per-sample logs, which no adapter reads; leave --adapter out")

        pred = predict_items(manifest, args.results, manifest_path=args.manifest, level=getattr(args, "level", 0.9),
                             estimator=getattr(args, "item_estimator", None))
    else:
        pred = predict_from_manifest(manifest, args.results, manifest_path=args.manifest,
                                     level=getattr(args, "level", 0.9), adapter=getattr(args, "adapter", None))
    from ..report import grouped_warnings

    # Several new models flagged alike are said once (-v: one warning each, as the JSON and the API keep them).
    models = pred.table["model"].unique() if pred.table is not None and "model" in pred.table else []
    for w in pred.warnings if getattr(args, "verbose", 0) else grouped_warnings(pred.warnings, models):
        log.warning(w)
    # With --json - the command line sends stdout to stderr and keeps the real stdout for the JSON.
    from .output import show_part

    show_part(pred.render(all=args.all))  # a model's format characters (an RTL override) shown escaped
    written = []
    if getattr(args, "out", None):
        from .output import with_plot

        written += with_plot(args, pred, pred.write(args.out), pred.PLOT_FILE)
    if getattr(args, "lm_eval_results", True):
        written += write_lm_eval_results(pred, manifest, args.manifest)
    if getattr(args, "eee", None):
        written += write_eee_records(pred, manifest, args.eee)
    for p in written:
        print(f"wrote {p}")
    args.json_payload = pred
    return 0

"""The subcommands of ``harness-ext``: their options and the command table.

Every option is declared here or in :mod:`harness_ext.cli.shared_options` (the
conventions the commands share and the matrix-selection group), with argparse
alone, so ``harness-ext --help`` and ``harness-ext COMMAND --help`` import no
numerics (numpy, pandas, scipy, scikit-learn): a checkpoint loop that runs the
CLI once per model should not pay a second of start-up for them. Each command's
``run(args) -> int`` lives in ``harness_ext.cli.<command>`` and is imported only
when the command runs (:data:`COMMANDS`).

Defaults and choices that a method module also knows (``--ties``,
``--analysis``, ...) are literals here; tests/test_cli_speed.py checks them
against the method modules' constants.
"""

from __future__ import annotations

import argparse
from collections import namedtuple

from .shared_options import (  # noqa: F401 - the shared conventions, importable from here as before the split
    DEFAULT_DB_HELP,
    CommaJoin,
    ListAppend,
    add_matrix_arguments,
    add_out_option,
    add_seed_option,
    add_store_argument,
    default_out,
    matrix_from_args,
    non_negative_int,
    parse_key_values,
    positive_int,
    query_from_args,
    require_single_benchmark,
)

#: The plugin kinds (``harness_ext.types.REGISTRATION_TYPES``).
PLUGIN_KINDS = ("adapters", "item_estimators", "manifest_writers", "predictors", "selectors", "similarity_measures",
                "weighting_schemes")
#: ``harness_ext.methods.prowl.TIES``
PROWL_TIES = ("half", "strict")
#: ``harness_ext.methods.compare.DEFAULT_SELECTORS``
COMPARE_DEFAULT_SELECTORS = ("random-subset", "kmeans", "farthest-first-cosine", "farthest-first-euclidean",
                             "a-optimal", "d-optimal", "greedy-coverage")
#: ``harness_ext.methods.pounce.ANALYSES``
POUNCE_ANALYSES = ("regression", "completion", "active", "tensor")
#: ``harness_ext.methods.weighting.SCHEME_NAMES_DEFAULT``, ``SIMILARITY_MEASURES`` and ``ANALYSES``
WEIGHTS_SCHEMES = ("uniform", "medoids", "distance", "inverse_distance")
WEIGHTS_SIMILARITIES = ("cosine", "jaccard", "hamming")
WEIGHTS_ANALYSES = ("schemes", "random", "size", "permutation", "silhouette")

#: The analyses (commands that read a matrix and write tables and plots).
ANALYSES = ("stalk", "prowl", "compare", "pounce", "weights")
#: Commands that write a folder: ``--out DIR`` (also ``--output``, ``-o``), by default
#: ``harness-ext-out/<benchmark>/<command>`` (:func:`default_out`).
FOLDER_COMMANDS = ANALYSES + ("reduce",)


# -- ingest, info, matrix, models, plugins ---------------------------------------------------------
def ingest_options(parser):
    parser.add_argument("paths", nargs="*", help="result files or directories (walked recursively)")
    parser.add_argument("--bundled", action="store_true", help="also ingest the bundled real data (269 Pythia lm-eval runs)")
    add_store_argument(parser)
    parser.add_argument("--adapter", default=None, help="force this adapter instead of detecting the format")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")
    parser.add_argument("--meta-columns", action=CommaJoin, default=None,
                        help="comma-separated (or repeated) CSV columns that describe models (size, date, ...), stored as model "
                             "metadata rather than scores")
    parser.add_argument("--keep-reference-rows", action="store_true",
                        help="store reference rows (Random, Human, Oracle, Upper bound) as models: a CSV's, wide or long, "
                             "instead of as the dataset's chance level and reference scores; an item table's instead "
                             "of leaving them out")
    parser.add_argument("--column-meta", default=None, metavar="FILE",
                        help="YAML sidecar with per-column chance level, direction, scale and kind for every CSV "
                             "ingested (a file's own <file>.meta.yaml wins; format in docs/guide/ingest.md, 'Leaderboard CSVs')")
    parser.add_argument("--models-as-columns", action="store_true",
                        help="read every CSV/TSV ingested as one row per dataset and one column per model (TSB-AD's "
                             "results tables); columns describing the datasets (lengths, counts, ratios, whole "
                             "numbers beside fractional scores, or declared) become dataset metadata, noted. One "
                             "file: 'models: columns' in its sidecar")
    parser.add_argument("--mteb-split", default=None,
                        help="MTEB split to read (default: the first of test, dev, validation the file has)")
    parser.add_argument("--mteb-languages", action=CommaJoin, default=None,
                        help="comma-separated (or repeated) MTEB subsets/languages to average (e.g. en or eng-Latn,deu-Latn); "
                             "default: the default or English subset, else all")
    parser.add_argument("--group", default=None, metavar="NAME",
                        help="make NAME a benchmark group of every benchmark in these files, queried as one with "
                             "--benchmark NAME (e.g. --group benchbench for the 40 benchbench leaderboards)")
    parser.add_argument("--reread", action="store_true",
                        help="read again the files already stored by an older version of their reader (ingest counts "
                             "them), replacing everything that reading stored from each, one file at a time")


def info_options(parser):
    add_store_argument(parser)
    parser.add_argument("--conflicts", action="store_true", help="list cells whose value differs between source files")
    parser.add_argument("--dataset-aliases", metavar="FILE", default=None,
                        help="store a dataset alias file (as models --aliases: 'aliases: {canonical: [names]}', "
                             "'separate: [names]'; names as 'benchmark/name' where a name is in several benchmarks), "
                             "so the matrix merges each name's column into its canonical one")


def matrix_options(parser):
    add_matrix_arguments(parser, benchmark_required=False)  # matrix_from_args(require_benchmark=False)
    parser.add_argument("--out", "--output", "-o", dest="output", default=None,
                        help="write to this file (.csv or .parquet) instead of printing")


def models_options(parser):
    add_store_argument(parser)
    parser.add_argument("--unmatched", action="store_true",
                        help="list names that did not merge but look like the same model, with a similarity score")
    parser.add_argument("--min-score", type=float, default=0.75, help="lowest similarity listed by --unmatched (default 0.75)")
    parser.add_argument("--aliases", metavar="FILE", default=None,
                        help="store a user alias file (YAML/JSON 'aliases: {canonical: [names]}', 'separate: [names]'; "
                             "or CSV alias,canonical), re-resolve and list the merged names")
    parser.add_argument("--merged", action="store_true", help="list only canonical ids that several names map to")


def plugins_options(parser):
    parser.add_argument("--kind", choices=sorted(PLUGIN_KINDS), default=None, help="only this kind of plugin")


# -- analyses --------------------------------------------------------------------------------
def stalk_options(parser) -> None:
    add_matrix_arguments(parser)
    g = parser.add_argument_group("stalk")
    g.add_argument("--threshold", type=float, default=0.5, help="best R^2 below this is NONE (default 0.5)")
    g.add_argument("--min-points", type=int, default=3, help="fewest observations a fit may use (default 3)")
    g.add_argument("--min-fraction", type=float, default=0.5,
                   help="smallest share of a pair's observations a log fit may keep after dropping scores <= 0 "
                        "(default 0.5; 0 keeps any fit with --min-points)")
    g.add_argument("--axis", choices=["datasets", "models", "both"], default=None,
                   help="which pairs to classify (default both, datasets only past 1,000 models)")
    add_out_option(g, "stalk", "output folder for the pair tables, counts and heatmap")


def prowl_options(parser) -> None:
    add_matrix_arguments(parser)
    g = parser.add_argument_group("prowl")
    g.add_argument("--similarity", action=ListAppend, default=None,
                   help="similarity measure (repeatable or comma-separated); default: SimBA's nine")
    g.add_argument("--selector", default="greedy_coverage",
                   help="selector run with each similarity measure (default greedy_coverage); one that takes no "
                        "similarity measure gives one row")
    g.add_argument("--beam-width", type=int, default=None, help="use beam_coverage with this beam width")
    g.add_argument("--target", type=float, default=0.95, help="coverage target defining |S*|, in (0, 1] (default 0.95)")
    g.add_argument("--n-random", type=int, default=1000, help="runs of the RANDOM baseline (default 1000)")
    add_seed_option(g, "the RANDOM baseline", dest="random_state")
    g.add_argument("--ties", choices=PROWL_TIES, default="half",
                   help="ties in the mean win rate: half a win (HELM, default) or none (SimBA eq. 6 as printed)")
    g.add_argument("--prompts", default=None, metavar="CSV",
                   help="prompt-level CSV (0/1 correctness) instead of the store matrix; the columns selected are "
                        "prompts, and Jaccard/Hamming join the table")
    g.add_argument("--prompts-layout", choices=["prompt-rows", "model-rows"], default="prompt-rows",
                   help="--prompts CSV layout (default prompt-rows: one row per prompt, one column per model)")
    add_out_option(g, "prowl", "output folder for the tables and plots")


def compare_options(parser):
    add_matrix_arguments(parser)
    g = parser.add_argument_group("rank-preservation protocol (Gusev & Zaytsev)")
    g.add_argument("--selectors", nargs="+", action=ListAppend, default=None, metavar="NAME",
                   help=f"selectors to compare (default: {' '.join(COMPARE_DEFAULT_SELECTORS)})")
    g.add_argument("--trials", type=int, default=200, help="number of trials T (default 200)")
    g.add_argument("--k-max", type=int, default=None,
                   help="largest subset size (default 20, or the trials' pool of datasets when smaller; k runs from 2)")
    g.add_argument("--alpha", type=float, default=0.8, help="pool fraction per trial (default 0.8)")
    g.add_argument("--variation", choices=["datasets", "models"], default="datasets", help="vary the dataset pool or the model pool")
    g.add_argument("--target", action=ListAppend, default=None, metavar="METRIC>=V",
                   help="k* target (repeatable or comma-separated; default: 'spearman>=0.90,mae<=1.5')")
    g.add_argument("--metrics", nargs="+", action=ListAppend, default=None, help="rank metrics (default: mae spearman kendall ndcg@5 mrr)")
    g.add_argument("--ci", type=float, default=0.95, help="confidence level of the quantile bands (default 0.95)")
    add_seed_option(g, "the trials' pools and the selectors")
    g.add_argument("--n-jobs", "--n_jobs", type=int, default=-1,
                   help="parallel trials through joblib (default -1: all cores; results depend only on --seed)")
    g.add_argument("--representation", choices=["scores", "ranks"], default="scores",
                   help="without --features: datasets as performance columns (scores, default) or as per-dataset model ranks")
    g.add_argument("--features", default=None, metavar="CSV",
                   help="a-priori dataset features (rows: dataset names, columns: features); default: performance columns")
    add_out_option(parser, "compare", "output folder for the plot and CSVs")


def pounce_options(parser):
    add_matrix_arguments(parser)
    g = parser.add_argument_group("pounce")
    g.add_argument("--analysis", action=CommaJoin, default="regression,completion",
                   help=f"comma-separated analyses among {', '.join(POUNCE_ANALYSES)}, or 'all' (default: regression,completion)")
    g.add_argument("--predictors", action=CommaJoin, default="ridge,knn,mlp_12,mlp_12_12",
                   help="regression predictors for the SimBA protocol (default: ridge,knn,mlp_12,mlp_12_12)")
    g.add_argument("--selector", default="greedy_coverage",
                   help="selector that orders datasets on the training models (default: greedy_coverage, Minkowski p=3)")
    g.add_argument("--order", action=CommaJoin, default=None,
                   help="fixed dataset order instead of a selector: comma-separated (or repeated) dataset names")
    g.add_argument("--test-size", type=float, default=0.2, help="share of models held out (default 0.2)")
    g.add_argument("--splits", type=int, default=1,
                   help="random 80/20 model splits to average AUC-MSE over (default 1, as in SimBA)")
    g.add_argument("--noise", action=CommaJoin, default="0.05,0.1", help="noise standard deviations for the robustness check (default 0.05,0.1)")
    g.add_argument("--folds", type=non_negative_int, default=None,
                   help="k for the k-fold stability check (default: 5 up to 20 datasets, else 10; 0 skips)")
    g.add_argument("--completion-predictors", action=CommaJoin, default="global_mean,mean_of_means,pmf,bpmf",
                   help="matrix-completion predictors for the Zhao et al. protocol (default: global_mean,mean_of_means,pmf,bpmf)")
    g.add_argument("--hidden-ratios", action=CommaJoin, default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9",
                   help="shares of observed cells hidden (default 0.1..0.9)")
    g.add_argument("--repeats", type=positive_int, default=1, help="masks per hidden ratio (default 1)")
    g.add_argument("--level", type=float, default=0.9, help="central interval level for calibration (default 0.9)")
    g.add_argument("--n-samples", type=int, default=None, help="Gibbs draws kept (and burn-in) for bpmf; default the predictor's")
    g.add_argument("--profiles", default=None,
                   help="directory with CrossPred-style model_profiles.json / dataset_profiles.json: adds constrained "
                        "PMF/BPMF (cpmf, bcpmf) to the completion table")
    g.add_argument("--active-predictor", default="bpmf", help="predictor for active evaluation (default bpmf)")
    g.add_argument("--active-steps", type=int, default=6, help="active-evaluation steps (default 6)")
    g.add_argument("--active-step", type=float, default=0.05, help="share of observed cells revealed per step (default 0.05)")
    g.add_argument("--tensor-ratios", action=CommaJoin, default="0.2,0.9",
                   help="hidden shares for the multi-metric (PTF) comparison, analysis 'tensor' (default 0.2,0.9)")
    g.add_argument("--paper", default="auto", choices=["auto", "none", "helm", "mmlu", "bigbench_lite"],
                   help="SimBA column to print next to AUC-MSE (default: guess from the benchmark name)")
    add_seed_option(g, "splits, noise, masks and predictors")
    add_out_option(g, "pounce", "folder for PNG plots and CSV tables")


def weights_options(parser: argparse.ArgumentParser) -> None:
    add_matrix_arguments(parser)
    p = parser.add_argument_group("prompt-level input (instead of a models x datasets store matrix)")
    p.add_argument(
        "--samples-task",
        metavar="TASK",
        default=None,
        help="analyse the prompts of one lm-eval task: a prompt x model matrix from per-sample logs "
        "(samples_<TASK>_<date>.jsonl), read from --samples or else from the store's samples table",
    )
    p.add_argument("--samples-metric", default=None,
                   help="per-sample metric of --samples-task (default acc, or the task's only metric; e.g. acc_norm, "
                   "exact_match,strict-match)")
    p.add_argument(
        "--samples",
        metavar="PATH",
        action="append",
        default=None,
        help="lm-eval output folders or samples_*.jsonl files to read for --samples-task (repeatable); "
        "read into a throw-away in-memory store, --db is not touched",
    )
    p.add_argument(
        "--prompts",
        metavar="CSV",
        default=None,
        help="analyse a prompt-level score CSV (0/1 correct, or scores in [0,1]) from another tool; "
        "first column = row labels",
    )
    p.add_argument(
        "--prompts-layout",
        choices=["prompt-rows", "model-rows"],
        default="prompt-rows",
        help="prompt-rows (default, the paper's Q: one row per prompt, one column per model) or model-rows",
    )
    g = parser.add_argument_group("weighting")
    g.add_argument("--scheme", default="uniform", help="scheme whose weights --emit-weights writes (default uniform)")
    g.add_argument("--param", action="append", metavar="KEY=VALUE", help="parameter of --scheme (repeatable), e.g. path=w.json")
    g.add_argument("--emit-weights", metavar="FILE", default=None, help="write the --scheme weights as JSON with its parameters")
    g.add_argument("--schemes", action=CommaJoin, default=",".join(WEIGHTS_SCHEMES), help="schemes in the rank-change table (comma list)")
    a = parser.add_argument_group("analyses")
    a.add_argument("--analyses", action=CommaJoin, default=",".join(WEIGHTS_ANALYSES), help=f"comma list from {','.join(WEIGHTS_ANALYSES)}, or 'none'")
    a.add_argument("--draws", type=positive_int, default=100_000, help="random simplex draws (default 100000)")
    a.add_argument("--chunk-size", type=positive_int, default=None, help="draws per chunk (default: bounded memory)")
    a.add_argument("--pairwise-top", type=positive_int, default=20, help="models in the pairwise matrix (best under uniform)")
    a.add_argument("--permutations", type=positive_int, default=1000, help="permutations for the similarity test (default 1000)")
    a.add_argument("--silhouette-permutations", type=positive_int, default=10, help="permuted matrices clustered (default 10)")
    a.add_argument("--similarity", action=CommaJoin, default=",".join(WEIGHTS_SIMILARITIES), help="measures for the permutation test")
    a.add_argument("--max-clusters", type=int, default=20, help="largest number of clusters tried (default 20)")
    a.add_argument("--top", type=positive_int, default=20, help="models shown in printed tables and plots (default 20)")
    a.add_argument("--no-complete", dest="complete", action="store_false",
                   help="keep missing cells missing: analyses that need a complete matrix are skipped (default: "
                        "missing cells are predicted by reduce's default predictor, lowrank, seeded by --seed, "
                        "and the output says how many)")
    add_seed_option(a, dest="random_state")
    add_out_option(a, "weights", "folder for PNG plots, CSV tables and summary.json")


def given_options(args, options) -> list:
    """Those of ``options`` (spelt as on the command line) whose value in ``args`` is not the command's default: what
    the user gave, so that a run can name those it did not use."""
    parser = argparse.ArgumentParser(add_help=False)
    COMMANDS[args.command].options(parser)  # the command's own options, with their defaults
    dest = {o: a.dest for a in parser._actions for o in a.option_strings}
    return [o for o in options if getattr(args, dest[o], None) != parser.get_default(dest[o])]


#: The matrix-selection options (:func:`add_matrix_arguments`) but ``--models`` and ``--exclude-models``.
MATRIX_OPTIONS = ("--benchmark", "--metric", "--datasets", "--source", "--num-fewshot", "--dense", "--rows",
                  "--no-aliases", "--aggregates", "--chance-file", "--normalise")


def say_matrix_options_unused(args, source: str, log, also: tuple = ()) -> None:
    """Warn, on ``log``, about the store matrix's options (:data:`MATRIX_OPTIONS` and ``also``) given with ``source``
    (``--prompts``), which reads a prompt-level matrix instead."""
    if unused := given_options(args, MATRIX_OPTIONS + tuple(also)):
        log.warning(f"{', '.join(unused)} not used: {source} reads a prompt-level matrix, not the store's models x "
                    "datasets matrix")


# -- reduce, predict -------------------------------------------------------------------------
def add_demote_saturated_option(parser):
    """``reduce --demote-saturated``: the subset chosen for models stronger than the store's
    (:mod:`harness_ext.methods.prowl.saturation`)."""
    parser.add_argument("--demote-saturated", action="store_true",
                        help="choose the subset for models stronger than every model in the store: a dataset whose "
                             "scores sit near its known ceiling (little headroom left above the strong models) is "
                             "chosen only after every other, since a stronger model's gain cannot show there. Better "
                             "predictions for models stronger than the store's, at some cost for models like them "
                             "(docs/frontier.md); the summary and the manifest (selection.saturation) list what it "
                             "demoted, with each dataset's headroom; off by default")
    parser.add_argument("--selector-param", action="append", metavar="KEY=VALUE", default=None,
                        help="a parameter of --selector (repeatable; the value read as YAML), e.g. "
                             "headroom=0.3; also for the calibration's reselection, and recorded in the manifest")
    parser.add_argument("--predictor-param", action="append", metavar="KEY=VALUE", default=None,
                        help="a parameter of --predictor (repeatable; the value read as YAML), e.g. rank=3; used by "
                             "the selection, the cross-validated evidence and predict (the manifest records it)")


def add_reduce_plugin_options(parser):
    """``reduce``'s plugins: the selector, its similarity measure, the predictor and the aggregate's weighting."""
    parser.add_argument("--selector", default="prediction_greedy",
                        help="selector plugin (default prediction_greedy: the subset that best predicts the rest "
                             "under --predictor; greedy_coverage is SimBA's coverage selector)")
    parser.add_argument("--similarity", default=None,
                        help="similarity plugin for the coverage selectors greedy_coverage and beam_coverage (default "
                             "pearson); the default selector takes none, so with it this is not used (a warning "
                             "says so)")
    parser.add_argument("--predictor", default="lowrank",
                        help="predictor plugin (default lowrank: biased low-rank fold-in blended with ridge, conformal intervals)")
    parser.add_argument("--weighting", default="uniform", help="weighting scheme for the aggregate (default uniform)")
    parser.add_argument("--weights", default=None, metavar="FILE",
                        help="dataset weights for the aggregate from a JSON or CSV file (implies --weighting user)")


def reduce_options(parser):
    add_matrix_arguments(parser)
    parser.add_argument("--keep-missing", dest="dense", action="store_false",
                        help="keep every model and dataset (the default: missing cells are used as missing, never "
                             "cut to a complete block; --dense cuts and names what it drops)")
    parser.add_argument("--budget", default=None,
                        help="subset size: a fraction (0.2), a count (5), SimBA's coverage target (coverage=0.95) "
                             "or a total cost (cost=50000, in the units of the dataset costs); default: 10%% of the "
                             "datasets, at least 2 and fewer than all (the budget benchmarks/quality_holdout.py "
                             "validates)")
    parser.add_argument("--costs", default=None, metavar="FILE",
                        help="cost of running each dataset (JSON name -> cost, or CSV dataset,cost); default: the "
                             "sample counts the result files recorded, when every dataset has one")
    parser.add_argument("--n-random-subsets", type=positive_int, default=None,
                        help="random subsets of the chosen size compared with it, same predictor and folds "
                             "(default 200, or 20 for predictors that refit per subset)")
    parser.add_argument("--min-availability", type=float, default=None, metavar="SHARE",
                        help="datasets run by fewer than this share of the models are chosen only after every other "
                             "(a new model most likely lacks them too); default 0.5, 0 turns it off; the summary and "
                             "the manifest (selection.availability) list them with their model counts")
    add_demote_saturated_option(parser)
    parser.add_argument("--items", type=int, default=None, metavar="N",
                        help="reduce at the item level: N random items of every task with item-level results in the "
                             "store (lm-eval per-sample logs, item-response tables, HELM per-instance scores); the "
                             "reduced folder holds <group>_samples.json for lm_eval --samples, and predict estimates "
                             "each task and the benchmark from the new model's --log_samples output. Without "
                             "item-level results, N random documents of every lm-eval task whose results files give "
                             "its size (n-samples), estimated by their mean with the finite-population interval")
    parser.add_argument("--items-total", type=int, default=None, metavar="N",
                        help="reduce at the item level with N items in all, spread over the benchmark's tasks by "
                             "--item-allocation (instead of --items N per task)")
    parser.add_argument("--item-design", choices=("random", "stratified", "anchors", "irt-anchors", "search"),
                        default="random",
                        help="with --items/--items-total: 'random' (default) draws items at random in every task, "
                             "which the design-based estimators need; 'stratified' draws them at random within "
                             "strata of the population's per-item accuracy (design-based too); 'irt-anchors' takes "
                             "tinyBenchmarks' anchor points on the IRT item parameters (model-based interval); "
                             "'search' keeps the best of 2,000 random subsets by a regression's held-out error "
                             "(random search + learn; model-based interval); "
                             "'anchors' keeps the dataset subset and runs only N anchor items (tinyBenchmarks, "
                             "k-means on the answers) of each subset task. The manifest records why the default is "
                             "the default")
    parser.add_argument("--item-allocation", choices=("neyman", "proportional"), default="neyman",
                        help="how --items-total is spread over the tasks: 'neyman' (default; proportional to the "
                             "task's weight x the population's per-item standard deviation, the smallest variance "
                             "of the benchmark score) or 'proportional' (to the task's number of items)")
    parser.add_argument("--item-strata", type=int, default=5, metavar="K",
                        help="with --item-design stratified: strata of difficulty per task (default 5)")
    parser.add_argument("--stratum-allocation", choices=("proportional", "neyman"), default="proportional",
                        help="with --item-design stratified: a task's items over its strata 'proportional' (default) "
                             "to their sizes, or by Neyman's rule on the population's spread in each stratum, which "
                             "starves the strata the population finds all easy or all hard (measured worse at the "
                             "frontier by benchmarks/quality_items.py)")
    parser.add_argument("--item-estimator", default=None, metavar="NAME",
                        help="with --items: the item estimator predict uses by default and the expected error is "
                             "measured with (default: crosstask for the random design, a regression on every task's "
                             "sampled items inside the population and design-based AIPW beyond it; stratified_aipw "
                             "for the stratified one; irt_anchors for IRT anchors; search_learn for searched items; "
                             "harness-ext plugins --kind item_estimators)")
    parser.add_argument("--local-data", action="append", default=None, metavar="DIR",
                        help="a folder of your own task data (repeatable): absolute data paths that the ingested "
                             "lm-eval task configurations name inside it are written into the task YAMLs; any other "
                             "local path is left out, with a note")
    parser.add_argument("--no-plot", action="store_true", help="do not write error_vs_budget.png")
    add_reduce_plugin_options(parser)
    add_seed_option(parser)
    parser.add_argument("--n-random", type=int, default=200,
                        help="random orders for the coverage-curve baseline (SimBA; default 200). The chance check "
                             "of the subset itself compares prediction errors: --n-random-subsets")
    parser.add_argument("--group-name", default="harness_ext_reduced", help="lm-eval group / file stem")
    parser.add_argument("--format", dest="formats", action=ListAppend, default=None,
                        help="manifest writers to run (repeatable or comma-separated; default: json, lm_eval_yaml, "
                             "helm_conf, task_list)")
    add_out_option(parser, "reduce", "the reduced folder: manifest, lm-eval group and task YAMLs, HELM conf")


def predict_options(parser):
    parser.add_argument("results", nargs="+",
                        help="the new models' result files (or directories) for the subset: each model found is "
                             "predicted on its own (item logs and item-response tables of several models too)")
    parser.add_argument("--manifest", "-m", required=True, help="manifest.json written by 'harness-ext reduce' (or its folder)")
    parser.add_argument("--json", dest="json_out", nargs="?", const="-", default=None, metavar="FILE",
                        help="also write the predictions as JSON to FILE; '-' (or no FILE) writes them to stdout "
                             "and the tables to stderr")
    parser.add_argument("--all", action="store_true", help="list observed datasets too, not only predicted ones")
    parser.add_argument("--adapter", default=None, metavar="NAME",
                        help="read the result files with this adapter instead of detecting the format (as ingest "
                             "--adapter; harness-ext plugins --kind adapters)")
    parser.add_argument("--level", type=float, default=0.9, metavar="P",
                        help="interval level in (0, 1) (default 0.9); conformal intervals are calibrated at it")
    parser.add_argument("--item-estimator", default=None, metavar="NAME",
                        help="for an item-level manifest (reduce --items): the item estimator to use instead of the "
                             "manifest's (harness-ext plugins --kind item_estimators)")
    parser.add_argument("--eee", default=None, metavar="DIR",
                        help="also write one Every Eval Ever record (schema 0.2.1) per model to DIR, with the "
                             "interval in score_details.uncertainty.confidence_interval")
    parser.add_argument("--out", "--output", "-o", default=None, metavar="DIR",
                        help="also write the predictions to folder DIR: prediction.json (the --json document), "
                             "predictions.csv (every dataset with its interval), aggregate.csv (the full-benchmark "
                             "score with its interval) and prediction.png (the figure)")
    parser.add_argument("--no-plot", action="store_true", help="with --out: do not write prediction.png")
    parser.add_argument("--no-lm-eval-results", dest="lm_eval_results", action="store_false",
                        help="do not write harness_ext_prediction_<group>.json (lm-eval's results layout) next to "
                             "each model's lm-eval results file")


# -- the registry ------------------------------------------------------------------------------
#: A command: its help line, ``options(parser)`` adding its arguments, and ``run`` as ``"module:function"``
#: (imported only when the command runs). A namedtuple, not typing.NamedTuple: typing costs start-up time.
Command = namedtuple("Command", "help options run")


COMMANDS = {
    "ingest": Command("ingest result files or directories into the store", ingest_options, "harness_ext.cli.ingest:run"),
    "matrix": Command("print or export a models x datasets performance matrix", matrix_options,
                      "harness_ext.cli.matrix:run"),
    "info": Command("summarise what the store holds", info_options, "harness_ext.cli.info:run"),
    "models": Command("list models and the names merged into each; --unmatched: likely duplicates to review",
                      models_options, "harness_ext.cli.models:run"),
    "plugins": Command("list registered plugins and where they come from", plugins_options,
                       "harness_ext.cli.plugins:run"),
    "stalk": Command("classify dataset-pair and model-pair relationships (SimBA phase 1)", stalk_options,
                     "harness_ext.cli.stalk:run"),
    "prowl": Command("select a representative subset and evaluate coverage (SimBA phase 2)", prowl_options,
                     "harness_ext.cli.prowl:run"),
    "compare": Command("compare selectors under the rank-preservation protocol", compare_options, "harness_ext.cli.compare:run"),
    "pounce": Command("evaluate performance predictors (SimBA phase 3, PMF)", pounce_options, "harness_ext.cli.pounce:run"),
    "weights": Command("weighting schemes and ranking-robustness analyses", weights_options, "harness_ext.cli.weights:run"),
    "reduce": Command("build a reduced-benchmark manifest and harness files", reduce_options, "harness_ext.cli.reduce:run"),
    "predict": Command("predict a new model's full-benchmark scores from its subset results", predict_options,
                       "harness_ext.cli.predict:run"),
}


#: Options users carry over from a sibling command, by ``(command, option)``: what this command takes instead. The
#: unknown-option error says it (:func:`harness_ext.cli.unrecognized_message`); an option of another command with
#: no entry here is named as that command's.
SIBLING_OPTIONS = {
    ("prowl", "--budget"): "prowl sizes its subset by coverage: --target 0.95; a subset of a given size is "
                           "reduce --budget N",
    ("compare", "--budget"): "compare tries every subset size from 2 to --k-max",
    ("reduce", "--target"): "reduce takes a coverage target as --budget coverage=0.95",
    ("predict", "--budget"): "the subset is reduce's: predict reads it from --manifest",
    ("predict", "--db"): "predict reads no store: the subset from --manifest, the new model's scores from its "
                         "result files",
    ("predict", "--benchmark"): "predict reads the benchmark from --manifest",
}


def resolve_run(target: str):
    """Import ``"module:function"`` (the numerics of one command are loaded here, not at start-up)."""
    from importlib import import_module

    module, _, func = target.partition(":")
    return getattr(import_module(module), func)

"""The option conventions the subcommands of ``harness-ext`` share, and the matrix their options select.

The one convention for lists (:class:`ListAppend`, :class:`CommaJoin`), the default output folder
(:func:`default_out`), the store, seed and output options, the matrix-selection option group
(:func:`add_matrix_arguments`) and the matrix it describes (:func:`matrix_from_args`), and ``KEY=VALUE``
parameters (:func:`parse_key_values`). Each command's own options and the command table are in
:mod:`harness_ext.cli.options`, which imports these. Like it, this module imports argparse alone at import
time, so ``harness-ext --help`` imports no numerics.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: --help imports no numerics
    import pandas

    from ..store.matrix import MatrixQuery

#: ``harness_ext.store.db.DB_ENV`` and ``DEFAULT_DB_NAME``
DEFAULT_DB_HELP = "store file (default: $HARNESS_EXT_DB or ./harness-ext.duckdb); ':memory:' for a throw-away store"


# -- the one convention for lists --------------------------------------------------------
class ListAppend(argparse.Action):
    """A list option given repeatedly, comma-separated, or both: ``--x a --x b,c`` is ``[a, b, c]``."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, self.dest, None) or [])
        for v in values if isinstance(values, list) else [values]:
            items += [x.strip() for x in str(v).split(",") if x.strip()]
        setattr(namespace, self.dest, items)


class CommaJoin(argparse.Action):
    """A comma-list option that may also be repeated: ``--x a,b --x c`` is ``"a,b,c"``."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = getattr(namespace, "_given_" + self.dest, False)
        prev = getattr(namespace, self.dest, None) if seen else None
        setattr(namespace, self.dest, f"{prev},{values}" if prev else str(values))
        setattr(namespace, "_given_" + self.dest, True)


def default_out(args, command: str) -> str:
    """``harness-ext-out/<benchmark>/<command>``: outputs of different benchmarks never overwrite each other.

    Only the default: an explicit ``--out DIR`` is where the command writes, as given, for every
    command. ``reduce --out reduced`` is the folder ``lm_eval --include_path reduced`` and
    ``predict --manifest reduced`` read, and ``matrix --out`` names a file, so appending
    ``<benchmark>/<command>`` to a path the user chose would break the loop; one rule for all
    commands (a path given is a path used) is the convention.
    """
    import re

    if getattr(args, "prompts", None):
        bench = "prompts"
    elif getattr(args, "samples_task", None):
        bench = f"samples_{args.samples_task}"
    else:
        bench = "+".join(getattr(args, "benchmark", None) or ["all"])
    return f"harness-ext-out/{re.sub(r'[^A-Za-z0-9_.+-]+', '_', bench).strip('.') or 'all'}/{command}"


def require_single_benchmark(store, args) -> None:
    """Refuse to silently pick a benchmark: several in the store and no ``--benchmark`` is an error."""
    from ..errors import HarnessExtError

    if getattr(args, "benchmark", None):
        return
    names = list(store.benchmarks()["benchmark"])
    if len(names) > 1:
        raise HarnessExtError(f"the store holds {len(names)} benchmarks ({', '.join(names[:8])}"
                              f"{' ...' if len(names) > 8 else ''}): name one or more with --benchmark")


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (a count such as shots); anything else is a usage error."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (a number of draws, permutations or rows shown); else a usage error."""
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def add_seed_option(group, what: str = "", dest: str = "seed") -> None:
    """``--seed N`` (with the old ``--random-state``/``--random_state``): the one seed flag of every command
    that draws at random; the same inputs and seed give the same results."""
    group.add_argument("--seed", "--random-state", "--random_state", dest=dest, type=int, default=0, metavar="N",
                       help=f"random seed{' for ' + what if what else ''} (default 0; results depend on it only)")


def add_out_option(group, command: str, what: str) -> None:
    """``--out DIR`` (``--output``, ``-o``): the folder a command writes, used as given; default
    ``harness-ext-out/<benchmark>/<command>`` (filled in by ``main`` with :func:`default_out`)."""
    group.add_argument("--out", "--output", "-o", default=None, metavar="DIR",
                       help=f"{what} (default harness-ext-out/<benchmark>/{command})")


# -- shared option groups ----------------------------------------------------------------
def add_store_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=None, help=DEFAULT_DB_HELP)
    parser.add_argument("--lock-timeout", type=float, default=None, metavar="SECONDS",
                        help="wait this long for another process's lock on the store (default: "
                             "$HARNESS_EXT_LOCK_TIMEOUT or 300)")


def add_matrix_arguments(parser: argparse.ArgumentParser, benchmark_required: bool = True) -> None:
    """The options every analysis command uses to pick its performance matrix (``benchmark_required``: whether
    ``--benchmark`` is needed when the store holds several; ``matrix`` exports them together)."""
    add_store_argument(parser)
    g = parser.add_argument_group("matrix selection")
    g.add_argument("--benchmark", action=ListAppend, default=None,
                   help="benchmark name or glob (repeatable or comma-separated); " + (
                       "required when the store holds several" if benchmark_required else "default: every benchmark"))
    g.add_argument("--metric", default=None, help="metric to use; default: each dataset's primary metric")
    # Repeat-only (no comma split): HELM run names hold commas.
    g.add_argument("--datasets", action="append", default=None,
                   help="glob on dataset names, e.g. 'high_school_*' (repeatable: any of them)")
    g.add_argument("--models", action="append", default=None,
                   help="glob on model names, e.g. 'EleutherAI/pythia-*' (repeatable: any of them)")
    g.add_argument("--exclude-models", action="extend", nargs="+", default=None, metavar="GLOB",
                   help="leave out the models these globs match, after --models (several, or repeated); a model "
                        "is matched on any of its names and left out with all of them, e.g. to hold it out of "
                        "reduce and then predict it")
    g.add_argument("--source", default=None, help="glob on source file paths, e.g. '*v04*'")
    g.add_argument("--num-fewshot", "--num_fewshot", type=non_negative_int, default=None, metavar="K",
                   help="keep only results with this many shots")
    g.add_argument("--dense", nargs="?", const="auto", default=False, choices=["auto", "models", "datasets"],
                   help="drop what is sparse until no cell is missing: the sparser of models/datasets (auto, the "
                        "default when given without a value), only models, or only datasets")
    g.add_argument("--rows", choices=["model", "model_shots", "run"], default="model",
                   help="one row per model (default: each dataset at the shot setting most models ran, or "
                        "--num-fewshot; names of one model merged, see 'harness-ext models'), one per model and "
                        "shot setting, or one per result file")
    g.add_argument("--no-aliases", dest="aliases", action="store_false",
                   help="do not merge model names through the store's alias table ('harness-ext models')")
    g.add_argument("--aggregates", nargs="?", const="include", default=None, choices=["include", "only"],
                   help="aggregate scores (mean win rate, lm-eval groups, 'average' columns) are left out by default; "
                        "include them as columns, or use only them (e.g. as prediction targets)")
    g.add_argument("--chance-file", default=None, metavar="FILE",
                   help="YAML/JSON/CSV of chance levels (fraction of each dataset's scale) used before the built-in "
                        "table (harness_ext.store.scales) for datasets the source gives none")
    g.add_argument(
        "--normalise",
        choices=["chance", "minmax", "none"],
        default="chance",
        help="per-dataset normalisation (docs/guide/ingest.md, 'The matrix'): chance-corrected on each dataset's fixed scale "
             "(default), min-max, or raw",
    )


#: What the matrix's scores are, per ``--normalise``, in a few words (plots' axes, ``matrix``'s shape line).
SCALE_AXIS = {"chance": "normalised per dataset: chance 0, best 1", "minmax": "min-max normalised per dataset",
              "none": "in each dataset's own units"}


def matrix_from_args(args, require_benchmark: bool = True, fingerprint: bool = True, say_dense: bool = True,
                     say_floor: bool = True) -> "pandas.DataFrame":
    """Build the performance matrix the matrix-selection options describe.

    With ``require_benchmark`` (analyses, reduce) a store of several benchmarks needs ``--benchmark``.
    ``fingerprint``: compute ``attrs["fingerprint"]`` (:func:`harness_ext.store.matrix.load_matrix`); commands
    that write and check no manifest pass False and skip its cost. ``say_dense``: warn what ``--dense`` dropped
    and the ``--exclude-models`` globs that matched nothing (``reduce`` passes False: its manifest's warnings say
    them). ``say_floor``: warn how many scores the chance correction floored at chance, which an analysis then
    reads as chance (``matrix`` says it in its own notes; ``reduce`` fits them as they are).
    """
    from ..store.matrix import load_matrix
    from ..store.db import Store
    from ..store.pivot import unmatched_exclude_note

    query = query_from_args(args)
    with Store.open(args.db, read_only=True) as store:
        if require_benchmark:
            require_single_benchmark(store, args)
        df = load_matrix(store, query, fingerprint=fingerprint)
    dropped = df.attrs.get("dropped") or {}
    import logging

    if say_dense and (dropped.get("models") or dropped.get("datasets")):
        from ..methods.reduction.manifest import dense_cut_message

        logging.getLogger("harness_ext.matrix").warning("%s", dense_cut_message(dropped))
    if say_dense and (note := unmatched_exclude_note(df.attrs)):
        logging.getLogger("harness_ext.matrix").warning("%s", note)
    from .aggregate_note import aggregate_only_note, clipped_note

    if note := aggregate_only_note(args, df, query):
        logging.getLogger("harness_ext.matrix").warning("%s", note)
    if say_floor and df.attrs.get("clipped"):
        logging.getLogger("harness_ext.matrix").warning("%s", clipped_note(df, "analysed"))
    return df


def query_from_args(args) -> "MatrixQuery":
    """The :class:`harness_ext.store.matrix.MatrixQuery` the matrix-selection options describe."""
    from ..store.globs import query_globs
    from ..store.matrix import MatrixQuery

    return MatrixQuery(
        benchmarks=tuple(args.benchmark or ()),
        metric=args.metric,
        datasets=query_globs(args.datasets),
        models=query_globs(args.models),
        exclude_models=query_globs(getattr(args, "exclude_models", None)),
        source=args.source,
        num_fewshot=args.num_fewshot,
        dense=args.dense,
        rows=getattr(args, "rows", "model"),
        normalise=args.normalise,
        aggregates={None: False, "include": True, "only": "only"}[getattr(args, "aggregates", None)],
        chance_file=getattr(args, "chance_file", None),
        aliases=getattr(args, "aliases", True),
    )



def parse_key_values(items, option: str) -> dict:
    """``--OPTION KEY=VALUE`` given repeatedly, as a dict; each value read as YAML (``3``, ``true``, ``[a, b]``)."""
    import yaml

    from ..errors import HarnessExtError

    out = {}
    for item in items or ():
        if "=" not in item:
            raise HarnessExtError(f"{option} needs KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = yaml.safe_load(v)
    return out


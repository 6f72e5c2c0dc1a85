"""Hugging Face model cards: the ``model-index`` results in a ``README.md``'s YAML front matter.

A model card states its evaluation results in its metadata (the Hub's model-index specification)::

    ---
    license: apache-2.0
    model-index:
    - name: Seraph-7B
      results:
      - task: {type: text-generation}
        dataset: {name: AI2 Reasoning Challenge (25-Shot), type: ai2_arc, config: ARC-Challenge, split: test,
                  args: {num_few_shot: 25}}
        metrics:
        - {type: acc_norm, value: 67.83, name: normalized accuracy}
        source: {name: Open LLM Leaderboard,
                 url: "https://huggingface.co/spaces/HuggingFaceH4/open_llm_leaderboard?query=Weyaxi/Seraph-7B"}
    ---

Each metric of each result is one score of the entry's model. How it is stored:

* **The Open LLM Leaderboard's cards.** The leaderboard's bot wrote its scores into thousands of cards. The first
  leaderboard's (its address ``HuggingFaceH4/open_llm_leaderboard``) are its six tasks' scores in percent: they are
  stored as its results files are (:mod:`harness_ext.adapters.open_llm_leaderboard`): benchmark
  ``open_llm_leaderboard_v1``, datasets ``arc_challenge``, ``hellaswag``, ``truthfulqa_mc``, ``winogrande``,
  ``gsm8k`` as proportions with the metric the card names, and MMLU's mean over its 57 subjects as dataset
  ``mmlu`` (its results files give the subjects, under benchmark ``mmlu``). The second leaderboard's
  (``open-llm-leaderboard/open_llm_leaderboard``) are the scores it shows, normalised from chance to full marks
  (0 to 100) whatever metric the card names (``acc_norm`` on BBH is not BBH's ``acc_norm``): benchmark
  ``open_llm_leaderboard_v2``, metric ``normalized_score``, chance 0. A card naming the leaderboard without its
  address is read by its datasets' names. The model is the one the address's ``query`` names (``org/model``: a
  converted model's card copies the original's results) when it ends with the entry's name.
* **The model's name.** The entry's ``name``; a card in the Hub's cache (``models--<org>--<name>/snapshots/...``)
  whose entry names ``<name>`` is ``<org>/<name>``.
* **MTEB's cards.** A result named ``MTEB <Task>`` (with `` (<subset>)``) of an MTEB task type is stored as the
  mteb adapter stores that task's result file (:mod:`harness_ext.adapters.mteb`): benchmark ``mteb``, the task's
  main score (the card's ``main_score``, else its type's main metric) as ``main_score``, the subset that adapter
  chooses (the only one, else the default or English one, else the mean of all), the card's percentages as
  proportions, so a card and the task's file meet in one cell. A task listing a metric more than once (old cards
  wrote all of CQADupStack's forums under the first) has no one value and is left out, noted.
* **Any other card** (a speech model's word error rate): benchmark the source's name (``model_index``
  without one), dataset the dataset's name (with its config and split where the card gives one name several),
  metric the metric's type; the first metric of a dataset is its primary one; the scale is read from the value
  and the names, a metric named as an error rate is lower-is-better.

The card of a details dataset the first Open LLM Leaderboard pushed (front matter ``pretty_name: Evaluation run of
<model>``) quotes its latest results file under "Latest results": read as that file is
(:func:`harness_ext.adapters.open_llm_leaderboard.read_doc`). The card lm-eval pushes with a details dataset
(``push_results_to_hub``; the Open LLM Leaderboard v2's ``open-llm-leaderboard/<org>__<model>-details``) quotes its
latest run's ``results`` block: read as that results file is, the groups from the aliases' nesting and the shot counts
of lm-eval's leaderboard tasks inferred and noted, what the card lacks (other shot counts, versions, sizes) not stored
(:mod:`harness_ext.adapters.lm_eval_card`). A quoted block of neither harness's keys is refused, naming the results
file to ingest.

A card whose front matter is not YAML, or whose ``model-index`` is not a list of entries with results, is refused
with the reason. A ``README.md`` that also holds a table lm-eval printed is that table's
(:mod:`harness_ext.adapters.lm_eval_table`).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from harness_ext.errors import IngestError, NotResults
from harness_ext.hookspecs import hookimpl
from harness_ext.report import listed
from harness_ext.store.ingest_read import FRONT_MATTER, details_card, is_printed_table, markdown_file, model_index_card
from harness_ext.types import Adapter, ResultRecord, SourceFile

#: "(25-Shot)", "(0-shot)" after a leaderboard dataset's name.
_SHOTS = re.compile(r"\s*\(\s*\d+\s*-\s*shot\s*\)\s*$", re.I)
V1_BENCHMARK, V2_BENCHMARK = "open_llm_leaderboard_v1", "open_llm_leaderboard_v2"
#: The first leaderboard's datasets by the card's dataset type: (dataset, chance level of its accuracy).
_V1_DATASETS = {"ai2_arc": ("arc_challenge", 0.25), "hellaswag": ("hellaswag", 0.25), "cais/mmlu": ("mmlu", 0.25),
                "truthful_qa": ("truthfulqa_mc", None), "winogrande": ("winogrande", 0.5), "gsm8k": ("gsm8k", None),
                "drop": ("drop", None)}
_V2_NAMES = ("ifeval", "bbh", "math lvl 5", "gpqa", "musr", "mmlu-pro")
_LOWER = re.compile(r"(?:^|[\W_])(?:wer|cer|error|loss|perplexity|ppl)(?:$|[\W_])", re.I)


class EmptyModelIndex(NotResults):
    """A model card whose ``model-index`` lists no results: ``transformers``' Trainer writes one into every card it
    generates, so a folder of downloaded cards holds many; skipped quietly, counted."""

    what = "model cards whose model-index lists no results"


def can_handle(src: SourceFile) -> bool:
    if _oversized_details_card(src):
        return True  # claimed so that read() refuses it with the reason, unread
    return (markdown_file(src) and src.head.lstrip(b"\xef\xbb\xbf").startswith(b"---")
            and (model_index_card(src.bytes) or details_card(src.bytes) is not None) and not is_printed_table(src.bytes))


def _oversized_details_card(src: SourceFile) -> bool:
    """A markdown file over :data:`~harness_ext.store.ingest_read.TABLE_FILE_BYTES` whose first line of front matter
    names a details dataset's card (``pretty_name: Evaluation run of``): its head says what it is, its size that it is
    not read."""
    from harness_ext.store.ingest_read import TABLE_FILE_BYTES, TABLE_SUFFIXES

    if src.is_dir or src.suffix not in TABLE_SUFFIXES or markdown_file(src):
        return False
    head = src.head.lstrip(b"\xef\xbb\xbf")
    try:
        return (head.startswith(b"---") and b"\npretty_name: Evaluation run of " in head[:400]
                and src.path.stat().st_size > TABLE_FILE_BYTES)
    except OSError:
        return False


def _details_records(src: SourceFile) -> list:
    """The results a details dataset's card quotes (:func:`~harness_ext.store.ingest_read.details_card`): the first
    Open LLM Leaderboard's (lighteval's ``harness|<task>|<shots>`` keys) read as its results file is; lm-eval's
    (``metric,filter`` keys) as its results file is, what the card lacks inferred or left out and noted
    (:func:`harness_ext.adapters.lm_eval_card.read_card`); any other block refused, naming the results file."""
    import json

    model, text = details_card(src.bytes)
    if not model:
        raise IngestError(src.path, "a details dataset's card whose title (pretty_name: Evaluation run of <model>) "
                                    "names no model that can be read (empty, or not a YAML string): not read")
    try:
        block = json.loads(text, parse_constant=lambda c: None)
    except (ValueError, RecursionError) as exc:
        raise IngestError(src.path, f"the results this details card quotes are not JSON ({str(exc)[:200]})") from None
    if not isinstance(block, dict):
        raise IngestError(src.path, "the results this details card quotes are not an object of tasks")
    if any(isinstance(k, str) and k.startswith("harness|") for k in block):
        from harness_ext.adapters.open_llm_leaderboard import read_doc

        src.note(f"{model}: the first Open LLM Leaderboard's results as this details dataset's card quotes them (its "
                 "latest run), read as its results file")
        return read_doc({"config_general": {"model_name": model}, "results": block}, src)
    from harness_ext.adapters.lm_eval_card import is_lm_eval_block, read_card

    if is_lm_eval_block(block):
        return read_card(src, model, block)
    raise IngestError(src.path, "the results this details card quotes are neither lighteval's (harness|<task>|<shots> "
                                "keys) nor lm-eval's (metric,filter keys): ingest the results_<date>.json file of the "
                                "same dataset repository")


def _front_matter(src: SourceFile) -> dict:
    from harness_ext.safe_input import MAX_DEPTH, _value_problem, _yaml_loader

    text = FRONT_MATTER.match(src.bytes).group(1).decode("utf-8", "replace")
    if _anchored(text):
        raise IngestError(src.path, "the model card's front matter uses YAML anchors or aliases, which model cards "
                                    "do not need; write the values out")
    import yaml

    try:
        doc = yaml.load(text, Loader=_yaml_loader())
    except Exception as exc:  # noqa: BLE001 - yaml.YAMLError and the constructors' errors
        raise IngestError(src.path, f"the model card's front matter is not valid YAML: {' '.join(str(exc).split())[:300]}") from None
    problem = _value_problem(doc, MAX_DEPTH) if doc is not None else None
    if problem:
        raise IngestError(src.path, f"the model card's front matter: {problem}")
    if not isinstance(doc, dict) or not isinstance(doc.get("model-index"), list):
        raise IngestError(src.path, "the model card's model-index is not a list of models with their results")
    return doc


def _anchored(text: str) -> bool:
    """Whether YAML ``text`` has an anchor or alias: model cards have none, and an alias bomb expands to billions of
    nodes when walked. Read from the parser's events, which neither expand aliases nor take a ``&`` or ``*`` inside a
    quoted value (``'7*7'``) for one; text that does not parse is left to the loader to refuse with its reason."""
    import yaml

    try:
        for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                return True
    except yaml.YAMLError:
        return False
    return False


def _mapping(value, src, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise IngestError(src.path, f"model-index {where} is {type(value).__name__}, expected a mapping")
    return value


def _leaderboard(source: dict, dataset_names: list):
    """``V1_BENCHMARK``, ``V2_BENCHMARK`` or None: which Open LLM Leaderboard wrote a result (by its address, else
    by the card's dataset names when the source is named as it)."""
    url = str(source.get("url") or "")
    if "HuggingFaceH4/open_llm_leaderboard" in url:
        return V1_BENCHMARK
    if "open-llm-leaderboard/open_llm_leaderboard" in url:
        return V2_BENCHMARK
    if "open llm leaderboard" not in str(source.get("name") or "").lower():
        return None
    names = {_SHOTS.sub("", n).lower() for n in dataset_names}
    return V2_BENCHMARK if names & set(_V2_NAMES) else V1_BENCHMARK


def _model_name(entry: dict, results: list, src) -> str:
    """The entry's name; ``org/<name>`` when the card lies in the Hub's cache folder of that repository
    (``models--<org>--<name>``) or the leaderboard's address queries it."""
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise IngestError(src.path, "a model-index entry has no name (the model its results are of)")
    name = name.strip()
    for part in src.path.parts[::-1]:  # the Hub's cache names the repository: models--<org>--<name>/snapshots/...
        if part.startswith("models--") and part.count("--") == 2 and "/" not in name:
            org, repo = part[len("models--"):].split("--")
            if repo.lower() == name.lower():
                return f"{org}/{repo}"
    for r in results:
        url = str(_mapping(r.get("source"), src, "source").get("url") or "").strip() if isinstance(r, dict) else ""
        query = parse_qs(urlsplit(url).query).get("query", [""])[0].strip()
        if "/" in query and query.rsplit("/", 1)[1].lower() == name.lower():
            return query
    return name


def _number(value, src, where: str) -> float:
    """A metric's value: a number, or a string holding one (some cards quote their values)."""
    import math

    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise IngestError(src.path, f"model-index {where}: value {value!r} is not a finite number")
    return float(value)


def _result_records(src, model: str, r: dict, i: int, board, keys: dict) -> list:
    """The records of one model-index result (one dataset, its metrics)."""
    from harness_ext.store.scales import infer_scale

    dataset = _mapping(r.get("dataset"), src, f"results[{i}].dataset")
    metrics = r.get("metrics")
    if not isinstance(metrics, list) or not metrics:
        raise IngestError(src.path, f"model-index results[{i}] has no list of metrics")
    name = str(dataset.get("name") or dataset.get("type") or "").strip()
    if not name:
        raise IngestError(src.path, f"model-index results[{i}] names no dataset")
    args = _mapping(dataset.get("args"), src, f"results[{i}].dataset.args")
    shots = args.get("num_few_shot", args.get("num_fewshot"))
    shots = int(shots) if isinstance(shots, int) and not isinstance(shots, bool) and shots >= 0 else None
    source = _mapping(r.get("source"), src, f"results[{i}].source")
    out = []
    for k, metric in enumerate(metrics):
        metric = _mapping(metric, src, f"results[{i}].metrics[{k}]")
        mname = str(metric.get("type") or metric.get("name") or "").strip()
        if not mname:
            raise IngestError(src.path, f"model-index results[{i}].metrics[{k}] names no metric")
        value = _number(metric.get("value"), src, f"results[{i}].metrics[{k}] ({name} {mname})")
        common = dict(model=model, num_fewshot=shots, primary=k == 0,
                      dataset_metadata={"card_dataset": name, **({"verified": metric["verified"]}
                                                                  if isinstance(metric.get("verified"), bool) else {})})
        if board == V1_BENCHMARK and str(dataset.get("type")) in _V1_DATASETS:
            ds, chance = _V1_DATASETS[str(dataset.get("type"))]
            out.append(ResultRecord(
                benchmark=V1_BENCHMARK, dataset=ds, metric=mname, value=value / 100.0, scale="proportion",
                min_score=0.0, max_score=1.0, higher_is_better=True,
                random_baseline=chance if mname in ("acc", "acc_norm") else None,
                baseline_source="answer choices" if chance and mname in ("acc", "acc_norm") else None, **common))
        elif board == V2_BENCHMARK:
            out.append(ResultRecord(
                benchmark=V2_BENCHMARK, dataset=_SHOTS.sub("", name), metric="normalized_score", value=value,
                scale="percent", min_score=0.0, max_score=100.0, higher_is_better=True, random_baseline=0.0,
                baseline_source="normalised by the leaderboard", **common))
        else:
            key = keys.get((name, mname), name)
            scale, lo, hi = infer_scale([value], name=key, metric=mname)
            out.append(ResultRecord(
                benchmark=_slug(str(source.get("name") or "")) or "model_index", dataset=key, metric=mname,
                value=value, scale=scale, min_score=lo, max_score=hi,
                higher_is_better=False if _LOWER.search(mname) else None, **common))
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _clashes(results: list) -> set:
    """The ``(dataset name, metric)`` pairs a card gives more than once (a word error rate on ``test-clean`` and
    ``test-other``): stored with the dataset's config and split in its name."""
    seen: dict = {}
    for r in results:
        if isinstance(r, dict) and isinstance(r.get("dataset"), dict) and isinstance(r.get("metrics"), list):
            name = str(r["dataset"].get("name") or r["dataset"].get("type") or "").strip()
            for m in r["metrics"]:
                if isinstance(m, dict):
                    pair = (name, str(m.get("type") or m.get("name") or "").strip())
                    seen[pair] = seen.get(pair, 0) + 1
    return {pair for pair, n in seen.items() if n > 1}


def read(src: SourceFile):
    if _oversized_details_card(src):
        from harness_ext.store.ingest_read import TABLE_FILE_BYTES

        raise IngestError(src.path, f"a details dataset's card of {src.path.stat().st_size / 2**20:.1f} MiB, over the "
                                    f"{TABLE_FILE_BYTES >> 20} MiB a card is read up to: not read (ingest the "
                                    "results_<date>.json file of the same dataset repository)")
    if not model_index_card(src.bytes):
        return _details_records(src)
    doc = _front_matter(src)
    out, boards = [], {}
    for e, entry in enumerate(doc["model-index"]):
        entry = _mapping(entry, src, f"entry {e}")
        results = entry.get("results")
        if not isinstance(results, list):
            raise IngestError(src.path, f"model-index entry {e} has no list of results")
        model = _model_name(entry, results, src)
        clashes = _clashes(results)
        names = [str(_mapping(r, src, f"results[{i}]").get("dataset", {}).get("name") or "")
                 for i, r in enumerate(results) if isinstance(r, dict) and isinstance(r.get("dataset"), dict)]
        mteb, results = _mteb_results(results)
        recs = _mteb_records(src, model, mteb)
        boards.setdefault("mteb", set()).update(x.dataset for x in recs)
        out.extend(recs)
        for i, r in enumerate(results):
            r = _mapping(r, src, f"results[{i}]")
            board = _leaderboard(_mapping(r.get("source"), src, f"results[{i}].source"), names)
            d = _mapping(r.get("dataset"), src, f"results[{i}].dataset")
            name = str(d.get("name") or d.get("type") or "").strip()
            where = " ".join(str(d[k]) for k in ("config", "split") if d.get(k))
            keys = {k: f"{name} ({where})" if where else name for k in clashes if k[0] == name}
            recs = _result_records(src, model, r, i, board, keys)
            boards.setdefault(board, set()).update(x.dataset for x in recs)
            out.extend(recs)
    if not out:  # the Trainer's cards: "model-index: [{name: ..., results: []}]"
        raise EmptyModelIndex(src.path, "a model card whose model-index lists no results (as the Trainer writes it)")
    _notes(src, boards)
    return out


#: An MTEB result as MTEB's model cards name it: ``MTEB <Task>`` and, for a language subset, `` (<subset>)``.
_MTEB_NAME = re.compile(r"^MTEB (\S+)(?: \((.+)\))?$")


def _mteb_results(results: list) -> tuple:
    """``({task: [(subset, {metric: value})]}, the other results)``: the results of MTEB's tasks (a dataset named
    ``MTEB <Task>`` of type ``mteb/...`` or of a task type MTEB defines) apart from the rest."""
    from harness_ext.adapters.mteb import MAIN_METRIC

    mteb, rest = {}, []
    for r in results:
        d = r.get("dataset") if isinstance(r, dict) else None
        t = r.get("task") if isinstance(r, dict) else None
        m = _MTEB_NAME.match(str(d.get("name") or "")) if isinstance(d, dict) else None
        kind = str(t.get("type") or "") if isinstance(t, dict) else ""
        metrics = r.get("metrics") if m else None
        if not m or not (str(d.get("type") or "").startswith("mteb/") or kind in MAIN_METRIC) \
                or not isinstance(metrics, list):
            rest.append(r)
            continue
        types = [str(x.get("type")) for x in metrics if isinstance(x, dict) and x.get("type")]
        values = {str(x.get("type")): x.get("value") for x in metrics if isinstance(x, dict) and x.get("type")}
        # A metric listed twice under one task has no one value (old MTEB cards wrote all of CQADupStack's forums'
        # metrics under the first forum's name): the task is left out, not read from either listing.
        entry = (str(d.get("config") or m.group(2) or "default"), kind, values if len(values) == len(types) else None)
        mteb.setdefault(m.group(1), []).append(entry)
    return mteb, rest


def _mteb_records(src, model: str, mteb: dict) -> list:
    """MTEB's results as :mod:`harness_ext.adapters.mteb` stores a task's result file: benchmark ``mteb``, the task's
    main score (the card's ``main_score``, else its type's main metric) as ``main_score``, its subset chosen as that
    adapter chooses (the only one, else the default or English one, else the mean of all), the card's percentages as
    proportions."""
    from harness_ext.adapters.mteb import _ENGLISH, AGGREGATE_TASKS, MAIN_METRIC, MTEB_BENCHMARK, signed_scale

    out, repeated = [], []
    for task, entries in mteb.items():
        if any(e[2] is None for e in entries):
            repeated.append(task)
            continue
        chosen = entries if len(entries) == 1 else next(
            ([e for e in entries if e[0].lower() == pref][:1] for pref in _ENGLISH if any(e[0].lower() == pref
                                                                                          for e in entries)), entries)
        main_name = "main_score" if "main_score" in chosen[0][2] else MAIN_METRIC.get(chosen[0][1], "").replace(".", "_")
        if main_name not in chosen[0][2]:
            main_name = next(iter(chosen[0][2]), None)
        if main_name is None:
            continue
        metrics = {k: [_number(e[2].get(k), src, f"MTEB {task} ({e[0]}) {k}") / 100.0 for e in chosen]
                   for k in chosen[0][2] if all(k in e[2] for e in chosen)}
        meta = {"harness": "mteb", "subsets": [e[0] for e in chosen], "main_metric": main_name, "card": True}
        common = dict(model=model, benchmark=MTEB_BENCHMARK, dataset=task, task=task, higher_is_better=True,
                      dataset_metadata=meta, aggregate=task in AGGREGATE_TASKS)
        out.append(ResultRecord(metric="main_score", value=sum(metrics[main_name]) / len(chosen), primary=True,
                                **common, **signed_scale(main_name)))
        out.extend(ResultRecord(metric=k, value=sum(v) / len(v), primary=False, **common, **signed_scale(k))
                   for k, v in metrics.items() if k != "main_score")
    if repeated:
        src.note(f"{len(repeated)} MTEB task{'s' * (len(repeated) != 1)} listing a metric more than once left out (no "
                 f"one value; old MTEB cards wrote every CQADupStack forum's metrics under the first): "
                 f"{listed(repeated, 6)}")
    return out


def _notes(src, boards: dict) -> None:
    if boards.get("mteb"):
        src.note(f"{len(boards['mteb'])} MTEB task{'s' * (len(boards['mteb']) != 1)} stored as MTEB's result files "
                 "are (benchmark mteb, the main score as main_score, the default or English subset), the card's "
                 "percentages as proportions")
    if V1_BENCHMARK in boards:
        src.note(f"results from the first Open LLM Leaderboard's card entries ({listed(sorted(boards[V1_BENCHMARK]), 7)}) "
                 f"stored as its results files are, under {V1_BENCHMARK}, as proportions"
                 + ("; mmlu is its mean over MMLU's 57 subjects" if "mmlu" in boards[V1_BENCHMARK] else ""))
    if V2_BENCHMARK in boards:
        src.note(f"the Open LLM Leaderboard v2's card scores ({listed(sorted(boards[V2_BENCHMARK]), 7)}) are the ones it "
                 "shows, normalised between chance and full marks (0 to 100): stored as metric normalized_score, not as "
                 "the metric the card names")


@hookimpl
def harness_ext_adapters():
    yield Adapter(
        name="model_card",
        description="Hugging Face model card README.md: the model-index results of its YAML front matter "
                    "(the Open LLM Leaderboard's entries under its benchmarks)",
        can_handle=can_handle,
        read=read,
        revision="3",  # 3: a quoted "&" or "*" in the front matter is no anchor (2: lm-eval's details cards read)
    )

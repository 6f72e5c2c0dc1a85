"""What a results file's lm-eval task configuration, or a folder received from someone else, could make run or
overwrite: templates that escape lm-eval's unsandboxed Jinja, hang it or fill its memory, metrics and generation
options that load code, prompts changed by the YAML written, task files that replace each other, a link where
predict writes."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from harness_ext.cli import main
from harness_ext.store.task_yaml_safety import safe_task_config, task_yaml_text
from harness_ext.store.template_safety import template_problem
from test_reduced_folder import _write_population

#: Templates that reach the ``os`` module when lm-eval renders them (``getcwd`` stands for any call), each past
#: a search of the text for ``__``: a ``}}`` inside a string, ``\x5f`` escapes, keys built at render time, keys
#: read from the document, a name bound by ``set``, a filter's result, ``str.format``.
ESCAPES = {
    "brace in a string": "{{ '}}' ~ cycler.__init__.__globals__.os.getcwd() }}",
    "escaped underscores": "{{ cycler['\\x5f\\x5finit\\x5f\\x5f']['\\x5f\\x5fglobals\\x5f\\x5f']['os'].getcwd() }}",
    "key built at render": "{% set u = '_' %}{{ cycler[u~u~'init'~u~u][u~u~'globals'~u~u].os.getcwd() }}",
    "keys from the document": "{{ lipsum[g][o].getcwd() }}",
    "set-bound object": "{% set c = cycler %}{{ c[i][g][o].getcwd() }}",
    "filter result": "{{ ((q|groupby('a'))[0])[s][g][r][o].getcwd() }}",
    "object in a literal": "{{ [(q|groupby('a'))[0]][0][s][g][r][o].getcwd() }}",
}
#: The document the templates are rendered with: keys a dataset chosen by the results file's author could hold.
DOC = {"g": "__globals__", "o": "os", "i": "__init__", "q": [{"a": 1}], "s": "__str__", "r": "random"}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_template_escapes_are_not_written(name):
    template = ESCAPES[name]
    kept, dropped = safe_task_config({"doc_to_text": template, "doc_to_target": "{{answer}}"})
    assert kept == {"doc_to_target": "{{answer}}"} and dropped[0]["key"] == "doc_to_text"
    assert "lm-eval renders templates without a sandbox" in dropped[0]["reason"]


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_the_escapes_are_live_in_lm_eval(name):
    """Not vacuous: lm-eval's own renderer reaches ``os`` (``random._os`` for the filter's result) with each."""
    utils = pytest.importorskip("lm_eval.utils")
    doc = {**DOC, "o": "_os"} if "groupby" in ESCAPES[name] else DOC
    assert utils.apply_template(ESCAPES[name], doc).endswith(os.getcwd())


@pytest.mark.parametrize("template, kept", [
    ("{{ question.strip() }}\nA. {{ choices[0] }}\nAnswer:", True), ("{{ choices[answer] }}", True),
    ("{{ ['A', 'B'][label] }}", True), ("{{ 'ABCD'[answerKey|int - 1] }}", True),
    ("{% for i in range(choices['text']|length) %}{{ choices['text'][i] }}{% endfor %}", True),
    ("{{ context.split('[SEP]')[-1] }}", True), ("{{ x|map(attribute='text')|join(', ') }}", True),
    ("Blank: ____", True), ("{{ x.__class__ }}", False), ("{{ x|attr('y') }}", False),
    ("{{ x|map(attribute=k) }}", False), ("{{ '{0.x}'.format(y) }}", False), ("{% include 'a.yaml' %}", False),
    ("{% macro m() %}{% endmacro %}", False), ("{{ loop[k] }}", False), ("{{ x[k](1) }}", False),
    ("{{ unclosed", False)])
def test_template_allow_list(template, kept):
    pytest.importorskip("jinja2")
    assert (template_problem(template) is None) is kept


#: Templates that only read their document yet hang or fill the memory of the run rendering them (lm-eval's plain
#: ``jinja2.Environment`` bounds no range, repetition or loop, and folds ``2 ** 10000000000`` while compiling).
HUNGRY = {
    "range to list": "{{ range(10**10)|list }}",
    "range of a literal": "{{ range(10000000000)|list }}",
    "text times a power": "{{ 'a' * 10**10 }}",
    "power tower": "{{ 9**9**9 }}",  # Jinja reads (9**9)**9, 78 digits: refused anyway, as every '**'
    "huge power": "{{ 2 ** 10000000000 }}",  # Jinja computes it while compiling: still running after 30 s
    "loops in loops": "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
    "field times a literal": "{{ (x ~ x) * 100000000 }}",
    "join on a range": "{{ range(10000000000)|join(',') }}",
    "padding width": "{{ 'x'.ljust(10000000000) }}",
    "center filter": "{{ x|center(10000000000) }}",
    "indent filter": "{{ x|indent(10000000000) }}",
    "batch fill": "{{ [1]|batch(10000000000, 'y')|list }}",
    "number read from text": "{{ 'x'.ljust('10000000000'|int) }}",
    "printf width": "{{ '%0999999999d' % 1 }}",
    "format filter": "{{ '%0999999999d'|format(1) }}",
    "doubling by set": "{% set a = x ~ x %}" + "{% set a = a ~ a %}" * 40 + "{{ a }}",
    "chained replace": "{{ x" + ".replace('', x)" * 12 + " }}",
    "chained join": "{{ x" + "|list|join(x)" * 12 + " }}",
    "many references": "{% set a = '" + "y" * 5000 + "' %}{% for i in range(1000) %}" + "{{a}}" * 2000 + "{% endfor %}",
    "regex backtracking": "{{ y|regex_replace('(a*)*b', '') }}",
    "loops over a field": "{% for a in x %}{% for b in x %}{{ x }}{% endfor %}{% endfor %}",
    "doubling in branches": "{% set a = x %}" + "{% if x %}{% set a = a ~ a %}{% endif %}" * 40 + "{{ a }}",
    "size read from the document": "{{ x * n }}",
    "range of a document number": "{% for i in range(n|int) %}{{ x }}{% endfor %}",
    "long wrap string": "{{ x|wordwrap(1, wrapstring='" + "w" * 5000 + "') }}",
    "json indent": "{{ q|tojson(indent=100000) }}",
    "list printed into itself": "{{ x" + "|list|string" * 20 + " }}",
    "repr of a repr": "{% set a = [x]|string %}" + "{% set a = [a]|string %}" * 40 + "{{ a }}",
    "escaped again": "{{ x" + "|forceescape" * 15 + " }}",
    "loops seven deep": "{% for a in [1, 2] %}" * 7 + "{{ x }}" + "{% endfor %}" * 7,
}


@pytest.mark.parametrize("name", sorted(HUNGRY))
def test_templates_that_hang_or_fill_the_memory_are_not_written(name):
    pytest.importorskip("jinja2")
    kept, dropped = safe_task_config({"doc_to_text": HUNGRY[name], "doc_to_target": "{{answer}}"})
    assert kept == {"doc_to_target": "{{answer}}"} and dropped[0]["key"] == "doc_to_text"
    assert dropped[0]["reason"].startswith("doc_to_text is a template that ")


def test_the_hungry_templates_fill_lm_eval_s_memory():
    """Not vacuous: lm-eval's own renderer runs out of memory on them (capped at 2 GiB here, in a child process)."""
    pytest.importorskip("lm_eval.utils")
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("the child's memory cap (RLIMIT_AS) is enforced on Linux")

    names = ["field times a literal", "padding width", "indent filter", "number read from text", "chained replace",
             "text times a power"]
    child = ("import json, resource, sys\n"
             "resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))\n"
             "from lm_eval.utils import apply_template\n"
             "for t in json.loads(sys.stdin.read()):\n"
             "    try:\n"
             "        print(len(apply_template(t, {'x': 'ab' * 20})))\n"
             "    except MemoryError:\n"
             "        print('MemoryError')\n")
    done = subprocess.run([sys.executable, "-c", child], input=json.dumps([HUNGRY[n] for n in names]),
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["MemoryError"] * len(names), done.stderr[-500:]


@pytest.mark.parametrize("template", ["{{ x" + "|list" * 3000 + " }}", "{{ x" + "[0]" * 3000 + " }}"])
def test_a_template_nested_too_deeply_is_left_out_not_a_crash(template):
    """Jinja's parser reads a long chain of filters or keys; the check raised RecursionError through reduce."""
    pytest.importorskip("jinja2")
    assert "too deeply" in template_problem(template)


@pytest.mark.parametrize("template", [
    "{% for c in choices %}{{ loop.index }}. {{ c }}\n{% endfor %}", "{{ '-' * 20 }}\n{{ question }}",
    "{{ x * 2 }}", "{% for c in choices %}{{ 'odd' if loop.index % 2 else 'even' }}{% endfor %}",
    "{{ choices|map('upper')|join(', ') }}",
    "{{ question.replace('<...>', answer) }}", "{{ range(10)|list }}",
    "{% set q = question.strip() %}{{ q }} {{ q|length }}", "{{ '%d'|length }}",
    "{% for group in choices %}{% for opt in group %}{{ loop.index }}. {{ opt }}\n{% endfor %}{% endfor %}",
    "{{ passage|indent(4) }}"])
def test_ordinary_templates_are_still_kept(template):
    pytest.importorskip("jinja2")
    assert template_problem(template) is None


def _lm_eval_task_docs(pattern: str, must_hold: str = ""):
    """``(path, document)`` of every YAML file of the installed lm-eval's tasks matching ``pattern`` (with
    ``must_hold`` in its text), its ``!function`` tags read as None."""
    lm_eval = pytest.importorskip("lm_eval")
    from pathlib import Path

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    for p in (Path(lm_eval.__file__).parent / "tasks").rglob(pattern):
        if p.suffix == ".py" or not p.is_file():
            continue
        try:
            text = p.read_text(encoding="utf-8")
            if must_hold in text:
                yield p, yaml.load(text, Loader=Loader)
        except (yaml.YAMLError, UnicodeDecodeError):
            continue


@pytest.mark.slow
def test_every_template_of_lm_eval_s_own_tasks_is_kept():
    """The allow-list keeps what real tasks use: every template in the installed lm-eval's task YAMLs."""
    def strings(v):
        if isinstance(v, str):
            yield v
        elif isinstance(v, (dict, list)):
            for x in (v.values() if isinstance(v, dict) else v):
                yield from strings(x)

    templates = set()
    for _, doc in _lm_eval_task_docs("*.yaml"):
        templates.update(s for s in strings(doc) if "{{" in s or "{%" in s)
    assert len(templates) > 1000
    refused = {t: template_problem(t) for t in templates if template_problem(t)}
    assert refused == {}


def test_metrics_that_name_a_script_are_not_written(monkeypatch):
    """lm-eval hands a metric it does not know to ``evaluate.load``, which runs that metric's script."""
    cases = {"user/evil_metric": False, "./metrics/m.py": False, "m.py": False, "C:\\m": False, "~/m": False,
             "acc": True, "r@1": True, "acc_definició": True, "bleu": True}
    for name, kept in cases.items():
        out, dropped = safe_task_config({"metric_list": [{"metric": "acc"}, {"metric": name, "hf_evaluate": True}]})
        assert ("metric_list" in out) is kept, name
        assert kept or "evaluate.load" in dropped[0]["reason"]
    registry = pytest.importorskip("lm_eval.api.registry")
    evaluate = pytest.importorskip("evaluate")
    loaded = []
    monkeypatch.setattr(evaluate, "load", lambda name, *a, **k: loaded.append(name))
    registry.get_metric("user/evil_metric")
    assert loaded == ["user/evil_metric"]


def test_generation_and_dataset_options_that_load_code_or_credentials_are_not_written():
    cfg = {"generation_kwargs": {"until": ["\n"], "do_sample": False, "custom_generate": "user/evil",
                                 "trust_remote_code": True},
           "dataset_kwargs": {"revision": "main", "storage_options": {"hf": {"endpoint": "https://example.org"}},
                              "token": "hf_x"}}
    kept, dropped = safe_task_config(cfg)
    assert kept == {"generation_kwargs": {"until": ["\n"], "do_sample": False}, "dataset_kwargs": {"revision": "main"}}
    assert sorted(d["key"] for d in dropped) == ["dataset_kwargs.storage_options", "dataset_kwargs.token",
                                                 "generation_kwargs.custom_generate",
                                                 "generation_kwargs.trust_remote_code"]
    only = safe_task_config({"generation_kwargs": {"custom_generate": "user/evil"}})
    assert only[0] == {}


#: lm-eval's gsm8k filters, as its results files record them: kept.
GSM8K_FILTERS = [
    {"name": "strict-match", "filter": [{"function": "regex", "regex_pattern": "#### (\\-?[0-9\\.\\,]+)"},
                                        {"function": "take_first"}]},
    {"name": "flexible-extract", "filter": [{"function": "regex", "group_select": -1,
                                             "regex_pattern": "(-?[$0-9.,]{2,})|(-?[0-9]+)"},
                                            {"function": "take_first"}]}]
#: Patterns that take exponential time to fail on an answer that almost matches (star height 2 or more).
SLOW_REGEXES = ["(a+)+$", "(a*)*b", "(?:\\w+\\s?)+$", "([a-z]{1,8}){2,}!", "(x+x+)+y", "((ab)*c?)*d", "(?:(a|b)+)+c"]


@pytest.mark.parametrize("pattern", SLOW_REGEXES)
def test_a_filter_whose_regex_backtracks_exponentially_is_not_written(pattern):
    hostile = {"name": "strict-match", "filter": [{"function": "regex", "regex_pattern": pattern},
                                                  {"function": "take_first"}]}
    kept, dropped = safe_task_config({"filter_list": [hostile, GSM8K_FILTERS[1]]})
    assert kept == {"filter_list": [GSM8K_FILTERS[1]]}
    assert [d["key"] for d in dropped] == ["filter_list"] and "'strict-match' is left out" in dropped[0]["reason"]
    assert "star height" in dropped[0]["reason"]
    # The choice filter's regexes_to_ignore and exact_match's are compiled and run on every answer too.
    ignore = {"name": "x", "filter": [{"function": "multi_choice_regex", "regex_pattern": "([A-D])",
                                       "regexes_to_ignore": [",", pattern]}]}
    assert safe_task_config({"filter_list": [ignore]}) == ({}, [{"key": "filter_list", "reason": safe_task_config(
        {"filter_list": [ignore]})[1][0]["reason"]}])
    kept, dropped = safe_task_config({"metric_list": [{"metric": "exact_match", "regexes_to_ignore": [pattern]}]})
    assert kept == {} and "star height" in dropped[0]["reason"]


@pytest.mark.parametrize("pattern", ["(", "a[", "a" * 3000])
def test_a_filter_regex_python_cannot_read_is_not_written(pattern):
    hostile = {"name": "bad", "filter": [{"function": "regex", "regex_pattern": pattern}]}
    kept, dropped = safe_task_config({"filter_list": [hostile]})
    assert kept == {} and dropped[0]["key"] == "filter_list"


def test_real_filters_are_kept():
    cfg = {"filter_list": GSM8K_FILTERS, "metric_list": [
        {"metric": "exact_match", "ignore_case": True, "regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"]}]}
    assert safe_task_config(cfg) == (cfg, [])


@pytest.mark.slow
def test_the_nested_repeat_hangs_lm_eval_s_regex_filter():
    """Not vacuous: lm-eval's own regex filter spends time doubling with each character of a crafted answer."""
    import time

    extraction = pytest.importorskip("lm_eval.filters.extraction")

    def seconds(pattern, n):
        f = extraction.RegexFilter(regex_pattern=pattern)
        start = time.perf_counter()
        f.apply([["a" * n + "!"]], [{}])
        return time.perf_counter() - start

    slow = seconds("(a+)+$", 22)
    assert slow > 20 * max(seconds("(a+)$", 22), 1e-4) and slow > 0.02


@pytest.mark.slow
def test_every_filter_of_lm_eval_s_own_tasks_is_kept():
    """The rule costs lm-eval's own tasks nothing: gsm8k's, bbh's and every other filter (templates included)."""
    lists, names = [], set()
    for p, doc in _lm_eval_task_docs("*", must_hold="regex_pattern"):
        if isinstance(doc, dict) and isinstance(doc.get("filter_list"), list):
            lists.append((p, doc["filter_list"]))
            names.update(p.parts)
    # The leaderboard's tasks score answers in Python (process_results), with no filter_list.
    assert len(lists) > 100 and {"gsm8k", "bbh"} <= names
    refused = [(p.name, d["reason"]) for p, fl in lists for d in safe_task_config({"filter_list": fl})[1]]
    assert refused == []


@pytest.mark.parametrize("text", ["x\x85task: other", "a\u2028b: c", "p\x85  include: y", "é\x85"])
def test_a_prompt_reads_back_unchanged(tmp_path, text):
    """PyYAML writes U+0085 raw with allow_unicode and reads it back as a line break: the prompt changed."""
    written = task_yaml_text("t\x85", {"config": {"doc_to_text": text, "description": "é"}, "source": "f"}, tmp_path)
    assert yaml.safe_load(written) == {"task": "t\x85", "doc_to_text": text, "description": "é"}


@pytest.mark.slow
def test_hostile_configs_through_reduce(tmp_path, capsys):
    """Through the command line: none of the above reaches the folder, and lm-eval still loads each task."""
    pop = _write_population(tmp_path / "pop")
    for f in pop.rglob("results_*.json"):
        doc = json.loads(f.read_text())
        for cfg in doc["configs"].values():
            cfg.update(doc_to_text=ESCAPES["brace in a string"], doc_to_choice=ESCAPES["escaped underscores"],
                       doc_to_target=HUNGRY["field times a literal"],
                       metric_list=[{"metric": "user/evil_metric"}], dataset_path="json",
                       generation_kwargs={"until": ["\n"], "custom_generate": "user/evil"},
                       filter_list=[{"name": "evil-match", "filter": [{"function": "regex",
                                                                       "regex_pattern": SLOW_REGEXES[0]}]},
                                    GSM8K_FILTERS[0]])
            cfg["dataset_kwargs"] = {"data_files": {"test": "data/test.jsonl"}, "storage_options": {"a": "b"}}
        f.write_text(json.dumps(doc))
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(out)]) == 0
    assert "task YAMLs written from results files" in "".join(capsys.readouterr())
    written = sorted(out.glob("my_task_*.yaml"))
    assert len(written) == 2
    for p in written:
        raw = p.read_text()
        doc = yaml.safe_load(raw)
        body = yaml.safe_dump(doc)  # the comments name what was left out; the task holds none of it
        assert "cycler" not in body and "evil" not in body and "storage_options" not in body
        assert "metric_list[0] names the metric 'user/evil_metric'" in raw
        # A relative data file is read from the folder lm_eval runs in (tests/test_hostile_data_paths.py).
        assert "dataset_kwargs" not in doc and "dataset_kwargs.data_files: it is a local path relative" in raw
        assert doc["generation_kwargs"] == {"until": ["\n"]}
        assert doc["filter_list"] == GSM8K_FILTERS[:1] and "filter_list: the filter 'evil-match' is left out" in raw
        assert {"doc_to_text", "doc_to_choice", "doc_to_target", "metric_list"}.isdisjoint(doc)
        assert "doc_to_target is a template that can repeat a document field's text" in raw
    tasks = pytest.importorskip("lm_eval.tasks")
    tm = tasks.TaskManager(include_path=str(out), include_defaults=False)
    assert sorted(tm.all_subtasks) == sorted(p.stem for p in written)


def test_task_files_differing_only_in_case_do_not_replace_each_other(tmp_path):
    """On macOS and Windows 'MyTask.yaml' is 'mytask.yaml': two tasks (or a task and the group) shared one file."""
    from harness_ext.methods.reduction.lm_eval_group import _task_file_stem

    taken = {"harness_ext_reduced"}
    stems = [_task_file_stem(t, taken) for t in ("mytask", "MyTask", "Harness_Ext_Reduced", "my/task", "my_task")]
    assert len({s.casefold() for s in stems} | {"harness_ext_reduced"}) == len(stems) + 1


@pytest.mark.slow
def test_predict_replaces_a_link_beside_the_results_instead_of_writing_through_it(tmp_path, capsys):
    """A results folder from elsewhere holding a link named like predict's file: the link's target was overwritten."""
    pop = _write_population(tmp_path / "pop", n_models=10)
    new = _write_population(tmp_path / "new", n_models=1, seed=7)
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(out)]) == 0
    [f] = new.rglob("results_*.json")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = f.parent / "harness_ext_prediction_harness_ext_reduced.json"
    link.symlink_to(victim)
    eee = tmp_path / "eee"
    eee.mkdir()
    (eee / "org__m0.json").symlink_to(victim)  # an Every Eval Ever record of the new model org/m0
    assert main(["predict", "-m", str(out), str(new), "--eee", str(eee)]) == 0
    assert victim.read_text() == "keep me\n"
    assert not link.is_symlink() and "harness_ext_prediction" in json.loads(link.read_text())
    assert not (eee / "org__m0.json").is_symlink() and json.loads((eee / "org__m0.json").read_text())["model_info"]
    assert [p.name for p in f.parent.iterdir() if p.name.endswith(".tmp")] == []
    capsys.readouterr()


@pytest.mark.slow
def test_a_manifest_read_from_a_file_cannot_widen_local_data(tmp_path, capsys):
    """A received manifest naming '/' as the user's own data, written again from Python: its absolute paths were kept."""
    from harness_ext.methods.reduction.manifest import load_manifest
    from harness_ext.methods.reduction.reduce import ReduceResult

    pop = _write_population(tmp_path / "pop")
    db, out = tmp_path / "s.duckdb", tmp_path / "reduced"
    assert main(["ingest", "--db", str(db), str(pop)]) == 0
    assert main(["reduce", "--db", str(db), "--budget", "2", "--n-random", "20", "--out", str(out)]) == 0
    doc = json.loads((out / "manifest.json").read_text())
    for entry in doc["lm_eval_tasks"].values():
        entry["config"]["dataset_kwargs"] = {"data_files": {"test": "/etc/passwd"}}
        entry["local_data"] = ["/"]
    (out / "manifest.json").write_text(json.dumps(doc))
    again = tmp_path / "again"
    ReduceResult(load_manifest(out)).write(again, ["lm_eval_yaml"])
    written = sorted(again.glob("my_task_*.yaml"))
    assert len(written) == 2
    for p in written:
        assert "dataset_kwargs" not in yaml.safe_load(p.read_text()) and "dataset_kwargs.data_files" in p.read_text()
    capsys.readouterr()


@pytest.mark.parametrize("subject, kept", [("anatomy", True), ("anatomy,eval_split=train", False),
                                           ("x:y", False), ("a=b", False), ("high school", True)])
def test_an_mmlu_subject_cannot_add_helm_run_arguments(subject, kept):
    """HELM reads 'mmlu:subject=anatomy,eval_split=train,...' as two arguments: the results file chose the run."""
    from harness_ext.methods.reduction.harness_names import helm_description_list

    descs = helm_description_list({"benchmark": "mmlu", "name": subject})
    assert descs == ([f"mmlu:subject={subject},model=text,data_augmentation=canonical"] if kept else [])


def test_without_jinja_a_template_is_left_out_saying_why(monkeypatch):
    """A template that cannot be parsed cannot be checked: left out (and named), never kept on trust."""
    import sys

    monkeypatch.setitem(sys.modules, "jinja2", None)
    assert "Jinja is not installed" in template_problem("{{ question }}")
    assert template_problem("Question: ____ (no template)") is None

"""lm-eval's printed results tables saved as markdown (adapters/lm_eval_table.py).

Real tables: ``fixtures/lm_eval_tables`` (a v0.4 table with MMLU's nested groups and a Groups table; a README
excerpt with three v0.3 runs and seven v0.4.0 runs of two models) and ``fixtures/lm_eval_printed`` (PROVENANCE.md in
each). The same-run check renders the real v0.4 JSON files of the shared data with lm-eval's own ``make_table``. The
tests of percent tables, ``N/A`` stderrs, numpy reprs, broken tables and tables without a header line use small
tables written here (composed, said at each): real files with those defects were not found.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from harness_ext.cli import main
from harness_ext.errors import IngestError
from harness_ext.plugin_manager import get_registrations
from harness_ext.store.ingest import detect_adapter, read_source
from harness_ext.types import SourceFile

from conftest import LM_EVAL, require

FIX = Path(__file__).parent / "fixtures" / "lm_eval_tables"
QWEN = FIX / "qwen1.5-moe-a2.7b.md"
RUNS = FIX / "llama2-7b-chat-runs.md"
HEAD4 = "hf (pretrained=org/model), gen_kwargs: (None), limit: None, num_fewshot: None, batch_size: 8\n"
TABLE4 = ("|Tasks|Version|Filter|n-shot|Metric|   |Value |   |Stderr|\n"
          "|-----|------:|------|-----:|------|---|-----:|---|-----:|\n")


def _read(path: Path):
    ads = get_registrations("adapters")
    src = SourceFile(path)
    adapter = detect_adapter(src, ads)
    return adapter.name, read_source(src, adapter), src


def _by_key(records) -> dict:
    return {(r.model, r.benchmark, r.dataset, r.metric, r.aggregate): r for r in records}


def _write(tmp_path: Path, text: str, name: str = "results.md") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_v04_table_with_nested_groups_reads_as_the_json_names_it():
    name, recs, src = _read(QWEN)
    assert name == "lm_eval_table"
    got = _by_key(recs)
    m = "Qwen/Qwen1.5-MoE-A2.7B"
    assert got[(m, "mmlu", "formal_logic", "acc", False)].value == pytest.approx(0.3175)
    assert got[(m, "mmlu", "formal_logic", "acc", False)].stderr == pytest.approx(0.0416)
    assert got[(m, "mmlu", "formal_logic", "acc", False)].num_fewshot == 0
    assert got[(m, "mmlu", "mmlu_social_sciences", "acc", True)].value == pytest.approx(0.7023)  # " - social sciences"
    assert got[(m, "mmlu", "mmlu", "acc", True)].value == pytest.approx(0.6153)
    assert got[(m, "lm_eval", "arc_challenge", "acc_norm", False)].value == pytest.approx(0.4390)
    assert sum(1 for k in got if k[1] == "mmlu" and not k[4]) == 57
    assert len(recs) == 67  # 57 subjects, 5 groups, arc x2 metrics x2, winogrande: the Groups table repeats, not adds
    notes = " ".join(src.take_notes())
    assert "--limit 1000.0" in notes


def test_v03_and_several_models_in_one_file():
    _, recs, src = _read(RUNS)
    got = _by_key(recs)
    llama, gptq = "meta-llama/Llama-2-7b-chat-hf", "TheBloke/Llama-2-7B-Chat-GPTQ"
    assert {r.model for r in recs} == {llama, gptq}
    assert got[(llama, "lm_eval", "truthfulqa_mc", "mc2", False)].value == pytest.approx(0.4531)  # v0.3
    assert got[(llama, "lm_eval", "winogrande", "acc", False)].num_fewshot == 5  # from the header line
    assert got[(gptq, "lm_eval", "gsm8k", "exact_match,get-answer", False)].value == pytest.approx(0.1524)
    assert got[(gptq, "lm_eval", "hellaswag", "acc_norm", False)].num_fewshot == 10
    # A v0.4.0 run that printed only its Groups table: the groups are aggregates, " - social_sciences" MMLU's.
    assert got[(gptq, "mmlu", "mmlu_social_sciences", "acc", True)].value == pytest.approx(0.5018)
    assert got[(gptq, "mmlu", "mmlu", "acc", True)].num_fewshot == 0


@pytest.mark.slow
def test_a_table_gives_what_the_same_runs_json_gives(tmp_path):
    """Every real v0.4 JSON of the shared data, printed by lm-eval's own make_table (as ``lm_eval`` prints it at the
    end of the run), reads as the JSON reads: the same names, values to the table's four digits, directions, shot
    counts and primary metrics."""
    pytest.importorskip("pytablewriter")
    make_table = pytest.importorskip("lm_eval.utils").make_table
    root = require(LM_EVAL / "v04_results_from_pull_refs" / "results")
    compared = 0
    for f, want, doc in _json_runs(root, "lm_eval_v04"):
        cfg = doc["config"]
        text = (f"{cfg.get('model')} ({cfg.get('model_args')}), gen_kwargs: (None), limit: None, "
                f"num_fewshot: {cfg.get('num_fewshot')}, batch_size: 1\n" + make_table(doc))
        if doc.get("groups"):
            text += "\n" + make_table(doc, "groups")
        table = Path(f).stem.replace(":", "_") + ".md"
        got = _by_key(_read(_write(_beside(tmp_path, f), text, table))[1])
        assert set(got) == set(want), f
        for k, r in want.items():
            t = got[k]
            assert abs(t.value - r.value) <= 5e-5, (f, k)
            assert (t.stderr is None) == (r.stderr is None), (f, k)
            assert (t.higher_is_better, t.num_fewshot, t.primary) == (r.higher_is_better, r.num_fewshot, r.primary), (f, k)
        compared += 1
    assert compared >= 20, compared


def _json_runs(root: Path, adapter_name: str):
    """Each results JSON under ``root`` that ``adapter_name`` reads: its path, its records by key, its document."""
    ads = get_registrations("adapters")
    for f in sorted(glob.glob(str(root / "**" / "*.json"), recursive=True)):
        src = SourceFile(Path(f))
        try:
            adapter = detect_adapter(src, ads)
            if adapter.name != adapter_name:
                continue
            want = _by_key(read_source(src, adapter))
        except IngestError:
            continue
        yield f, want, json.loads(Path(f).read_text(encoding="utf-8"))


def _beside(tmp_path: Path, f: str) -> Path:
    """A folder named as the JSON's own: a run of a local checkpoint (``pretrained=/x/7B``) is named after it."""
    d = tmp_path / Path(f).parent.name
    d.mkdir(exist_ok=True)
    return d


def _v03_table(doc: dict) -> str:
    """A v0.3 results document as lm-eval 0.3's ``make_table`` printed it (its rows reproduced here: the installed
    lm-eval is 0.4): ``|Task|Version|Metric|Value| |Stderr|``, each value and stderr as ``%.4f``."""
    cfg = doc["config"]
    lines = [f"{cfg.get('model')} ({cfg.get('model_args')}), limit: {cfg.get('limit')}, provide_description: False, "
             f"num_fewshot: {cfg.get('num_fewshot')}, batch_size: {cfg.get('batch_size')}",
             "|Task|Version|Metric|Value|   |Stderr|", "|----|------:|------|----:|---|-----:|"]
    for task, block in doc["results"].items():
        first = True
        for m, v in block.items():
            if m.endswith("_stderr"):
                continue
            name, ver = (task, str(doc["versions"][task])) if first else ("", "")
            se = block.get(f"{m}_stderr")
            lines.append(f"|{name}|{ver}|{m}|{v:.4f}|" + (f"±|{se:.4f}|" if se is not None else "||"))
            first = False
    return "\n".join(lines) + "\n"


def test_a_v03_table_gives_what_the_same_runs_json_gives(tmp_path):
    """The shared v0.3 JSON files of lm-eval's own results folder, printed as lm-eval 0.3 printed them (see
    :func:`_v03_table`), read as the JSON reads."""
    root = require(LM_EVAL / "v03_results_master_2023-07-31" / "results")
    compared = 0
    for f, want, doc in _json_runs(root, "lm_eval_v03"):
        if not all(isinstance(v, float) for b in doc["results"].values() for v in b.values()):
            continue
        got = _by_key(_read(_write(_beside(tmp_path, f), _v03_table(doc), Path(f).stem + ".md"))[1])
        assert set(got) == set(want), f
        for k, r in want.items():
            assert abs(got[k].value - r.value) <= 5e-5 * max(1.0, abs(r.value)), (f, k)
            assert (got[k].higher_is_better, got[k].num_fewshot, got[k].primary) == (
                r.higher_is_better, r.num_fewshot, r.primary), (f, k)
        compared += 1
    assert compared >= 10, compared


def test_na_stderr_and_numpy_values(tmp_path):
    """Composed: a row with ``N/A`` stderr (lm-eval prints it for a group whose tasks' sizes it lacks) and a value
    printed as a numpy repr (``np.float64(...)``, as some lm-eval versions print a numpy scalar)."""
    p = _write(tmp_path, HEAD4 + TABLE4 + "|boolq|      2|none  |     0|acc   |↑  |np.float64(0.778)|±  |   N/A|\n"
               "|piqa |      1|none  |     0|acc   |↑  |0.7000|±  |np.float64(0.0107)|\n")
    got = _by_key(_read(p)[1])
    assert got[("org/model", "lm_eval", "boolq", "acc", False)].value == pytest.approx(0.778)
    assert got[("org/model", "lm_eval", "boolq", "acc", False)].stderr is None
    assert got[("org/model", "lm_eval", "piqa", "acc", False)].stderr == pytest.approx(0.0107)


def test_a_table_printed_in_percent_is_divided_with_a_note(tmp_path):
    """Composed: a table whose proportions are printed 0-100 (a hand-edited or rescaled copy); perplexity is not."""
    p = _write(tmp_path, HEAD4 + TABLE4 + "|lambada_openai|1|none|0|acc|↑|35.40|±|0.67|\n"
               "|              | |none|0|perplexity|↓|28.68|±|1.08|\n")
    _, recs, src = _read(p)
    got = _by_key(recs)
    assert got[("org/model", "lm_eval", "lambada_openai", "acc", False)].value == pytest.approx(0.354)
    assert got[("org/model", "lm_eval", "lambada_openai", "acc", False)].stderr == pytest.approx(0.0067)
    assert got[("org/model", "lm_eval", "lambada_openai", "perplexity", False)].value == pytest.approx(28.68)
    assert got[("org/model", "lm_eval", "lambada_openai", "perplexity", False)].higher_is_better is False
    assert any("printed in percent" in n for n in src.take_notes())


def test_unreadable_rows_counted_and_tables_without_a_header_left_out(tmp_path):
    """Composed: a row with a cell missing, a value that is no number, and a second table under one header line."""
    p = _write(tmp_path, HEAD4 + TABLE4 + "|boolq|2|none|0|acc|↑|0.7780|±|0.0073|\n|piqa|1|none|0|acc|↑|0.7|\n"
               "|copa|1|none|0|acc|↑|high|±|0.01|\n\nsome words\n\n" + TABLE4 + "|rte|1|none|0|acc|↑|0.6|±|0.02|\n")
    _, recs, src = _read(p)
    assert {r.dataset for r in recs} == {"boolq"}
    notes = " ".join(src.take_notes())
    assert "2 table rows unreadable" in notes and "1 table without the line lm-eval prints" in notes


def test_a_header_with_a_broken_table_is_one_error(tmp_path):
    """Composed (hostile): the header line and a table header, then rows that are not rows: one error naming the
    file and why, nothing stored."""
    p = _write(tmp_path, HEAD4 + TABLE4 + "|boolq|2|none|\n|piqa|x|y|z|w|v|u|t|s|r|q|\n")
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(p)]) != 0
    with pytest.raises(IngestError, match="no readable result row: 2 table rows unreadable"):
        _read(p)


def test_garbage_markdown_is_passed_over_and_tables_ingest(tmp_path, capsys):
    (tmp_path / "README.md").write_text("# notes\n|a|b|\n|-|-|\n|1|2|\nbatch_size: 4\n", encoding="utf-8")
    db = tmp_path.parent / f"{tmp_path.name}.duckdb"  # outside the folder walked
    assert main(["ingest", "--db", str(db), str(tmp_path)]) != 0  # nothing but the README: passed over
    assert "1 file passed over by its suffix (.md 1)" in capsys.readouterr().err
    (tmp_path / "results.md").write_text(QWEN.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["ingest", "--db", str(db), str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 file ingested (67 results)" in out


def test_reingest_is_idempotent(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(FIX)]) == 0
    capsys.readouterr()
    assert main(["ingest", "--db", str(db), str(FIX)]) == 0
    out = capsys.readouterr().out
    assert "0 files ingested" in out and "2 unchanged" in out


def test_large_markdown_passed_over_unread(tmp_path, monkeypatch):
    from harness_ext.store import ingest_read

    monkeypatch.setattr(ingest_read, "TABLE_FILE_BYTES", 100)
    big = _write(tmp_path, HEAD4 + TABLE4 + "|boolq|2|none|0|acc|↑|0.7780|±|0.0073|\n")
    entry = next(e for e in __import__("os").scandir(tmp_path) if e.name == big.name)
    assert not ingest_read.printed_table_file(entry)


def test_hostile_header_lines_cost_one_pass(tmp_path):
    """Composed (hostile): a header line of repeated ``"), gen_kwargs: ("`` (the header patterns' lazy groups would
    cost the square of its length) and a 4 MiB line of keywords: refused or passed over at once."""
    import time

    from harness_ext.store.ingest_read import is_printed_table

    long_line = "hf (" + "), gen_kwargs: (" * 200_000 + " batch_size: 1\n" + TABLE4 + "|boolq|2|none|0|acc|↑|0.7|±|0.01|\n"
    t0 = time.perf_counter()
    assert is_printed_table(long_line.encode())
    with pytest.raises(IngestError, match="no readable result row"):
        _read(_write(tmp_path, long_line))
    assert not is_printed_table(("x (" + "), gen_kwargs: (batch_size:" * 150_000).encode())
    assert time.perf_counter() - t0 < 5


def test_subject_aliases_without_their_group_are_kept_as_printed(tmp_path):
    """Composed after a real README's layout (lm-eval 0.4.0 run on single MMLU subjects printed them by alias with no
    ``mmlu`` row above): ``anatomy`` could be another family's subject too, so it is kept, with a note."""
    p = _write(tmp_path, HEAD4 + TABLE4 + "|anatomy|Yaml|none|5|acc|↑|0.4222|±|0.0427|\n")
    _, recs, src = _read(p)
    assert [(r.benchmark, r.dataset) for r in recs] == [("lm_eval", "anatomy")]
    assert any("named as MMLU subjects without lm-eval's mmlu group" in n for n in src.take_notes())


# lm-eval's results README layout: fixtures/lm_eval_results_readme (real, MIT; PROVENANCE.md there).
README_DIR = Path(__file__).parent / "fixtures" / "lm_eval_results_readme" / "bloom-560m"
README = README_DIR / "README.md"


def _readme_alone(tmp_path: Path, text: str = None, folder: str = "bloom-560m") -> Path:
    d = tmp_path / folder
    d.mkdir(parents=True)
    return _write(d, README.read_text(encoding="utf-8") if text is None else text, "README.md")


def _json_records(path: Path) -> dict:
    """The records the JSON reader gives for ``path``, by (dataset, metric, shots)."""
    name, recs, _ = _read(path)
    assert name == "lm_eval_v03"
    return {(r.dataset, r.metric, r.num_fewshot): r for r in recs}


def test_results_readme_alone_reads_as_its_json_files(tmp_path):
    """The real README with no JSON beside it: claimed by its '## <run>.json' headings and v0.3 headers alone,
    the model named by its heading (noted), every value divided back by 100 except ppl and SQuAD v2's, and the two
    runs' JSON files read the same values within the printed digits."""
    name, recs, src = _read(_readme_alone(tmp_path))
    assert name == "lm_eval_table"
    assert len(recs) == 110 and {r.model for r in recs} == {"bloom-560m"}
    notes = " ".join(src.take_notes())
    assert "bloom-560m: model name taken from the file's heading" in notes
    got = {(r.dataset, r.metric, r.num_fewshot): r for r in recs}
    want = {**_json_records(README_DIR / "bloom-560m_lambada_openai_0-shot.json"),
            **_json_records(README_DIR / "bloom-560m_question_answering_0-shot.json")}
    assert len(want) == 22
    for k, r in want.items():
        tol = 0.0051 if k[1] == "ppl" or k[0] == "squad2" else 5.1e-5  # two decimals of the printed scale
        assert abs(got[k].value - r.value) <= tol, k
        assert (got[k].stderr is None) == (r.stderr is None), k
        assert (got[k].higher_is_better, got[k].primary) == (r.higher_is_better, r.primary), k
    assert got[("gsm8k", "acc", 8)].value == pytest.approx(0.0053)  # "## bloom-560m_gsm8k_8-shot.json"
    assert got[("gsm8k", "acc", 5)].value == 0.0  # the mathematical-reasoning run's, 5-shot
    assert got[("mc_taco", "em", 0)].stderr is None


def test_results_readme_in_place_leaves_its_json_runs_to_them(tmp_path, capsys):
    """Read where it sits, beside two of its runs' JSON files: those two tables are left to the JSON files (noted)
    and the other nine are stored under the model the JSON names, so a walk of the folder stores each run once."""
    _, recs, src = _read(README)
    assert len(recs) == 110 - 22 and {r.model for r in recs} == {"bigscience/bloom-560m"}
    notes = " ".join(src.take_notes())
    assert "2 of 11 tables of lm-eval's results README left out" in notes
    assert "model name taken from the JSON file bloom-560m_lambada_openai_0-shot.json beside it" in notes
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(README_DIR)]) == 0
    assert "3 files ingested (110 results)" in capsys.readouterr().out


def test_results_readme_whose_runs_all_sit_beside_it_is_skipped(tmp_path):
    """Every table's JSON beside it (as in lm-eval's own results folder): the README adds nothing and is skipped
    quietly, naming why."""
    from harness_ext.errors import NotResults

    text = README.read_text(encoding="utf-8")
    lambada = text[text.index("## bloom-560m_lambada_openai_0-shot.json"):text.index("## bloom-560m_mathematical")]
    p = _readme_alone(tmp_path, "# bloom-560m\n\n" + lambada)
    (p.parent / "bloom-560m_lambada_openai_0-shot.json").write_bytes(
        (README_DIR / "bloom-560m_lambada_openai_0-shot.json").read_bytes())
    with pytest.raises(NotResults, match="bloom-560m_lambada_openai_0-shot.json\\) sit beside it and are read instead"):
        _read(p)


def test_shared_results_folder_in_place_stores_each_run_once(tmp_path, capsys):
    """lm-eval's own results folder for bloom-560m (shared data): 11 JSON files and the README printed from them.
    The README is skipped quietly, counted as what it is, and the store holds the JSON files' 110 results."""
    from conftest import LM_EVAL_V03

    folder = require(LM_EVAL_V03 / "bloom" / "bloom-560m")
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(folder)]) == 0
    captured = capsys.readouterr()
    assert ("11 files ingested (110 results), 0 unchanged (already in the store), 1 skipped (1 of them copies of "
            "results read from the files beside them)") in captured.out
    assert "warning" not in captured.err


def test_results_readme_without_heading_or_shots_says_so(tmp_path):
    """The real README without its '# bloom-560m' heading, one run's heading without its shot count (as the OPT
    READMEs name 'opt-125m.json'): the model is the folder's name, the run has no shot count, both noted."""
    text = README.read_text(encoding="utf-8").replace("# bloom-560m\n\n", "", 1)
    text = text.replace("## bloom-560m_xnli_0-shot.json", "## bloom-560m_xnli.json")
    _, recs, src = _read(_readme_alone(tmp_path, text, folder="my-model"))
    assert {r.model for r in recs} == {"my-model"}
    assert {r.num_fewshot for r in recs if r.dataset == "xnli_en"} == {None}
    notes = " ".join(src.take_notes())
    assert "model name taken from the file's folder name" in notes
    assert "1 table of lm-eval's results README stored with no shot count" in notes


def test_results_readme_with_a_broken_table_is_one_error(tmp_path):
    """Composed (hostile), after the real layout: the heading and header, then rows that are not numbers: one
    error naming the file and why."""
    p = _readme_alone(tmp_path, "# m\n\n## m_x_0-shot.json\n|Task|Version|Metric|Value|   |Stderr|\n"
                                "|----|------:|------|----:|---|-----:|\n|boolq|1|acc|high|±|low|\n")
    with pytest.raises(IngestError, match="README.md: .*no readable result row: 1 table row unreadable"):
        _read(p)


def test_markdown_with_json_headings_but_other_tables_is_not_claimed(tmp_path):
    from harness_ext.store.ingest_read import is_printed_table

    assert not is_printed_table(b"# notes\n\n## config.json\n|key|value|\n|-|-|\n|Version|2|\n")
    assert is_printed_table(README.read_bytes())


@pytest.mark.slow
def test_every_shared_results_readme_reads_as_its_json_files(tmp_path):
    """The 22 READMEs of lm-eval's own results folder (shared data), each read alone: every row the JSON files
    beside it give, within the printed digits (a run whose file name gives no shot count matched at any count)."""
    from conftest import LM_EVAL_V03

    readmes = sorted(require(LM_EVAL_V03).glob("*/*/README.md"))
    assert len(readmes) == 22
    rows = 0
    for readme in readmes:
        _, recs, _ = _read(_readme_alone(tmp_path / readme.parent.name, readme.read_text(encoding="utf-8"),
                                          readme.parent.name))
        got, want = _values_by_key(recs), {}
        for j in sorted(readme.parent.glob("*.json")):
            for key, values in _values_by_key(_read(j)[1]).items():
                want.setdefault(key, []).extend(values)
        assert sum(map(len, got.values())) == len(recs) == sum(map(len, want.values())), readme
        for (task, metric, shots), values in want.items():
            printed = got.get((task, metric, shots)) or got[(task, metric, None)]
            tol = max(0.0051 if metric == "ppl" or task == "squad2" else 5.1e-5, 5.1e-5 * max(map(abs, values)))
            assert len(printed) == len(values), (readme, task, metric)
            assert all(abs(a - b) <= tol for a, b in zip(sorted(printed), sorted(values))), (readme, task, metric)
        rows += len(recs)
    assert rows == 3483


def _values_by_key(records) -> dict:
    """Values by (dataset, metric, shots): a README may hold one task and shot count twice (two runs' JSON files)."""
    out: dict = {}
    for r in records:
        out.setdefault((r.dataset, r.metric, r.num_fewshot), []).append(r.value)
    return out


def test_results_readme_heading_naming_a_path_is_not_followed(tmp_path):
    """Composed (hostile), after the real layout: a heading naming a JSON file in another folder is not looked up
    there (neither skipped nor read for the model's name): the table is read, named by the heading."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x_0-shot.json").write_bytes((README_DIR / "bloom-560m_lambada_openai_0-shot.json").read_bytes())
    text = ("# m\n\n## ../elsewhere/x_0-shot.json\n|Task|Version|Metric|Value|   |Stderr|\n"
            "|----|------:|------|----:|---|-----:|\n|boolq|1|acc|55.14|±|0.87|\n")
    _, recs, src = _read(_readme_alone(tmp_path, text, folder="run"))
    assert [(r.model, r.dataset, r.value) for r in recs] == [("m", "boolq", pytest.approx(0.5514))]
    assert "model name taken from the file's heading" in " ".join(src.take_notes())


def test_results_readme_heading_above_another_table_is_not_its_run(tmp_path):
    """Composed (hostile), after the real layout: a '## <run>.json' heading above a v0.4 table (which the README
    script never printed) does not give that table a model or a scale: it is left out, counted; a heading too long
    to be a model's name leaves the folder to name it."""
    text = ("# " + "m" * 300 + "\n\n## m_x_0-shot.json\n" + TABLE4 + "|boolq|2|none|0|acc|↑|0.7780|±|0.0073|\n\n"
            "## m_y_0-shot.json\n|Task|Version|Metric|Value|   |Stderr|\n|----|------:|------|----:|---|-----:|\n"
            "|piqa|0|acc|75.00|±|1.00|\n")
    _, recs, src = _read(_readme_alone(tmp_path, text, folder="run"))
    assert [(r.model, r.dataset, r.value) for r in recs] == [("run", "piqa", pytest.approx(0.75))]
    notes = " ".join(src.take_notes())
    assert "model name taken from the file's folder name" in notes
    assert "1 table without the line lm-eval prints above it" in notes and "1 results README heading with no readable table" in notes

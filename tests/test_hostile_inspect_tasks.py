"""An Inspect log may name its task anything, and ``reduce --items`` tells the user to run each task of
``inspect_sample_ids.json`` with ``inspect eval TASK``, which imports a task named ``file.py@task``, a ``.py`` file
or a folder of them: a task named as a file is refused before anything is written. Real logs name a task by its
function or registry name (tests/fixtures/inspect: ``input_task`` beside ``task_file: input.py``;
``inspect_evals/cyse2_vulnerability_exploit``)."""

from __future__ import annotations

import pytest

from harness_ext.methods.reduction.inspect_samples import inspect_sample_ids, task_file_problem


@pytest.mark.parametrize("name", ["logs/evil.py@popularity", "evil.py", "a/b/evil", "/tmp/evil", "~/evil",
                                  "../evil", "./evil", "C:evil", "a\\evil", "tasks.IPYNB", "pkg/"])
def test_a_task_named_as_a_file_is_refused(name):
    from harness_ext.errors import HarnessExtError

    assert task_file_problem(name)
    manifest = {"tasks": {"t": {"inspect": {"task": name, "sample_ids": [1]}}}}
    with pytest.raises(HarnessExtError, match="leave it out"):
        inspect_sample_ids(manifest)


@pytest.mark.parametrize("name", ["inspect_evals/gpqa_diamond", "input_task", "mmlu_0.5", "popularity",
                                  "evil;rm -rf ~;$(touch PWNED)"])  # the last: quoted, a registry look-up (warned)
def test_registry_names_are_kept(name):
    assert task_file_problem(name) is None


@pytest.mark.slow
def test_reduce_refuses_an_inspect_task_named_as_a_file_and_writes_nothing(tmp_path, capsys):
    from test_hostile_inspect_local import hostile_logs, reduce_refused

    logs = hostile_logs(tmp_path, "logs/evil.py@popularity")
    (logs / "evil.py").write_text("raise SystemExit('ran')\n")
    err = reduce_refused(tmp_path, logs, capsys)
    assert '"logs/evil.py@popularity"' in err and "FILE@TASK" in err

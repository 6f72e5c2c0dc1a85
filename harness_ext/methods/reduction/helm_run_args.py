"""Run-entry arguments from third-party HELM results, checked before they go into a HELM conf.

A HELM run name (``mmlu:subject=anatomy,method=multiple_choice_joint``) is read from a results
folder anyone can write, and ``reduce`` writes it back as a run entry that ``helm-run`` expands
with the scenario's own run-spec function. Some of those functions take an argument that names a
file or folder: MedHELM's ``clear``, ``ehrshot``, ``medalign``, ``dischargeme``, ``mimic_rrs``,
``mimic_bhc``, ``mental_health``, ``n2c2_ct_matching``, ``note_summary`` and the ``shc_*`` scenarios
take a ``data_path`` that the scenario opens as given (so relative to the folder ``helm-run`` is run
in); ``unitxt`` hands every argument to Unitxt, which loads a value naming an existing file as an
artifact (an object Unitxt builds from that file). Other arguments become part of a file name inside
HELM's own output folder (MMLU reads ``<subject>_test.csv``), where a ``/`` or ``..`` leaves it.

The rule, from the 8,526 HELM Classic run names and the HELM Lite, Capabilities, MedHELM, Safety and
VHELM runs the tests read (no value there holds a path separator, ``..``, ``~`` or ``:``), is:

* the scenario is a run-spec function's name: letters, digits, ``_``, ``-``, ``.`` and ``=``
  (HELM Classic's ``dyck_language_np=3``);
* an argument's key is a Python name, and none of its ``_``-separated words says it names a file,
  folder, URL or code (``data_path``, ``prompt_file``, ``config_path``, ``class_name``...);
* a value holds letters, digits, ``_``, ``-``, ``.``, spaces and parentheses (The Pile's
  ``Wikipedia (en)``), is not ``..`` nor starts with ``.`` or ``~``; a model, deployment or tokenizer
  value may also be a registry name ``namespace/name`` (``openai/gpt2``), which HELM looks up in its
  model registry, never reads as a path;
* the ``unitxt`` scenario is left out whatever its arguments.

So no URL scheme is written at all (no real run entry has one). Nothing is dropped silently: the conf's
header names each entry left out with why, and ``reduce`` counts them in a warning.
"""

from __future__ import annotations

import re
from typing import Optional

#: A run-spec function's name (HELM Classic bakes an argument into one: ``dyck_language_np=3``).
_SCENARIO = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.=-]*$")
#: An argument's key: a keyword argument of the run-spec function or a run expander.
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: A value: letters and digits of any script, ``_``, ``-``, ``.``, spaces and parentheses.
_VALUE = re.compile(r"^[\w .()-]*$")
#: The values HELM looks up in its model registry: ``namespace/name`` is a registered name, not a path.
_REGISTRY_KEYS = frozenset({"model", "model_deployment", "tokenizer"})
_REGISTRY_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*/[A-Za-z0-9_][A-Za-z0-9_.-]*$")
#: Words of an argument's key that say its value names a file, folder, URL or code to load.
FILE_WORDS = frozenset({"path", "paths", "file", "files", "filename", "filepath", "dir", "dirs", "directory",
                        "folder", "url", "urls", "uri", "class", "module", "config", "cache", "root", "script"})
#: Scenarios whose arguments load files whatever their names: Unitxt loads a value naming an existing local file
#: (relative to the folder helm-run runs in) as an artifact, which builds the objects that file describes.
FILE_LOADING_SCENARIOS = {"unitxt": "helm-run hands every argument to Unitxt, which loads a value naming an "
                                    "existing local file as an artifact (objects built from that file)"}


def helm_entry_problem(description: str) -> Optional[str]:
    """Why the run-entry ``description`` could make helm-run read or import something outside the reduced
    folder, or None when every argument is a plain name.

    Parameters
    ----------
    description : str
        A run-entry description as HELM parses it: the scenario, ``:``, then ``key=value`` arguments
        separated by ``,`` (``mmlu:subject=anatomy,model=text``).

    Returns
    -------
    str or None
        The reason, naming the argument; None if the entry may be written.
    """
    scenario, _, rest = str(description).partition(":")
    if not _SCENARIO.match(scenario):
        return f"the scenario name {_shown(scenario)} is not a run-spec function's name"
    if scenario in FILE_LOADING_SCENARIOS:
        return FILE_LOADING_SCENARIOS[scenario]
    for arg in rest.split(",") if rest else ():
        key, eq, value = arg.partition("=")
        why = _argument_problem(key, value) if eq else f"the argument {_shown(arg)} has no '='"
        if why:
            return why
    return None


def _argument_problem(key: str, value: str) -> Optional[str]:
    if not _KEY.match(key):
        return f"the argument name {_shown(key)} is not a keyword argument's name"
    words = set(key.lower().split("_")) & FILE_WORDS
    if words:
        return (f"the argument {key} names a {sorted(words)[0]} for helm-run to open or import (read from the "
                "folder helm-run is run in, or the machine that ran the evaluation)")
    if key in _REGISTRY_KEYS and _REGISTRY_NAME.match(value):
        return None
    if not _VALUE.match(value):
        return (f"the value of {key} ({_shown(value)}) holds a character other than letters, digits, '_', '-', '.', "
                "spaces and parentheses (a path separator, a URL scheme, a home folder or a quote)")
    if value.startswith((".", "~")):
        return f"the value of {key} ({_shown(value)}) starts with '{value[0]}', as a local path does"
    return None


def _shown(text: str) -> str:
    from ...safe_output import quoted, short_name

    return quoted(short_name(text, 60))


def checked_helm_entries(entry: dict) -> list:
    """``(description, reason)`` of each run entry of the subset entry ``entry`` as the HELM conf writes it (with the
    population's shots); ``reason`` (:func:`helm_entry_problem`) is None for an entry the conf may write."""
    from .harness_names import entry_shots, helm_description_list, with_shots

    descs = (with_shots(desc, entry_shots(entry)) for desc in helm_description_list(entry))
    return [(desc, helm_entry_problem(desc)) for desc in descs]


def refused_helm_entries(subset: list) -> list:
    """``(dataset, description, reason)`` for every run entry of ``subset`` the HELM conf leaves out."""
    return [(entry["name"], desc, why) for entry in subset for desc, why in checked_helm_entries(entry) if why]


def refused_helm_warnings(subset: list, limit: int = 3) -> list:
    """``reduce``'s warning counting the run entries the HELM conf leaves out (none when it leaves none out)."""
    from ...safe_output import short_name

    refused = refused_helm_entries(subset)
    if not refused:
        return []
    names = list(dict.fromkeys(n for n, _, _ in refused))
    shown = "; ".join(f"{short_name(d)}: {why}" for _, d, why in refused[:limit])
    return [f"HELM conf: {len(refused)} run entr{'y' if len(refused) == 1 else 'ies'} of {len(names)} dataset(s) "
            f"left out because their arguments could make helm-run read or import files outside the folder ({shown}"
            f"{' ...' if len(refused) > limit else ''}); the conf's header names each one"]


def helm_shots_note(manifest: dict) -> list:
    """The HELM conf's (and reduce's) lines on shots.

    Parameters
    ----------
    manifest : dict
        A manifest with a ``subset``.

    Returns
    -------
    list of str
        The shots the run entries ask for, with the number of datasets at each; and the datasets whose results named
        no shots, which run at HELM's own default (empty when no dataset has a HELM run entry). A dataset counts only
        when the conf writes one of its run entries (:func:`checked_helm_entries`).
    """
    from ...report import plural
    from ...safe_output import quoted
    from .harness_names import entry_shots

    subset = [e for e in manifest["subset"] if any(why is None for _, why in checked_helm_entries(e))]
    asked: dict = {}
    for e in subset:
        asked.setdefault(entry_shots(e), []).append(e["name"])
    lines = []
    known = sorted(k for k in asked if k is not None)
    if known:
        counts = ", ".join(f"{plural(k, 'shot')} ({plural(len(asked[k]), 'dataset')})" for k in known)
        lines.append(f"Each run entry sets max_train_instances to the shots the population was measured at: {counts}")
    if None in asked:
        names = asked[None]
        # A HELM leaderboard's runs were made at HELM's defaults, so the entries ask for what was measured.
        helm = all(str(e.get("benchmark") or "").startswith("helm_") for e in subset if entry_shots(e) is None)
        lines.append(f"The population's results name no shots for {plural(len(names), 'dataset')} ({', '.join(map(quoted, names[:5]))}"
                     f"{', ...' if len(names) > 5 else ''}): their entries run at HELM's own default, " + (
                         "as the HELM leaderboard's runs did (a HELM release with other defaults would differ)"
                         if helm else "which may differ"))
    return lines

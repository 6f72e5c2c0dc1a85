"""Filter regexes from results files past star height: overlapping choices inside a repeat, backreferences, and
repeats one after another, each of which can hang lm-eval's regex filter on one model answer."""

from __future__ import annotations

import time

import pytest

from harness_ext.store.regex_safety import regex_problem
from harness_ext.store.task_yaml_safety import safe_task_config
from test_hostile_task_configs import GSM8K_FILTERS, _lm_eval_task_docs

#: Star height 1, and still exponential (choices inside a repeat) or unbounded (backreferences).
CHOICE_IN_REPEAT = ["(a|a)*$", "(a|ab)*c", "(?:x|xy)+z", "(?:a|b|ab)+$", "(a?a)+$", "(?:a(?=b)|ab)*c"]
BACKREFERENCES = ["(a*)\\1", "(?P<x>a+)(?P=x)!", "(a)|b\\1"]
#: Repeats that can match the same character, one after another: each one more power of the answer's length.
CHAINS = ["\\d*\\d*\\d*$", "\\d*\\d*$", "(?:\\d+)?\\d*$", "\\d+\\s*\\d+$", ".*x.*$", "^\\d*\\d*\\d*$", "(?m)^\\d*\\d*$"]
#: Kept: lm-eval's own shapes, Python's merged single-character alternations, chains nothing can fail after.
KEPT = ["(\\w|\\d)+$", "(a|\\w)+!", "#### (\\-?[0-9\\.\\,]+)", "(-?[$0-9.,]{2,})|(-?[0-9]+)", "\\d*\\d*", "^(.*?)\\s*$",
        "The answer is (\\-?[0-9\\.\\,]*[0-9]+)", "(-?[0-9]+([ .,][0-9.,]+)?)", "(?:ab|cd)+$", "\\d+$", "(?s).*#### "]


@pytest.mark.parametrize("pattern", CHOICE_IN_REPEAT + BACKREFERENCES + CHAINS)
def test_a_filter_regex_that_backtracks_past_star_height_is_not_written(pattern):
    why = regex_problem(pattern)
    assert why and "star height" not in why
    hostile = {"name": "strict-match", "filter": [{"function": "regex", "regex_pattern": pattern},
                                                  {"function": "take_first"}]}
    kept, dropped = safe_task_config({"filter_list": [hostile, GSM8K_FILTERS[1]]})
    assert kept == {"filter_list": [GSM8K_FILTERS[1]]}
    assert "'strict-match' is left out" in dropped[0]["reason"] and why in dropped[0]["reason"]


@pytest.mark.parametrize("pattern, words", [("(a|ab)*c", "alternation"), ("(a?a)+$", "optional part"),
                                            ("(a*)\\1", "refers back"), ("\\d*\\d*$", "one after another")])
def test_the_reason_says_which_shape(pattern, words):
    assert words in regex_problem(pattern)


@pytest.mark.parametrize("pattern", KEPT)
def test_patterns_of_one_repeat_per_stretch_are_kept(pattern):
    assert regex_problem(pattern) is None


def _seconds(pattern: str, answer: str) -> float:
    extraction = pytest.importorskip("lm_eval.filters.extraction")
    f = extraction.RegexFilter(regex_pattern=pattern)
    start = time.perf_counter()
    f.apply([[answer]], [{}])
    return time.perf_counter() - start


@pytest.mark.slow
def test_the_refused_shapes_are_slow_in_lm_eval_s_regex_filter():
    """Not vacuous: lm-eval's own filter on a crafted answer, against a pattern of the same language kept."""
    overlap, single = _seconds("(a|a)*$", "a" * 20 + "!"), _seconds("(a)*$", "a" * 20 + "!")
    assert overlap > 20 * max(single, 1e-4) and overlap > 0.02
    optional = _seconds("(a?a)+$", "a" * 28 + "!")  # 24 took 0.019 s on a fast machine: a margin
    assert optional > 20 * max(_seconds("(a)+$", "a" * 28 + "!"), 1e-4) and optional > 0.02
    # 400 digits took 0.074 s on a fast machine (0.1 needed): 800, about 8 times that (the search is cubic in them)
    chain, one = _seconds("\\d*\\d*$", "1" * 800 + "x"), _seconds("\\d*$", "1" * 800 + "x")
    assert chain > 20 * max(one, 1e-4) and chain > 0.1


@pytest.mark.slow
def test_every_regex_of_lm_eval_s_own_tasks_is_kept():
    """Filters' and metrics' patterns alike, in every task YAML of the installed lm-eval (193 filter lists in 0.4.13)."""
    patterns, lists = set(), 0

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "regex_pattern" and isinstance(x, str):
                    patterns.add(x)
                elif k == "regexes_to_ignore" and isinstance(x, list):
                    patterns.update(s for s in x if isinstance(s, str))
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for _, doc in _lm_eval_task_docs("*", must_hold="regex_pattern"):
        lists += isinstance(doc, dict) and isinstance(doc.get("filter_list"), list)
        walk(doc)
    assert lists > 150 and len(patterns) > 50
    assert {p: regex_problem(p) for p in patterns if regex_problem(p)} == {}


@pytest.mark.parametrize("pattern", ["a*b?" * 499 + "$", "".join(chr(0x4E00 + i) + "*" for i in range(998)) + "$",
                                     "a?" * 1000, "(?:a|b)" * 285, "[ab]*c?" * 333])
def test_the_check_itself_is_quick_on_the_longest_pattern_kept(pattern):
    """The check runs on every filter of every task reduce writes: 2,000 characters of repeats take well under a second."""
    start = time.perf_counter()
    regex_problem(pattern[:2000])
    assert time.perf_counter() - start < 3

"""Model identity: one canonical id for the names different sources give one model.

Leaderboards, harness runs and HELM tables spell the same model differently:
``GPT-4o (2024-05-13)``, ``gpt-4o-2024-05-13``, ``GPT-4o-20240513`` and
``openai/gpt-4o-2024-05-13`` are one model. The store keeps every name as its
source wrote it (``models`` table) and maps names to canonical ids in the
``model_aliases`` table, which every matrix query applies, so results meet in
one row.

Built-in normalisation (:func:`model_key`) -- deliberately conservative:

- case, and the punctuation between words (``-``, ``_``, ``.``, space, brackets)
  are ignored: ``Claude_3.5_Sonnet`` = ``claude-3-5-sonnet``;
- dates are one token whatever their spelling: ``2024-05-13``, ``20240513``,
  ``(2024-05-13)``, ``2024_05_13``; ``(05/13)`` is the 4-digit ``0513`` OpenAI
  uses in ``gpt-4-0613``;
- parameter counts (``70b``, ``8x7b``, ``1.5b``) and dates may stand anywhere:
  HELM's ``Llama 3.1 Instruct Turbo (405B)`` = ``Meta-Llama-3.1-405B-Instruct-Turbo``;
- a version letter ``v`` before a number and a letter-to-digit boundary are
  not significant: ``Mistral v0.1 (7B)`` = ``Mistral-7B-v0.1``, ``Llama3`` = ``Llama-3``;
- the organisation prefix of a *known developer* (:data:`KNOWN_ORGS`: ``openai/``,
  ``anthropic/``, ``meta-llama/``, ``google/``, ``mistralai/``, ``Qwen/`` ...) and a
  ``Meta-`` before ``Llama`` are dropped; an unknown prefix (a fine-tuner's
  account) is kept, so ``someone/Llama-3-8B`` never merges with Meta's model;
- suffix noise: ``hf`` (``Llama-2-7b-hf``), ``base`` next to a parameter count
  (``LLama3-8b-Base``), a trailing ``*``; ``ins``/``inst`` mean ``instruct``;
- a trailing ``+`` is ``plus`` (``Command R+`` = ``Command R Plus``);
- a checkpoint revision (``@step3000``) and adapter weights (``+peft=...``) are
  kept verbatim.

Everything else is significant, so sizes, versions and variants never merge:
``llama-3-8b`` / ``llama-3-70b``, ``gpt-4`` / ``gpt-4o``, ``gpt-4o`` / ``gpt-4o-mini``,
``llama-3-8b`` / ``llama-3-8b-instruct``, ``claude-3-opus`` / ``claude-3-opus-20240229``
(an undated name may be a moving alias), ``gpt-4-0613`` / ``gpt-4-0314``. And two
names that one source file lists side by side are, by that source's own
account, two models: such a group is not merged (``models --unmatched`` shows it).

Variants: a source may name the variant of its model (the Open LLM Leaderboard's ``float16`` and ``bfloat16``
runs of one repository, stored as ``org/model (float16)`` with :data:`harness_ext.types.VARIANT_OF` in the
model's metadata). Two variants of one model stay two models; a model stored at one variant only has the plain
name as its id and merges as that name would (:func:`resolve`, ``variants``).

Case: a fine-tuner's hub id ignores case (``Org/Model`` = ``org/model``), but two spellings that differ only by case
and give one result different values were scored as two submissions (:func:`case_pairs`): they stay apart as
names one source lists side by side do, and ``models --unmatched`` shows them.

Canonical ids: names that merge get the group's key (lower case, ``-``-joined
tokens, ISO dates: ``gpt-4o-2024-05-13``); a name that merges with nothing keeps
its own spelling, so single-source stores look exactly as before.

User alias file (``harness-ext models --aliases FILE``), YAML or JSON::

    aliases:                       # canonical id: [names as sources spell them]
      gpt-4o-2024-05-13: [GPT-4-0-2024-05-13, GPT-40-20240513]
      claude-3-5-sonnet-2024-06-20: ["Claude 3.5 Sonnet-0620"]
    separate: [claude-3-opus]      # never merged by the built-in rules

or a CSV with header ``alias,canonical``. User entries win over built-in ones;
a user canonical that is itself a name in a built-in group joins that group.

``models --unmatched`` lists pairs of canonical ids that did not merge but look
alike (same family word, no conflicting size, date, version or variant word),
with a similarity score in [0, 1] for review; write the ones that are the same
model into an alias file. Two step-named revisions of one run (``@step24000``, ``@step264000``) are
two models by design and never listed; the pairs so left out are counted.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path
from typing import Iterable, Optional

import pandas as pd

from ..errors import SideFileError

#: Organisation prefixes that name a model's original developer (lower case); dropped from keys.
KNOWN_ORGS = frozenset({
    "openai", "anthropic", "meta", "meta-llama", "facebook", "google", "google-deepmind", "mistralai", "mistral",
    "qwen", "alibaba", "01-ai", "microsoft", "tiiuae", "eleutherai", "deepseek-ai", "deepseek", "cohere",
    "cohereforai", "coherelabs", "ai21", "ai21labs", "amazon", "nvidia", "databricks", "mosaicml", "bigscience",
    "stabilityai", "lmsys", "thudm", "zhipuai", "internlm", "baichuan-inc", "upstage", "allenai", "writer",
    "snowflake", "xai", "x-ai", "huggingfaceh4", "nousresearch", "ibm", "ibm-granite", "codellama", "yi",
})
#: Tokens that carry no identity.
NOISE_TOKENS = frozenset({"hf"})
#: Abbreviations spelled out.
SYNONYMS = {"ins": "instruct", "inst": "instruct"}
#: Words that make a different model when one name has them and the other not (never suggested as duplicates).
VARIANT_WORDS = frozenset({
    "instruct", "chat", "base", "it", "sft", "dpo", "rlhf", "orpo", "simpo", "mini", "nano", "tiny", "small",
    "medium", "large", "xl", "xxl", "turbo", "pro", "flash", "ultra", "lite", "plus", "max", "air", "code",
    "coder", "math", "vision", "haiku", "sonnet", "opus", "instant", "preview", "deduped", "awq", "gptq", "gguf",
    "int4", "int8", "fp8", "python", "long", "latest",
})

_DATE = re.compile(r"(?<![0-9])(20[12][0-9])[-_/. ]?(0[1-9]|1[0-2])[-_/. ]?(0[1-9]|[12][0-9]|3[01])(?![0-9])")
_SHORT_DATE = re.compile(r"\((0[1-9]|1[0-2])/([0-3][0-9])\)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?x\d+(?:\.\d+)?[bm](?![a-z])|\d+(?:\.\d+)?[bm](?![a-z])|[a-z]+|\d+[a-z]*")
_SIZE = re.compile(r"^\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)?[bm]$")
_DATE_TOKEN = re.compile(r"^@(\d{8})$")


def _tokens(text: str) -> tuple:
    """``(tokens, sizes, dates)`` of a name without org prefix or revision."""
    text = _SHORT_DATE.sub(lambda m: f" {m.group(1)}{m.group(2)} ", text)
    dates = []

    def _date(m):
        dates.append(f"{m.group(1)}-{m.group(2)}-{m.group(3)}")
        return " "

    text = _DATE.sub(_date, text.lower())
    raw = _TOKEN.findall(text)
    # A letter run followed by digits is two tokens (llama3 = llama 3) but digits then letters
    # are one (4o, 70b, 8k): "gpt-4o" must never become "gpt-4".
    toks: list = []
    for t in raw:
        toks.append(SYNONYMS.get(t, t))
    sizes = [t for t in toks if _SIZE.match(t)]
    words = [t for t in toks if not _SIZE.match(t)]
    out = []
    for i, t in enumerate(words):
        if t in NOISE_TOKENS:
            continue
        if t == "v" and i + 1 < len(words) and words[i + 1][:1].isdigit():
            continue
        if t == "meta" and not out and i + 1 < len(words) and words[i + 1] == "llama":
            continue
        if t == "base" and sizes:
            continue
        out.append(t)
    return out, sizes, dates


@functools.lru_cache(maxsize=1 << 18)  # alias resolution asks for each stored name's key several times
def model_key(name: str) -> str:
    """The built-in canonical key of a model name (see the module docstring).

    Examples
    --------
    >>> model_key("GPT-4o (2024-05-13)"), model_key("GPT-4o-20240513"), model_key("openai/gpt-4o-2024-05-13")
    ('gpt-4o-2024-05-13', 'gpt-4o-2024-05-13', 'gpt-4o-2024-05-13')
    >>> model_key("Llama 3.1 Instruct Turbo (405B)") == model_key("Meta-Llama-3.1-405B-Instruct-Turbo")
    True
    >>> model_key("llama-3-8b") == model_key("llama-3-70b"), model_key("gpt-4") == model_key("gpt-4o")
    (False, False)
    """
    name = str(name).strip()
    suffix = ""
    m = re.search(r"@|\+(?:peft|delta)=", name)
    if m:  # revision / adapter weights (lm-eval model names): significant, kept verbatim
        name, suffix = name[: m.start()], name[m.start():].strip().lower()
    name = re.sub(r"\+\s*$", " plus", name)  # Command R+ = Command R Plus
    org = ""
    if "/" in name and not _SHORT_DATE.search(name):
        head, rest = name.split("/", 1)
        if head.strip().lower() in KNOWN_ORGS:
            name = rest
        elif head.strip() and "/" not in rest:
            # A fine-tuner's repository id: only case is insignificant (the hub ignores it);
            # its spelling is the name of one repository, and another spelling is another one.
            return f"{head.strip().lower()}/{rest.strip().lower()}{suffix}"
    words, sizes, dates = _tokens(name)
    key = "-".join(words + sizes + dates)
    return (org + key + suffix) if key else str(name).strip().lower() + suffix


def _parts(key: str) -> tuple:
    """``(org, words, numbers, sizes, dates)`` of a key, for the duplicate review."""
    org, _, rest = key.rpartition("/")
    rest = re.split(r"@|\+(?:peft|delta)=", rest, maxsplit=1)[0]
    dates = re.findall(r"20[12]\d-\d\d-\d\d", rest)
    rest = re.sub(r"-?20[12]\d-\d\d-\d\d", "", rest)
    toks = [t for t in rest.split("-") if t]
    sizes = {t for t in toks if _SIZE.match(t)}
    nums = tuple(t for t in toks if t.isdigit())
    # Digits with a unit or tag (128k context, 4bit, 2leo) are as significant as sizes.
    tagged = {t for t in toks if t[:1].isdigit() and not t.isdigit() and t not in sizes}
    words = {t for t in toks if not t[:1].isdigit()}
    return org, words, nums, sizes | tagged, set(dates)


# -- resolution -------------------------------------------------------------------------------------
def resolve(names: Iterable[str], cooccur: Optional[set] = None, user: Optional[dict] = None,
            separate: Iterable[str] = (), variants: Optional[dict] = None, non_default: Iterable[str] = ()) -> dict:
    """``{name: canonical id}`` for the names whose id is not their own spelling.

    A name that is the only stored variant of its model (``variants``) stands for that model: its id
    is the plain name, and it merges as the plain name would. Two variants of one model keep their names.

    Parameters
    ----------
    names : iterable of str
        Model names as stored.
    cooccur : set of frozenset, optional
        Pairs of names that one source lists side by side: their key group is not merged.
    user : dict, optional
        User aliases ``{alias: canonical}`` (win over built-in merges).
    separate : iterable of str
        Names the built-in rules must leave alone.
    variants : dict, optional
        ``{stored name: plain model name}`` of the names a source gave as a variant of a model
        (:data:`harness_ext.types.VARIANT_OF`).
    non_default : iterable of str
        Those of the variants that are runs at settings other than the model's defaults
        (:data:`harness_ext.types.NON_DEFAULT_VARIANT`, an mteb experiment): such a lone variant stands for its model
        only when no name that is not a variant is that model (its default run); beside one it keeps its name, so an
        experiment never shares the default run's cells.
    """
    names = sorted(set(names))
    user = dict(user or {})
    separate = set(separate) | set(user)
    plain = single_variants(variants or {}, separate)
    non_default = set(non_default) & set(plain)
    if non_default:
        runs = {model_key(n) for n in names if n not in (variants or {})}
        plain = {n: p for n, p in plain.items() if n not in non_default or model_key(p) not in runs}
    groups: dict = {}
    for n in names:
        groups.setdefault(model_key(plain.get(n, n)), []).append(n)
    keys = {n: model_key(n) for n in names}
    builtin: dict = dict(plain)  # a merge below may give such a name its group's id instead
    for key, members in groups.items():
        if len(members) < 2:  # most names: nothing to merge (cheaper than filtering them first)
            continue
        members = [n for n in members if n not in separate]
        if len(members) < 2:
            continue
        # Names a source lists side by side, and two repositories of one organisation, are told
        # apart: they stay their own ids, and so which of them another spelling means is unknown.
        # The group's other spellings still name one model and merge with each other (one
        # hub rename, say Meta-Llama-3.1-70B-Instruct -> Llama-3.1-70B-Instruct, must not leave
        # a leaderboard's five spellings of it as five models).
        apart = set()
        if cooccur:
            for i, a in enumerate(members):
                for b in members[i + 1:]:
                    if frozenset((a, b)) in cooccur:
                        apart |= {a, b}
        repo = {n: plain.get(n, n).lower() for n in members if _is_repo_id(plain.get(n, n))}
        org_of = {n: r.split("/", 1)[0] for n, r in repo.items()}
        repos_per_org = Counter(r.split("/", 1)[0] for r in set(repo.values()))
        apart |= {n for n, o in org_of.items() if repos_per_org[o] > 1}
        members = [n for n in members if n not in apart]
        if len(members) < 2:
            continue
        canonical = _canonical([plain.get(n, n) for n in members], key)
        if canonical in apart:  # the key is one of the names told apart: which one is meant is unknown
            continue
        for n in members:
            builtin[n] = canonical
    out = {n: c for n, c in builtin.items() if c != n}
    for alias, canonical in user.items():
        c = builtin.get(canonical, canonical)
        if c != alias:
            out[alias] = c
        # A user canonical spelled differently from a name that merged with nothing still meets it.
        for n in groups.get(keys.get(canonical) or model_key(canonical), ()):
            if n not in separate and n not in builtin and n != c:
                out[n] = c
    return out


def single_variants(variants: dict, separate: Iterable[str] = ()) -> dict:
    """``{stored name: plain name}`` of the variants that are their model's only one (``variants``:
    ``{stored name: plain name}``), but the ``separate`` names."""
    per_model = _variants_per_model(variants)
    return {n: p for n, p in variants.items() if len(per_model[p.lower()]) == 1 and n not in separate and n != p}


def _variants_per_model(variants: dict) -> dict:
    """``{plain name, lower case: {stored name, lower case}}``: hub ids ignore case (``Org/Model`` is ``org/model``),
    so two spellings of one model at one precision are one variant, and at two precisions two."""
    out: dict = {}
    for n, p in variants.items():
        out.setdefault(p.lower(), set()).add(n.lower())
    return out


def split_variants(variants: dict) -> dict:
    """``{plain name: [stored names]}`` of the models stored at more than one variant (``variants``:
    ``{stored name: plain name}``)."""
    per_model = _variants_per_model(variants)
    out: dict = {}
    for n, p in sorted(variants.items()):
        if len(per_model[p.lower()]) > 1:
            out.setdefault(p.lower(), (p, []))[1].append(n)
    return dict(out.values())


def variant_pairs(store) -> set:
    """Pairs of stored names that are two variants of one model (:func:`split_variants`): two models by their
    sources' own account, as names one source lists side by side (never suggested as duplicates)."""
    return {frozenset((a, b)) for ns in split_variants(stored_variants(store)).values()
            for i, a in enumerate(ns) for b in ns[i + 1:]}


def _is_repo_id(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+(?:[@+].*)?", name.strip()))


def _canonical(members: list, key: str) -> str:
    """A merged group's id: its hub repository id when it has one (lower case preferred), else the key."""
    repos = sorted((n != n.lower(), n) for n in members if _is_repo_id(n))
    return repos[0][1] if repos else key


def candidate_pairs(names: Iterable[str], mapping: dict, cooccur: Optional[set] = None,
                    min_score: float = 0.75) -> pd.DataFrame:
    """Pairs of canonical ids that look alike but did not merge, with a similarity score.

    Pairs are compared within blocks of the same first word, and never suggested
    when their parameter counts, full dates, version numbers or variant words
    (:data:`VARIANT_WORDS`) differ. Score: :class:`difflib.SequenceMatcher` ratio
    of the two keys. Groups the built-in rules left apart because one source
    lists both names come first, with score 1. Two step-named checkpoints of one run
    (``org/model@step24000`` and ``org/model@step264000``) are two models by design and never paired: the
    returned frame's ``attrs["left_out"]`` counts the pairs so left out (``{reason: count}``).
    """
    names = sorted(set(names))
    ids: dict = {}
    for n in names:
        ids.setdefault(mapping.get(n, n), []).append(n)
    rows = []
    # Same key, left apart because a source lists both.
    by_key: dict = {}
    for cid in ids:
        by_key.setdefault(model_key(cid), []).append(cid)
    for key, cids in by_key.items():
        for i, a in enumerate(cids):
            for b in cids[i + 1:]:
                why = ("same name but for case, not merged: their scores for one result differ, or one source lists "
                       "both" if a.lower() == b.lower() else "same normalised name, not merged: one source lists both, "
                       "or they are two repositories of one organisation")
                rows.append((a, b, 1.0, why))
    keys = {cid: model_key(cid) for cid in ids}
    blocks: dict = {}
    for cid, k in keys.items():
        org, words, nums, sizes, dates = _parts(k)
        first = re.split(r"[-/]", k.rpartition("/")[2], maxsplit=1)[0]
        blocks.setdefault(first, []).append((cid, k, org, words, nums, sizes, dates))
    for members in blocks.values():
        for i, (a, ka, oa, wa, na, sa, da) in enumerate(members):
            for b, kb, ob, wb, nb, sb, db in members[i + 1:]:
                if ka == kb:
                    continue
                if sa and sb and sa != sb:
                    continue
                if da and db and da != db:
                    continue
                if _strip_zeros(na) != _strip_zeros(nb):
                    short = _short_dates(na, da, nb, db)
                    if not short:
                        continue
                if (wa ^ wb) & VARIANT_WORDS:
                    continue
                if oa != ob and oa and ob:
                    continue
                score = SequenceMatcher(None, ka, kb).ratio()
                if score >= min_score:
                    rows.append((a, b, round(score, 3), CHECKPOINTS if _checkpoints(ka, kb) else "similar names"))
    df = pd.DataFrame(rows, columns=["model_a", "model_b", "score", "why"])
    if cooccur:
        both = [any(frozenset((x, y)) in cooccur for x in ids.get(a, [a]) for y in ids.get(b, [b]))
                for a, b in zip(df["model_a"], df["model_b"])]
        df = df[~pd.Series(both, index=df.index, dtype=bool) | (df["score"] >= 1.0)]
    # Counted after the co-occurrence rule, so the count is of pairs that would otherwise have been offered.
    steps = df["why"] == CHECKPOINTS
    df = df[~steps].sort_values(["score", "model_a", "model_b"], ascending=[False, True, True], kind="stable")
    df = df.reset_index(drop=True)
    df.attrs["left_out"] = {CHECKPOINTS: int(steps.sum())}
    return df


#: Why :func:`candidate_pairs` leaves a pair out: two training steps of one run are two models by design.
CHECKPOINTS = "checkpoints of one run (revisions @step...)"
_STEP = re.compile(r"(.*)@(?:global[-_]?)?step[-_]?\d+", re.IGNORECASE)


def _checkpoints(ka: str, kb: str) -> bool:
    """Whether two keys are step-named revisions (``@step24000``, ``@global_step500``) of one run."""
    ma, mb = _STEP.fullmatch(ka), _STEP.fullmatch(kb)
    return bool(ma and mb and ma.group(1) == mb.group(1))


def _strip_zeros(nums: tuple) -> tuple:
    nums = list(nums)
    while nums and nums[-1].strip("0") == "":
        nums.pop()
    return tuple(nums)


def _short_dates(na, da, nb, db) -> bool:
    """Numbers differ only by a 4-digit MMDD on one side that is the full date on the other."""
    def split(nums, dates):
        mmdd = {n for n in nums if len(n) == 4}
        return tuple(n for n in nums if n not in mmdd), mmdd, {d[5:7] + d[8:10] for d in dates}
    ra, ma, fa = split(na, da)
    rb, mb, fb = split(nb, db)
    if _strip_zeros(ra) != _strip_zeros(rb):
        return False
    return bool((ma and ma <= fb) or (mb and mb <= fa)) or (not ma and not mb)


# -- user alias files ---------------------------------------------------------------------------------
def read_alias_file(path) -> tuple:
    """``({alias: canonical}, [separate names])`` from a YAML/JSON or CSV alias file.

    Raises
    ------
    SideFileError
        Naming the file and what is wrong with it (:mod:`harness_ext.safe_input` reads it).
    """
    from ..safe_input import load_document, read_rows, suffix_format, wrong_shape

    path = Path(path)
    what = "alias file"
    aliases: dict = {}
    separate: list = []
    fmt = suffix_format(path)
    if fmt in ("csv", "tsv"):
        rows = read_rows(path, what)
        if not rows or [c.strip().lower() for c in rows[0][:2]] != ["alias", "canonical"]:
            raise SideFileError(path, f"{what}: the first line must be the header 'alias,canonical'")
        for i, row in enumerate(rows[1:], start=2):
            if not any(c.strip() for c in row):
                continue
            if len(row) < 2 or not row[0].strip() or not row[1].strip():
                raise SideFileError(path, f"{what}: line {i} needs an alias and a canonical id")
            aliases[row[0].strip()] = row[1].strip()
        return aliases, separate
    doc = load_document(path, what, fmt)
    if not isinstance(doc, dict) or not doc:
        raise wrong_shape(path, what, "the top level", "a mapping with 'aliases' and/or 'separate'", doc)
    unknown = sorted(map(str, set(doc) - {"aliases", "separate"}))
    if unknown:
        raise SideFileError(path, f"{what}: unknown keys {', '.join(map(repr, unknown[:5]))}; expected 'aliases' "
                                  "and/or 'separate'")
    given = doc.get("aliases") or {}
    if not isinstance(given, dict):
        raise wrong_shape(path, what, "'aliases'", "a mapping of canonical id -> list of names", given)
    for canonical, names in given.items():
        if isinstance(names, str):
            names = [names]
        if not _names(canonical) or not isinstance(names, list) or not all(map(_names, names)):
            raise wrong_shape(path, what, f"'aliases' of {canonical!r}", "a list of names", names)
        for n in names:
            aliases[str(n).strip()] = str(canonical).strip()
    sep = doc.get("separate") or []
    if not isinstance(sep, list) or not all(map(_names, sep)):
        raise wrong_shape(path, what, "'separate'", "a list of names", sep)
    separate = [str(n).strip() for n in sep]
    return aliases, separate


def _names(value) -> bool:
    """Whether a value of an alias file can be a model name (a string, or a number spelled as one)."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool) and bool(str(value).strip())


# -- the store's alias table ------------------------------------------------------------------------------
BUILTIN = "builtin"


def _cooccurring(store, models: Optional[list] = None) -> set:
    """Pairs of model names that one source file lists side by side, among names sharing a key.

    ``models``: the store's ``(model_id, name)`` rows, if the caller has them.
    """
    import pyarrow as pa

    if models is None:
        models = store.con.execute("SELECT model_id, name FROM models").fetchall()
    if not models:
        return set()
    keys = [model_key(n) for _, n in models]
    per_key = Counter(keys)
    multi = {mid: (key, n) for (mid, n), key in zip(models, keys) if per_key[key] > 1}
    if not multi:
        return set()
    with store.registered(_multi=pa.table({"model_id": pa.array(list(multi), pa.int64())})) as con:
        pairs = con.execute(
            "SELECT DISTINCT source_id, model_id FROM results WHERE model_id IN (SELECT model_id FROM _multi)").fetchall()
    names: dict = {}  # (source, key) -> the names of that key the source lists
    for sid, mid in pairs:
        key, name = multi[mid]
        names.setdefault((sid, key), set()).add(name)
    out = set()
    for group in names.values():
        if len(group) > 1:
            ns = sorted(group)
            out.update(frozenset((a, b)) for i, a in enumerate(ns) for b in ns[i + 1:])
    return out


def case_pairs(store, models: Optional[list] = None) -> tuple:
    """``(clashing, all)``: the pairs (frozensets) of stored names that differ only by case, and those of them that give
    one result (dataset, metric, shots) values of which none agree
    (:data:`~harness_ext.store.tables.CONFLICT_TOLERANCE`).

    A hub repository id ignores case, so its spellings merge (:func:`model_key`). But a leaderboard that scored two
    spellings apart (the Open LLM Leaderboard's ``DeepMount00/Llama-3.1-8b-ITA`` and ``-Ita``: IFEval 0.79 and 0.54)
    ran two submissions: merged, one row would show one of them under the other's name. Clashing pairs are kept
    apart as names one source lists side by side are (:func:`resolve`'s ``cooccur``), and ``models --unmatched``
    offers them for review. ``models``: the store's ``(model_id, name)`` rows, if the caller has them.
    """
    import pyarrow as pa

    from .tables import CONFLICT_TOLERANCE

    if models is None:
        models = store.con.execute("SELECT model_id, name FROM models").fetchall()
    by_low: dict = {}
    for mid, n in models:
        by_low.setdefault(n.lower(), []).append((mid, n))
    multi = {mid: n for ms in by_low.values() if len(ms) > 1 for mid, n in ms}
    if not multi:
        return set(), set()
    every = {frozenset((a, b)) for ms in by_low.values() for i, (_, a) in enumerate(ms) for _, b in ms[i + 1:]}
    with store.registered(_case=pa.table({"model_id": pa.array(list(multi), pa.int64())})) as con:
        rows = con.execute("SELECT model_id, dataset_id, num_fewshot, value FROM results "
                           "WHERE model_id IN (SELECT model_id FROM _case)").fetchall()
    cells: dict = {}  # (lower-case name, dataset, shots) -> {name: [values]}
    for mid, did, shots, value in rows:
        n = multi[mid]
        cells.setdefault((n.lower(), did, shots), {}).setdefault(n, []).append(value)
    clashing = set()
    for per_name in cells.values():
        names = sorted(per_name)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if all(abs(x - y) > CONFLICT_TOLERANCE for x in per_name[a] for y in per_name[b]):
                    clashing.add(frozenset((a, b)))
    return clashing, every


def stored_variants(store) -> dict:
    """``{stored name: plain name}`` of the models a source named as a variant (:data:`harness_ext.types.VARIANT_OF`)."""
    import json

    from ..types import VARIANT_OF

    rows = store.con.execute("SELECT DISTINCT m.name, mm.value FROM model_metadata mm JOIN models m USING (model_id) "
                             "WHERE mm.key = ?", [VARIANT_OF]).fetchall()
    out = {}
    for name, value in rows:
        try:
            plain = json.loads(value) if isinstance(value, str) else value
        except ValueError:
            continue
        if isinstance(plain, str) and plain:
            out[name] = plain
    return out


def stored_non_default(store) -> set:
    """The stored names a source marked as runs at non-default settings (:data:`harness_ext.types.NON_DEFAULT_VARIANT`:
    an mteb experiment run)."""
    from ..types import NON_DEFAULT_VARIANT

    return {name for (name,) in store.con.execute(
        "SELECT DISTINCT m.name FROM model_metadata mm JOIN models m USING (model_id) WHERE mm.key = ? "
        "AND mm.value = 'true'", [NON_DEFAULT_VARIANT]).fetchall()}


def user_aliases(store) -> tuple:
    """``({alias: canonical}, [separate])`` stored from user alias files."""
    return _split_user(store.con.execute(
        f"SELECT alias, canonical FROM model_aliases WHERE origin <> '{BUILTIN}'").fetchall())


def _split_user(rows: list) -> tuple:
    """``({alias: canonical}, [separate])`` of user alias rows ``(alias, canonical, ...)``: a row naming itself
    keeps that name apart from the built-in merges."""
    return {r[0]: r[1] for r in rows if r[0] != r[1]}, [r[0] for r in rows if r[0] == r[1]]


def refresh_aliases(store) -> dict:
    """Recompute the built-in rows of the alias table from every stored name, in one transaction.

    Idempotent: the same store gives the same table. Returns ``{name: canonical}``.
    """
    models = store.con.execute("SELECT model_id, name FROM models").fetchall()
    stored = store.con.execute("SELECT alias, canonical, origin FROM model_aliases").fetchall()
    user_rows = [r for r in stored if r[2] != BUILTIN]
    aliases, separate = _split_user(user_rows)
    apart = _cooccurring(store, models) | case_pairs(store, models)[0]
    mapping = resolve([n for _, n in models], apart, aliases, separate, stored_variants(store),
                      stored_non_default(store))
    rows = [(a, c, BUILTIN) for a, c in sorted(mapping.items()) if a not in aliases]
    # User canonicals that are names in a built-in group follow the group's id.
    rows += [(a, mapping.get(a, c) if a != c else c, o) for a, c, o in user_rows]
    if set({r[0]: r for r in rows}.values()) == set(stored):  # as _replace keeps them (the last row of an alias)
        return mapping  # the table holds these rows already: no write
    _replace(store, rows)
    return mapping


def add_alias_file(store, path) -> int:
    """Store a user alias file (replacing what an earlier load of the same file stored); returns its entries."""
    aliases, separate = read_alias_file(path)
    origin = f"user:{Path(path).resolve()}"
    keep = store.con.execute("SELECT alias, canonical, origin FROM model_aliases WHERE origin <> ? AND origin <> ?",
                             [BUILTIN, origin]).df()
    new = pd.DataFrame([(a, c, origin) for a, c in aliases.items()] + [(n, n, origin) for n in separate],
                       columns=["alias", "canonical", "origin"])
    keep = keep[~keep["alias"].isin(new["alias"])]
    _replace(store, list(pd.concat([keep, new], ignore_index=True).itertuples(index=False, name=None)))
    refresh_aliases(store)  # the built-in rows, resolved around the user's
    return len(new)


def _replace(store, rows: list) -> None:
    """Make the alias table these ``(alias, canonical, origin)`` rows, the last row of each alias kept (where it
    stands, as ``DataFrame.drop_duplicates(keep="last")`` keeps it), as Arrow columns: no frame for a few rows."""
    import pyarrow as pa

    last: dict = {}
    for r in rows:
        last.pop(r[0], None)  # re-inserted: the alias moves to its last row's place
        last[r[0]] = r
    cols = list(zip(*last.values())) or [(), (), ()]
    frame = pa.table({k: pa.array(list(v), pa.string()) for k, v in zip(("alias", "canonical", "origin"), cols)})
    with store.transaction(_aliases=frame) as con:
        con.execute("DELETE FROM model_aliases")
        con.execute("INSERT INTO model_aliases BY NAME SELECT * FROM _aliases")


def has_alias_table(store) -> bool:
    from .tables import has_table

    return has_table(store.con, "model_aliases")


def model_table(store) -> pd.DataFrame:
    """One row per stored name: ``name, canonical, origin, results, benchmarks, item_scores``.

    Names that only per-item scores carry (an item-response table, a per-sample log without its results file)
    are listed too, with 0 results: a store of item tables alone holds no other names.
    """
    has = {r[0] for r in store.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    alias = "LEFT JOIN model_aliases a ON a.alias = n.name" if "model_aliases" in has else ""
    cols = "coalesce(a.canonical, n.name) AS canonical, coalesce(a.origin, '') AS origin" if alias else \
        "n.name AS canonical, '' AS origin"
    items = ("SELECT model AS name, count(*) AS item_scores FROM samples GROUP BY model" if "samples" in has
             else "SELECT NULL::VARCHAR AS name, 0 AS item_scores WHERE false")
    return store.con.execute(
        f"""WITH r AS (SELECT m.name, count(r.value) AS results,
                              string_agg(DISTINCT d.benchmark, ',' ORDER BY d.benchmark) AS benchmarks
                       FROM models m LEFT JOIN results r USING (model_id) LEFT JOIN datasets d USING (dataset_id)
                       GROUP BY m.name),
                 i AS ({items}),
                 n AS (SELECT coalesce(r.name, i.name) AS name, coalesce(r.results, 0) AS results, r.benchmarks,
                              coalesce(i.item_scores, 0) AS item_scores
                       FROM r FULL OUTER JOIN i ON i.name = r.name)
            SELECT n.name, {cols}, n.results, coalesce(n.benchmarks, '') AS benchmarks, n.item_scores
            FROM n {alias} ORDER BY canonical, n.name""").df()

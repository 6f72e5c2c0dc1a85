"""Regular expressions from results files, checked for catastrophic backtracking before a task YAML keeps them.

lm-eval's ``regex`` and ``multi_choice_regex`` filters compile a task's ``regex_pattern`` (and
``regexes_to_ignore``) with Python's :mod:`re`, a backtracking engine, and search every model answer
with it. A pattern that can match one stretch of an answer in many ways takes time exponential (or a
high power) in the answer's length on an answer that almost matches: one crafted (or unlucky)
generation stops the evaluation. The check is static, on the tree Python itself parses the pattern
into, and conservative (it refuses some patterns that would run fast; every filter of lm-eval's own
tasks passes it). A pattern is refused when

* it nests a repeat inside a repeat (*star height* above 1, the rule of the safe-regex package),
  counting repeats that can match more than once (``*``, ``+``, ``{2,}``, ``{1,5}``; not ``?``):
  ``(a+)+$`` is exponential;
* inside a repeat, it offers a choice whose options can start with the same character: an
  alternation (``(a|a)*$``, ``(a|ab)*c``; Python factors the common ``a`` out and leaves an empty
  option) or an optional part that overlaps the rest of the repeated part (``(a?a)+$``): each repeat
  can then split the same text in many ways, again exponential;
* it refers back to a group (``(a*)\\1``): what a backreference matches depends on earlier choices,
  which the rules above cannot bound;
* two repeats that can match the same character follow each other (``\\d*\\d*$``, or ``.*x.*``
  where the ``x`` can be matched by both): each extra repeat multiplies the work by the answer's
  length. lm-eval searches the answer from every position, so one repeat already costs time in the
  square of the length (about 0.3 s on 3,200 characters), and two such repeats the cube: ``\\d*\\d*$``
  took 46 s on an answer of 1,600 digits. The bound kept is time at most quadratic in the answer's
  length: one such repeat, or two when ``^`` pins the match to the answer's start (lm-eval's own
  ``^(.*?)\\s*$``). Repeats that nothing able to fail follows are not counted: the match is found.

Python merges an alternation of single characters into one set (``(\\w|\\d)`` is ``[\\w\\d]``): no
choice is left to backtrack into, and ``(\\w|\\d)+$`` takes the quadratic time of ``(\\w)+$`` (0.5 s on an
answer of 3,200 letters), so it is kept.
"""

from __future__ import annotations

from typing import Optional

#: Longest pattern kept: lm-eval's own are under 300 characters.
MAX_PATTERN = 2000


def regex_problem(pattern) -> Optional[str]:
    """Why ``pattern`` should not be compiled and run on model answers, or None.

    Parameters
    ----------
    pattern
        A regular expression as a results file gives it (any type).

    Returns
    -------
    str or None
        The reason (it is not text, Python cannot compile it, it is too long, it nests a repeat inside a
        repeat, it offers overlapping choices inside a repeat, it refers back to a group, or it puts repeats
        that can match the same character one after another); None when it is kept.
    """
    import re

    if not isinstance(pattern, str):
        return f"the pattern is a {type(pattern).__name__}, not text"
    if len(pattern) > MAX_PATTERN:
        return f"the pattern is {len(pattern):,} characters long (at most {MAX_PATTERN:,} are kept)"
    try:
        re.compile(pattern)  # what Python refuses to compile (a bad flag, a bad escape), not only to parse
        tree = _parse(pattern)
        height = _star_height(tree)
        if height > 1:
            return ("it repeats a part that itself repeats (star height %d, as in '(a+)+'), which takes time "
                    "exponential in an answer's length to fail to match" % height)
        return _Shape(tree.state.flags).problem(list(tree))
    except (re.error, RecursionError, OverflowError, ValueError, TypeError) as exc:
        return f"Python cannot read it as a regular expression ({type(exc).__name__})"


def _parse(pattern: str):
    try:
        from re import _parser  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as _parser
    return _parser.parse(pattern)


def _constants():
    try:
        from re import _constants as c
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_constants as c
    return c


def _star_height(items) -> int:
    """How deeply repeats that can match more than once nest in the parsed pattern ``items``."""
    c = _constants()
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)}
    height = 0
    for op, av in items:
        if op in repeats:
            low, high, sub = av
            inner = _star_height(sub)
            height = max(height, inner + (1 if high == c.MAXREPEAT or high > 1 else 0))
        elif op is c.SUBPATTERN:
            height = max(height, _star_height(av[-1]))
        elif op is c.BRANCH:
            height = max([height] + [_star_height(b) for b in av[1]])
        elif op in (c.ASSERT, c.ASSERT_NOT):
            height = max(height, _star_height(av[1]))
        elif op is getattr(c, "ATOMIC_GROUP", None):
            height = max(height, _star_height(av))
        elif op is c.GROUPREF_EXISTS:
            height = max([height] + [_star_height(b) for b in av[1:] if b is not None])
    return height


#: The characters the overlap checks try: ASCII, Latin-1, Latin Extended-A and a few others (spaces, digits and
#: letters of other scripts), enough to tell apart the classes patterns use (\d, \s, \w, ranges, literals).
_SAMPLE = [chr(i) for i in range(0x250)] + list("\u0660\u0966\u2028\u3000\u4e00\u0416\u05d0\u0627\uff10\U0001f600")


class _Shape:
    """The checks after star height, on Python's parse tree: choices inside repeats, backreferences, and chains
    of repeats that can match the same character. Each character set is the set of ``_SAMPLE`` it matches."""

    def __init__(self, flags: int):
        import re

        self.flags = flags
        self.c = _constants()
        self.repeats = {self.c.MAX_REPEAT, self.c.MIN_REPEAT, getattr(self.c, "POSSESSIVE_REPEAT", self.c.MAX_REPEAT)}
        self.all = frozenset(_SAMPLE)
        cat = {"DIGIT": r"\d", "NOT_DIGIT": r"\D", "SPACE": r"\s", "NOT_SPACE": r"\S", "WORD": r"\w",
               "NOT_WORD": r"\W", "LINEBREAK": r"\n", "NOT_LINEBREAK": r"[^\n]"}
        self.category = {}
        for name, rx in cat.items():
            chars = frozenset(ch for ch in _SAMPLE if re.fullmatch(rx, ch))
            for prefix in ("CATEGORY_", "CATEGORY_LOC_", "CATEGORY_UNI_"):
                if hasattr(self.c, prefix + name):
                    self.category[getattr(self.c, prefix + name)] = chars

    def problem(self, items) -> Optional[str]:
        if self._has(items, {self.c.GROUPREF}):
            return ("it refers back to a group (as in '(a*)\\1'), whose match the other checks cannot bound: "
                    "it can take time exponential in an answer's length")
        where = self._choice_in_repeat(items, False)
        if where:
            return (f"inside a repeat it offers {where} (as in '(a|ab)*c' or '(a?a)+'), each repeat then able to "
                    "split the same text in many ways, which takes time exponential in an answer's length to fail to match")
        # lm-eval searches from every position, one more factor of the length, unless '^' pins the start.
        if self._chain(items, top=True) + (0 if self._anchored(items) else 1) > 2:
            return ("it puts repeats that can match the same character one after another (as in '\\d*\\d*$'), "
                    "which takes time in the cube (or a higher power) of an answer's length to fail to match")
        return None

    # -- what an item matches ---------------------------------------------------------------------------------
    def _children(self, op, av) -> list:
        """The item lists inside one item (none for a single character)."""
        c = self.c
        if op in self.repeats:
            return [av[2]]
        if op is c.SUBPATTERN:
            return [av[-1]]
        if op is c.BRANCH:
            return list(av[1])
        if op in (c.ASSERT, c.ASSERT_NOT):
            return [av[1]]
        if op is getattr(c, "ATOMIC_GROUP", None):
            return [av]
        if op is c.GROUPREF_EXISTS:
            return [b for b in av[1:] if b is not None]
        return []

    def _has(self, items, ops) -> bool:
        return any(op in ops or any(self._has(sub, ops) for sub in self._children(op, av)) for op, av in items)

    def _char(self, op, av):
        """The characters one single-character item matches, or None for an item that is not one."""
        c = self.c
        if op is c.LITERAL:
            return frozenset({chr(av), chr(av).lower(), chr(av).upper()})  # either case: a flag may ignore it
        if op is c.NOT_LITERAL:
            return self.all - {chr(av)}
        if op is c.ANY:
            return self.all
        if op is c.IN:
            return self._in(av)
        return None

    def _in(self, av) -> frozenset:
        c = self.c
        chars, negate = set(), False
        for op, a in av:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                chars |= {chr(a), chr(a).lower(), chr(a).upper()}
            elif op is c.RANGE:
                chars |= {ch for ch in _SAMPLE if a[0] <= ord(ch) <= a[1] or a[0] <= ord(ch.swapcase()[:1]) <= a[1]}
            elif op is c.CATEGORY:
                chars |= self.category.get(a, self.all)
            else:  # anything else: it may match anything
                chars |= self.all
        return self.all - chars if negate else frozenset(chars)

    def _first(self, items, last: bool = False):
        """``(characters a match of the item list can start with (end with, if ``last``), whether it can match
        nothing)``."""
        first = set()
        for op, av in (reversed(items) if last else items):
            chars, empty = self._item_first(op, av, last)
            first |= chars
            if not empty:
                return frozenset(first), False
        return frozenset(first), True

    def _item_first(self, op, av, last: bool = False):
        c = self.c
        one = self._char(op, av)
        if one is not None:
            return one, False
        if op in self.repeats:
            chars, empty = self._first(av[2], last)
            return chars, empty or av[0] == 0
        if op is c.SUBPATTERN:
            return self._first(av[-1], last)
        if op is getattr(c, "ATOMIC_GROUP", None):
            return self._first(av, last)
        if op in (c.BRANCH, c.GROUPREF_EXISTS):
            branches = [self._first(b, last) for b in self._children(op, av)]
            empty = any(e for _, e in branches) or (op is c.GROUPREF_EXISTS and av[2] is None)
            return frozenset().union(*(ch for ch, _ in branches)), empty
        if op is c.GROUPREF:
            return self.all, True
        return frozenset(), True  # anchors and lookarounds match no character

    def _chars(self, items) -> frozenset:
        """Every character the item list can consume."""
        out = set()
        for op, av in items:
            one = self._char(op, av)
            out |= one if one is not None else set()
            for sub in self._children(op, av):
                if op not in (self.c.ASSERT, self.c.ASSERT_NOT):
                    out |= self._chars(sub)
        return frozenset(out)

    def _many(self, op, av) -> bool:
        return op in self.repeats and (av[1] == self.c.MAXREPEAT or av[1] > 1)

    # -- choices inside a repeat ------------------------------------------------------------------------------
    def _choice_in_repeat(self, items, inside: bool) -> Optional[str]:
        """What choice with overlapping options the item list offers inside a repeat, or None."""
        c = self.c
        for i, (op, av) in enumerate(items):
            if inside and op in (c.BRANCH, c.GROUPREF_EXISTS):
                branches = [self._first(b) for b in self._children(op, av)]
                if any(e for _, e in branches) or _overlap([ch for ch, _ in branches]):
                    return "an alternation whose options can start with the same character"
            if inside and op in self.repeats and not self._many(op, av) and av[0] != av[1]:
                # An optional part: taking it or not must not leave the same next character for the rest.
                rest = self._chars(list(items[:i]) + list(items[i + 1:]))
                if self._chars(av[2]) & rest:
                    return "an optional part that can match the same character as the rest"
            for sub in self._children(op, av):
                where = self._choice_in_repeat(sub, inside or self._many(op, av))
                if where:
                    return where
        return None

    # -- repeats one after another ----------------------------------------------------------------------------
    def _chain(self, items, top: bool = False) -> int:
        """The most repeats, one after another in the item list (or one inside), that can match a same character
        with nothing between them that stops it: each a factor of the answer's length in the time to fail. A
        chain the rest of the pattern cannot fail after (only at the top level) costs nothing: the match is found."""
        flat = self._flatten(items)
        longest, ends = 0, []  # ends[j]: the longest chain ending at flat[j] (0 when flat[j] is no repeat)
        for j, (chars, empty, rep, start, end, fails) in enumerate(flat):
            best = 0
            if rep is not None:
                best = 1
                between = []  # the parts between i and j that must match (or test) something
                for i in range(j - 1, -1, -1):  # back from j: a part that must match a character j cannot ends it
                    shared = flat[i][4] & start
                    if ends[i] and shared and all(ch & shared for ch in between):
                        best = max(best, ends[i] + 1)
                    if not flat[i][1] and not flat[i][0] & start:
                        break
                    if flat[i][5] or not flat[i][1]:
                        between.append(flat[i][0])
            ends.append(best)
            if not top or any(f or not e for _, e, _, _, _, f in flat[j + 1:]):
                longest = max(longest, best)
            if longest > 2:  # refused whatever the rest holds
                return longest
        nested = [self._chain(sub) for op, av in items if op in (self.c.BRANCH, self.c.GROUPREF_EXISTS)
                  or (op in self.repeats and not self._many(op, av)) for sub in self._children(op, av)]
        return max([longest] + nested)

    def _flatten(self, items) -> list:
        """Per item, groups opened: ``(characters, can be empty, characters of the repeats inside or None, first
        characters, last characters, is a test that can fail without consuming a character)``."""
        c = self.c
        out = []
        for op, av in items:
            if op is c.SUBPATTERN or op is getattr(c, "ATOMIC_GROUP", None):
                out += self._flatten(av[-1] if op is c.SUBPATTERN else av)
                continue
            if op in (c.ASSERT, c.ASSERT_NOT, c.AT):
                out.append((frozenset(), True, None, frozenset(), frozenset(), True))
                continue
            chars = self._chars([(op, av)])
            start, empty = self._item_first(op, av)
            end, _ = self._item_first(op, av, last=True)
            reps = self._repeat_chars([(op, av)])
            out.append((chars, empty, reps or None, start, end, False))
        return out

    def _anchored(self, items) -> bool:
        """Whether a match can start only at the answer's start (``^`` without MULTILINE, or ``\\A``)."""
        import re

        c = self.c
        op, av = items[0] if items else (None, None)
        begin = {c.AT_BEGINNING_STRING} | (set() if self.flags & re.MULTILINE else {c.AT_BEGINNING})
        return op is c.AT and av in begin

    def _repeat_chars(self, items) -> frozenset:
        out = set()
        for op, av in items:
            if self._many(op, av):
                out |= self._chars(av[2])
            elif op not in (self.c.ASSERT, self.c.ASSERT_NOT):
                for sub in self._children(op, av):
                    out |= self._repeat_chars(sub)
        return frozenset(out)


def _overlap(sets) -> bool:
    seen = set()
    for s in sets:
        if seen & s:
            return True
        seen |= s
    return False

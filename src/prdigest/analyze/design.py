"""Design ideas the diff shows in code: the patterns behind a "why" an expert would name.

Each pattern is a regular expression over the added source lines (a removed host sync looks at
deleted lines), with the design idea it expresses; a writer says the idea only where a fact of
this kind exists, so "snapshot under a lock" is never said of a PR without a lock. The table is
the one place to teach prdigest a new pattern.

Patterns look at Python lines of source files (and, for the concurrency patterns, test files:
``threading.Event`` in a test pins the order of events); C++ and AscendC kernels are left to
their symbols.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from prdigest.analyze.code import EVENT_USE, LOGGING_CALL, definition_in, hunk_definition
from prdigest.analyze.patches import ADDED, CONTEXT, REMOVED, DiffLine, Hunk, ParsedPatch
from prdigest.core.models import DesignFact, FileFact, Provenance, Role


@dataclass(frozen=True, slots=True)
class Pattern:
    id: str
    regex: re.Pattern[str]
    side: str = ADDED  # which lines: added, or removed (a removed host sync)
    tests: bool = False  # also in test files
    source: bool = True  # in source files
    infra: bool = False  # in CI and build files, any language (shell, YAML, Python scripts)
    # Literal words one of which every match of ``regex`` contains: a file side holding none
    # of them is ruled out by substring tests, without a regex pass (tests/test_design.py
    # checks the words against the regex on sample lines).
    words: tuple[str, ...] = ()


PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "lock",
        re.compile(
            r"\bthreading\.(?:R?Lock|Condition)\b|\bwith self\.\w*lock\w*\b|\basyncio\.Lock\b"
        ),
        words=("threading.", "with self.", "asyncio.Lock"),
    ),
    Pattern(
        "event",
        re.compile(
            # an Event made, not named in an annotation (`current_event: torch.npu.Event`)
            r"\bthreading\.Event\(|\btorch\.(?:npu|cuda)\.Event\(|\.record_event\(|\.wait_event\(|"
            r"\bcurrent_stream_wait\b|\.wait_stream\("
        ),
        tests=True,
        words=("Event", ".record_event(", ".wait_event(", "current_stream_wait", ".wait_stream("),
    ),
    Pattern(
        "stream",
        re.compile(r"\btorch\.(?:npu|cuda)\.(?:Stream|stream)\b|\bnpu_stream_switch\b"),
        words=("torch.", "npu_stream_switch"),
    ),
    Pattern(
        "thread_pool",
        re.compile(
            r"\bThreadPoolExecutor\b|\bthreading\.Thread\(|\bconcurrent\.futures\b|\bqueue\.(?:Simple)?Queue\("
        ),
        words=("ThreadPoolExecutor", "threading.Thread(", "concurrent.futures", "queue."),
    ),
    Pattern(
        "async",
        re.compile(
            r"^\s*async def \w+|\bawait asyncio\.|\basyncio\.(?:gather|create_task|wait_for)\("
        ),
        words=("async def", "asyncio."),
    ),
    Pattern(
        "state_enum",
        re.compile(r"^\s*class \w+\((?:enum\.)?(?:Int|Str)?Enum\)"),
        words=("Enum)",),
    ),
    Pattern(
        "extension_point",
        re.compile(r"^\s*class \w+\((?:\w+, )*(?:ABC|Protocol|\w+Mixin)\)|@abstractmethod"),
        words=("ABC)", "Protocol)", "Mixin)", "@abstractmethod"),
    ),
    Pattern(  # a raise on an unsupported case, or an attribute asserted to be one of a few values
        "fail_closed",
        re.compile(
            r"^\s*raise (?:NotImplementedError|ValueError|RuntimeError|AssertionError)\(|"
            r"^\s*assert self\.\w+ in (?:\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\})"
        ),
        words=("raise ", "assert self."),
    ),
    Pattern(  # a removed "not supported" raise: a case once refused is let through
        "refusal_removed",
        re.compile(r"^\s*raise NotImplementedError\("),
        side=REMOVED,
        words=("raise NotImplementedError(",),
    ),
    Pattern(
        "version_gate",
        re.compile(r"\bvllm_version_is\(|\bversion\.parse\(|__version__\s*[<>=!]=?|\bis_version_"),
        words=("vllm_version_is(", "version.parse(", "__version__", "is_version_"),
    ),
    Pattern(
        "infra_logic",
        re.compile(
            r"^\s*(?:if |elif |else\b|for |while |case |function \w|def \w|\w+\(\)\s*\{|try:)"
        ),
        source=False,
        infra=True,
        words=("if ", "else", "for ", "while ", "case ", "function ", "def ", "()", "try:"),
    ),
    Pattern(  # a CI job or step whose failure does not fail the run
        "soft_fail",
        re.compile(r"^\s*continue-on-error:\s*true\b"),
        source=False,
        infra=True,
        words=("continue-on-error",),
    ),
    Pattern(  # one run of a group at a time; a newer waiting run replaces an older one
        "run_group",
        re.compile(r"^\s*concurrency(?=:)"),
        source=False,
        infra=True,
        words=("concurrency",),
    ),
    Pattern(  # a newer run of the group cancels the one in progress (superseded pushes)
        "run_superseded",
        re.compile(r"^\s*cancel-in-progress:\s*true\b"),
        source=False,
        infra=True,
        words=("cancel-in-progress",),
    ),
    Pattern(  # a repository secret a workflow reads (the run's own token is routine)
        "secret",
        re.compile(r"\bsecrets\.(?!GITHUB_TOKEN\b)[A-Z][A-Z0-9_]*"),
        source=False,
        infra=True,
        words=("secrets.",),
    ),
    Pattern(
        "host_sync_removed",
        re.compile(
            r"\.(?:item|tolist|cpu)\(\)|\btorch\.(?:npu|cuda)\.synchronize\(|\.synchronize\(\)"
        ),
        side=REMOVED,
        words=(".item()", ".tolist()", ".cpu()", "synchronize("),
    ),
)
MAX_PER_PATTERN = 3
# patterns found in deleted lines: their line numbers are of the old side
REMOVED_SIDE = frozenset(p.id for p in PATTERNS if p.side == REMOVED)
GUARDED = ("fail_closed", "refusal_removed")  # patterns whose ``if`` condition is kept
MAX_GUARD = 70  # a longer condition is not said: it would not read as one code name
_IF = re.compile(r"^\s*(?:if|elif)\s+(.+?):\s*(?:#.*)?$")


def _candidates(fact: FileFact, pattern: Pattern) -> bool:
    if pattern.infra and fact.role in (Role.CI, Role.BUILD):
        return True
    if fact.language != "python":
        return False
    if pattern.side == REMOVED and fact.status == "removed":
        return False  # a deleted module's code is gone as a whole, not changed
    in_test = fact.role is Role.TEST
    return (pattern.tests and in_test) or (pattern.source and fact.role is Role.SOURCE)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def guard(lines: tuple[DiffLine, ...], at: int) -> str:
    """The condition under which line ``at`` of a hunk runs (on that line's side of the diff):
    the one-line ``if`` whose body holds it, joined with the ``if``s that hold that one in turn
    (``a > 0 and b is None``), or "" when the line is not directly in an ``if`` body, when an
    ``elif``, ``else`` or ``except`` decides it (earlier branches count too), or when the
    condition would be too long to read as one code name."""
    side, indent = lines[at].kind, _indent(lines[at].text)
    conditions: list[str] = []
    for line in reversed(lines[:at]):
        text = line.text
        if line.kind not in (side, CONTEXT) or not text.strip() or text.lstrip()[:1] == "#":
            continue
        if _indent(text) >= indent:
            continue
        indent = _indent(text)
        head = text.lstrip()
        match = _IF.match(text) if head.startswith("if ") else None
        if not conditions and match is None:
            return ""  # not directly under a one-line `if`
        if match is not None:
            conditions.append(match.group(1).strip())
        elif head.startswith(("elif ", "else", "except", "case ")):
            return ""
        elif head.startswith(("def ", "async def ", "class ")) or indent == 0:
            break
    several = len(conditions) > 1
    joined = " and ".join(f"({c})" if several and " or " in c else c for c in reversed(conditions))
    return joined if len(joined) <= MAX_GUARD and "`" not in joined else ""


def scope_of(hunk: Hunk, at: int) -> str:
    """The function line ``at`` of a hunk sits in (on that line's side of the diff): the
    nearest ``def`` above it with less indentation, else the one git names in the hunk
    header; "" at module level or in a class body."""
    return _enclosing(hunk, at, ("function", "method"), stop=("class",))


def class_of(hunk: Hunk, at: int) -> str:
    """The class line ``at`` of a hunk sits in, through the functions it sits in ("" when
    the hunk does not show it)."""
    return _enclosing(hunk, at, ("class",), stop=())


def _enclosing(hunk: Hunk, at: int, kinds: tuple[str, ...], stop: tuple[str, ...]) -> str:
    """The nearest definition of ``kinds`` around line ``at`` ("" at module level, or at a
    definition of ``stop`` first)."""
    side, indent = hunk.lines[at].kind, _indent(hunk.lines[at].text)
    for line in reversed(hunk.lines[:at]):
        text = line.text
        if line.kind not in (side, CONTEXT) or not text.strip() or _indent(text) >= indent:
            continue
        definition = definition_in(text, "python")
        if definition is not None and definition.kind in kinds:
            return definition.name
        if definition is not None and definition.kind in stop:
            return ""
        indent = _indent(text)
        if indent == 0:
            return ""
    opened = hunk_definition(hunk, "python")
    return opened.name if opened is not None and opened.kind in kinds else ""


def _scope(pattern: str, hunk: Hunk, at: int, guard: str) -> str:
    """Where a raise is said to sit: the function its condition holds in, or, for a raise
    without a condition, the function or class that gains it (``AscendConfig`` 中新增 …)."""
    if pattern not in GUARDED:
        return ""
    if not guard and pattern != "fail_closed":
        return ""  # a removed refusal without its condition is said without a place
    function = scope_of(hunk, at)
    if guard and not function:
        return ""  # the condition holds in no function the hunk shows
    if function and not function.startswith("__"):
        return function
    return class_of(hunk, at)  # `__init__` says less than its class


def _sides(patch: ParsedPatch) -> dict[str, str]:
    lines: dict[str, list[str]] = {ADDED: [], REMOVED: []}
    for hunk in patch.hunks:
        for line in hunk.lines:
            side = lines.get(line.kind)
            if side is not None:
                side.append(line.text)
    return {kind: "\n".join(texts) for kind, texts in lines.items()}


def _net(code: str, side: str, sides: dict[str, str]) -> bool:
    """Whether the matched code is new (or gone) on balance: not also on the other side of the
    file's patch, as code that only moves is."""
    other = REMOVED if side == ADDED else ADDED
    return code.strip() not in sides.get(other, "")


def _net_over_pr(
    found: list[DesignFact],
    parsed: list[tuple[FileFact, ParsedPatch]],
    known: dict[int, dict[str, str]],
) -> list[DesignFact]:
    """A fact is net when the PR as a whole has its code more often on its side than on the
    other (a raise moved between files, or two removed for one added, is no new raise);
    ``known`` holds the sides already joined, by index in ``parsed``."""
    if not found:
        return found
    texts = {ADDED: [], REMOVED: []}  # type: dict[str, list[str]]
    for index, (_fact, patch) in enumerate(parsed):
        sides = known.get(index) or _sides(patch)
        texts[ADDED].append(sides[ADDED])
        texts[REMOVED].append(sides[REMOVED])
    added, removed = "\n".join(texts[ADDED]), "\n".join(texts[REMOVED])
    out = []
    for fact in found:
        mine, other = (removed, added) if fact.pattern in REMOVED_SIDE else (added, removed)
        net = fact.net and mine.count(fact.label) > other.count(fact.label)
        out.append(fact if net == fact.net else fact.model_copy(update={"net": net}))
    return out


# calls that make the host wait for the device, of any spelling: a removed `.item()` replaced
# by `torch.allclose(…)` (a Python bool too) removes no sync
_SYNC_CALL = re.compile(r"\.(?:item|tolist|cpu)\(\)|\bsynchronize\(|\btorch\.(?:allclose|equal)\(")
SYNC_TWIN_LIKENESS = 0.6  # an added line this alike to the removed one is its new form


def _sync_kept(removed: str, added: str) -> bool:
    """Whether a removed syncing line comes back rewritten with a sync of its own: an added
    line of the file alike to it that also makes the host wait."""
    text = removed.strip()
    return any(
        _SYNC_CALL.search(line)
        and SequenceMatcher(None, text, line.strip()).ratio() >= SYNC_TWIN_LIKENESS
        for line in added.splitlines()
    )


RAISE_NEAR = 6  # lines of a hunk around a removed sync where a raise takes its place
_RAISE = re.compile(r"^\s*raise\b")


def _refused_instead(lines: Sequence[DiffLine], at: int) -> bool:
    """Whether added lines next to a removed ``.cpu()`` raise: device data is refused now
    (``raise TypeError(\"… must be computed from CPU\")``), not copied without a sync."""
    near = lines[max(0, at - RAISE_NEAR) : at + RAISE_NEAR + 1]
    return any(x.kind == ADDED and _RAISE.match(x.text) for x in near)


_RECEIVER = re.compile(r"[\w.\[\]]+$")
_HOST_DATA = re.compile(
    r"(?:^|[._])(?:np|numpy|array|arr|list|cpu)(?:$|[._\[])|_np$|_array$|_cpu$", re.I
)


def _not_a_host_sync(pattern: str, text: str, at: int) -> bool:
    """A removed ``.tolist()``/``.item()`` that syncs nothing: an argument of a logging call
    (a removed debug line), or called on what its name says is host data (a NumPy array, a
    ``slot_mapping_cpu`` tensor)."""
    if pattern != "host_sync_removed" or "synchronize" in text[at:]:
        return False
    if LOGGING_CALL.search(text):
        return True
    receiver = _RECEIVER.search(text[:at])
    return receiver is not None and _HOST_DATA.search(receiver.group(0)) is not None


def detect(parsed: Iterable[tuple[FileFact, ParsedPatch]], first_id: int = 1) -> list[DesignFact]:
    """Design facts of the PR, at most :data:`MAX_PER_PATTERN` of each pattern."""
    parsed_list = list(parsed)
    found: list[DesignFact] = []
    counts: dict[str, int] = {}
    known: dict[int, dict[str, str]] = {}
    for index, (fact, patch) in enumerate(parsed_list):
        sides: dict[str, str] | None = None
        for pattern in PATTERNS:
            if counts.get(pattern.id, 0) >= MAX_PER_PATTERN or not _candidates(fact, pattern):
                continue
            if sides is None:
                sides = known[index] = _sides(patch)
            words = pattern.words
            if not any(word in sides[pattern.side] for word in words):
                continue
            if (
                pattern.id == "event"
                and fact.role is Role.TEST
                and not EVENT_USE.search(sides[ADDED])
            ):
                continue  # events a test makes but never sets or waits on order nothing
            for hunk in patch.hunks:
                for at, line in enumerate(hunk.lines):
                    if line.kind != pattern.side or not any(w in line.text for w in words):
                        continue
                    match = pattern.regex.search(line.text)
                    if match is None:
                        continue
                    number = line.new_no if pattern.side == ADDED else line.old_no
                    said = guard(hunk.lines, at) if pattern.id in GUARDED else ""
                    found.append(
                        DesignFact(
                            id=f"d{first_id + len(found)}",
                            provenance=Provenance(kind="file", ref=fact.path, line=number),
                            pattern=pattern.id,
                            label=match.group(0).strip().rstrip("("),
                            path=fact.path,
                            line=number,
                            in_test=fact.role is Role.TEST,
                            net=_net(match.group(0), pattern.side, sides)
                            and not _not_a_host_sync(pattern.id, line.text, match.start())
                            and not (
                                pattern.id == "host_sync_removed"
                                and (
                                    _sync_kept(line.text, sides[ADDED])
                                    or _refused_instead(hunk.lines, at)
                                )
                            ),
                            guard=said,
                            scope=_scope(pattern.id, hunk, at, said),
                        )
                    )
                    counts[pattern.id] = counts.get(pattern.id, 0) + 1
                    if counts[pattern.id] >= MAX_PER_PATTERN:
                        break
                if counts.get(pattern.id, 0) >= MAX_PER_PATTERN:
                    break
    found += guarded_code(parsed_list, first_id + len(found))
    return _net_over_pr(found, parsed_list, known)


MIN_WRAPPED = 2  # lines of existing code a new condition must take in: one line is an edit
_VERSION_CHECK = next(p.regex for p in PATTERNS if p.id == "version_gate")


def guarded_code(parsed: Sequence[tuple[FileFact, ParsedPatch]], first_id: int) -> list[DesignFact]:
    """A new ``if`` put around existing code of a Python source file: the lines after it are
    the removed ones, indented under it and said once (``self.compress_ratio == 4`` wrapping the
    indexer calls): that code now runs only when the condition holds. Version checks are the
    version gate's."""
    found: list[DesignFact] = []
    for fact, patch in parsed:
        if fact.role is not Role.SOURCE or fact.language != "python" or patch.error:
            continue
        for hunk in patch.hunks:
            for at, condition in _wrapping_ifs(hunk):
                if len(found) >= MAX_PER_PATTERN:
                    return found
                line = hunk.lines[at].new_no
                found.append(
                    DesignFact(
                        id=f"d{first_id + len(found)}",
                        provenance=Provenance(kind="file", ref=fact.path, line=line),
                        pattern="guarded_code",
                        label=condition,
                        path=fact.path,
                        line=line,
                        guard=condition,
                        scope=scope_of(hunk, at),
                    )
                )
    return found


def _wrapping_ifs(hunk: Hunk) -> Iterator[tuple[int, str]]:
    """(index, condition) of each added ``if``/``elif`` of a block of changed lines whose body
    starts with at least :data:`MIN_WRAPPED` of the block's removed lines, each added once."""
    lines = hunk.lines
    start = 0
    while start < len(lines):
        if lines[start].kind == CONTEXT:
            start += 1
            continue
        end = start
        while end < len(lines) and lines[end].kind != CONTEXT:
            end += 1
        block = range(start, end)
        if not any(lines[i].kind == ADDED and "if " in lines[i].text for i in block) or all(
            lines[i].kind == ADDED for i in block
        ):
            start = end
            continue  # no new `if`, or no old code for one to take in (most blocks)
        removed = Counter(lines[i].text.strip() for i in block if lines[i].kind == REMOVED)
        added = Counter(lines[i].text.strip() for i in block if lines[i].kind == ADDED)
        for at in block:
            found = _wrapping(lines, at, end, removed, added)
            if found:
                yield at, found
        start = end


def _wrapping(
    lines: tuple[DiffLine, ...], at: int, end: int, removed: Counter[str], added: Counter[str]
) -> str:
    """The condition of the added ``if`` at ``at`` when it wraps removed lines ("" if not)."""
    line = lines[at]
    match = _IF.match(line.text) if line.kind == ADDED and "if " in line.text else None
    if match is None or removed[line.text.strip()]:
        return ""
    condition = match.group(1).strip()
    if len(condition) > MAX_GUARD or "`" in condition or _VERSION_CHECK.search(condition):
        return ""
    depth, wrapped, first = _indent(line.text), 0, ""
    for below in lines[at + 1 : end]:
        if below.kind != ADDED or _indent(below.text) <= depth:
            break
        text = below.text.strip()
        if not removed[text] or added[text] != 1:
            break  # new code under the condition, or code said again elsewhere
        if not text.startswith("#"):  # a comment taken in is no code
            wrapped += 1
            first = first or text
    if wrapped < MIN_WRAPPED or _was_conditional(lines, first):
        return ""
    return condition


_ELSE = re.compile(r"^\s*else\s*:\s*(?:#.*)?$")


def _was_conditional(lines: tuple[DiffLine, ...], text: str) -> bool:
    """Whether the old side ran ``text`` under a branch the PR removes (an environment check
    rewritten as ``if not self._use_fabric_mem:``): a condition rewritten, not added."""
    old = [x for x in lines if x.kind != ADDED]
    for index, x in enumerate(old):
        if x.kind == REMOVED and x.text.strip() == text:
            depth = _indent(x.text)
            for above in reversed(old[:index]):
                if above.text.strip() and _indent(above.text) < depth:
                    branch = _IF.match(above.text) or _ELSE.match(above.text)
                    return above.kind == REMOVED and branch is not None
            return False
    return False

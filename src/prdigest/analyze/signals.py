"""Risk and follow-up signals: what a careful reader would want pointed out.

Each detector looks at added (or removed) lines of parsed patches, or at other facts, and
returns :class:`SignalFact` s naming the exact code that triggered it. Detectors are plain
regular expressions on purpose: they must be cheap on a 30,000-line diff and explainable.

Assumptions:

* "Magic threshold": only a tunable — a module-level UPPER_CASE constant of a Python source
  file assigned a bare number ≥ 2 whose name says it bounds something (``MAX_``, ``_LIMIT``,
  ``TIMEOUT``, ``_NUM_``, ``BATCH``, ``CHUNK`` …) and not a format, type, mode, dimension or
  mask (``MASK_TYPE_…``, ``NZ_FMT_LAST_DIM``); or an ordering comparison (``<``, ``>=`` …) in
  an ``if``/``elif``/``while`` against a literal of two or more digits, where the compared
  side is no model shape, dimension, ratio, length or version. Equality with a literal
  (``compress_ratio == 128``) selects a case of an enum-like model constant and is no
  threshold. Kernels compare against tile sizes by design: C/C++ files, Triton kernels and
  tooling outside the package (``csrc/``, ``scripts/``, ``tools/``) are not scanned. Ports,
  sizes in tests and version numbers are not flagged because only source-role files are
  scanned.
* "Env var": a name read from the environment (``environ[…]``, ``getenv(…)``, ``envs.X``)
  or, where the preset gives prefixes (``VLLM_``), any new token with that prefix that the
  removed lines did not have.
* "Source change without tests": no test file touched, and either a fix that changes source
  or at least 10 changed source lines of a kind other than docs/ci/deps/chore.
* "Follow-up promised": a conversation remark that defers work ("follow-up", "separate PR",
  "not for this PR").
* "Swallowed exception": a broad catch (bare ``except``, ``Exception``, ``BaseException``) whose
  body is ``pass``; a specific exception passed is taken as the intended handling of an
  expected case (a parse fallback, a best-effort cleanup). "Silent clamp": ``min(x, len(y) …)``
  cutting a count or index, but not as the bound of a ``range()``.
* "Tests deleted": not a placeholder (a body of ``pass``, ``...`` or a docstring), not a test
  folded into one parametrized test whose name it extends, not one gone with the source
  definition it is named after.
* "Empty test result": not when the body states results elsewhere (a before → after figure, a
  result/accuracy/latency line with a number, a table row of numbers, a benchmark heading).
* "Default changed": in a Python source file, a removed line and the added line that replaces
  it (one run of removed then added lines) give the same option another literal default
  (``True``/``False``/``None``/a number, not ``0`` → ``0.0``): a config lookup
  (``.get("key", False)``, or its ``"key", False`` argument line), an annotated field or
  parameter (``key: bool = False``) or an argparse ``default=``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher
from pathlib import PurePosixPath

from prdigest.analyze.body import prose_sentences, testing_of, user_facing_of, visible_lines
from prdigest.analyze.code import (
    PARAMETRIZE,
    bracket_depth,
    definition_in,
    language_of,
    worded_lines,
)
from prdigest.analyze.design import guard
from prdigest.analyze.moves import Moves
from prdigest.analyze.patches import ADDED, CONTEXT, REMOVED, DiffLine, Hunk, ParsedPatch
from prdigest.core.models import (
    ChecksSummary,
    CommitFact,
    Coverage,
    DiffCoverage,
    FileFact,
    Kind,
    Provenance,
    RemarkFact,
    Role,
    SectionFact,
    SignalFact,
    SignalKind,
    TestFact,
    ThreadFact,
)

_TODO_WORD = re.compile(r"TODO|FIXME|XXX|HACK")  # a cheap test before _TODO's
_TODO = re.compile(
    r"(?:#|//|/\*|\*|--)\s*(?P<tag>TODO|FIXME|XXX|HACK)\b(?:\((?P<owner>[^)]{1,40})\))?:?\s*(?P<text>.*)"
)
_SKIP = re.compile(
    r"@pytest\.mark\.(?:skip|skipif|xfail)\b|\bpytest\.skip\(|#\[ignore\]|\bunittest\.skip\b"
)
_GATE_REASON = (
    r"\b(?:not available|unavailable|not installed|requires?|needs?|not supported|"
    r"only (?:appl(?:y|ies)|for|on|supported|runs?)|supports? [\w-]+ only|only supports?)\b"
)
# a skipif whose condition is the environment (a missing optional package, device or platform):
# the test runs where it can, nobody needs to come back to it
_CAPABILITY_SKIP = re.compile(
    r"@pytest\.mark\.skipif\((?:\s*[\w.]+\s+is\s+None\b|\s*not\s+(?:HAS_\w+|\w*_AVAILABLE\b)"
    r"|\s*(?:not\s+)?[\w.]*(?:is_available|device_count)\(\)|\s*sys\.platform"
    rf"|.*\breason\s*=\s*[\"'][^\"']*{_GATE_REASON})"
    # a module skipped where it does not apply ("… only applies to vLLM 0.23.0")
    rf"|\bpytest\.skip\(\s*(?:reason\s*=\s*)?[\"'][^\"']*{_GATE_REASON}",
    re.I,
)
MAX_CALL_LINES = 8  # a skip decorator's condition and reason, wrapped over lines


def _call_from(lines: Sequence[DiffLine], index: int, start: int) -> str:
    """The call that opens at ``start`` of ``lines[index]``, joined up to its closing bracket
    (a formatter wraps ``skipif(`` and puts its condition on the next line)."""
    parts: list[str] = []
    depth = 0
    for line in lines[index : index + MAX_CALL_LINES]:
        text = line.text[start:] if not parts else line.text.strip()
        parts.append(text)
        depth += bracket_depth(text, "(", ")")
        if depth <= 0:
            break
    return " ".join(parts)


# words of a skip's reason that say a test was set aside, not gated on where it can run
_PARKED = re.compile(
    r"\b(?:broken|flaky|flakiness|unstable|fail\w*|hang\w*|crash\w*|bug|issue|todo|fixme|"
    r"temporar\w*|disabled? (?:for now|until)|not work\w*|re-?enable|timeout|skip for now)\b|#\d",
    re.I,
)
_UNDER_IF = re.compile(r"^\s*(?:if|elif|except)\b.*:\s*(?:#.*)?$|^\s*else\s*:")


def _parks_a_test(lines: Sequence[DiffLine], index: int, skip: re.Match[str]) -> bool:
    """Whether a skip added at ``lines[index]`` sets a test aside for someone to come back to:
    ``@pytest.mark.skip``/``xfail`` always; a ``skipif``, or a ``pytest.skip`` under an
    ``if``, only when its reason says the test is broken or flaky (``broken on 0.25.1``) — a
    condition on the device, the backend or the version the code supports is a gate."""
    call = _call_from(lines, index, skip.start())
    if _CAPABILITY_SKIP.search(call):
        return False
    word = skip.group(0)
    conditional = "skipif" in word or (
        "pytest.skip(" in word and index > 0 and bool(_UNDER_IF.match(lines[index - 1].text))
    )
    return not conditional or bool(_PARKED.search(call))


def _skip_key(lines: Sequence[DiffLine], index: int, skip: re.Match[str]) -> str:
    """A skip call as a formatter leaves it alone: its words, not its wrapping, spacing or
    string prefixes (``pytest.skip(f"…")`` → ``pytest.skip("…")`` is the same skip)."""
    call = _F_STRING.sub("", _call_from(lines, index, skip.start()))
    return re.sub(r"\W+", "", call)


def _skip_keys(old_side: list[DiffLine]) -> set[str]:
    """The skips the patch removes, each read on the old side (its reason may be context)."""
    return {
        _skip_key(old_side, i, m)
        for i, line in enumerate(old_side)
        if line.kind == REMOVED and (m := _SKIP.search(line.text))
    }


def _kept_skip(lines: Sequence[DiffLine], index: int, skip: re.Match[str], kept: set[str]) -> bool:
    """Whether an added skip is one the patch removed, rewritten (moved or reformatted)."""
    return bool(kept) and _skip_key(lines, index, skip) in kept


_F_STRING = re.compile(r"\b[fFrRbB]{1,2}(?=[\"'])")
_TEST_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)|^\s*fn\s+(test_\w+)")
_CONST_NUMBER = re.compile(
    r"^\s*(?P<name>_?[A-Z][A-Z0-9_]{2,})\s*(?::\s*[\w\[\], ]+)?="
    r"\s*(?P<value>-?\d[\d_]*(?:\.\d+)?(?:e-?\d+)?)\s*(?:#.*)?$"
)
_COMPARE_NUMBER = re.compile(r"(?:[<>]=?|==)\s*(?P<value>\d{2,}(?:\.\d+)?)\b")
_THRESHOLD_COMPARE = re.compile(
    r"(?P<left>[\w.\[\]()\-]+)\s*(?:<=?|>=?)(?!>)\s*(?P<value>\d{2,}(?:\.\d+)?)\b(?!\s*[*<])"
)
_CONTROL_FLOW = re.compile(r"^\s*(?:if|elif|while)\b")
_TUNABLE_WORD = re.compile(
    r"(?:^|_)(?:MAX|MIN|LIMIT|THRESHOLD|TIMEOUT|RETRY|RETRIES|INTERVAL|CAPACITY|BUDGET|BATCH|"
    r"CHUNK|NUM|COUNT|BUFFERS?|WORKERS|QUEUE|REQUESTS|TOKENS|DEFAULT|GAP|WINDOW|TTL|DELAY|"
    r"BACKOFF|PERIOD|KEYS|REGIONS|STEPS|ATTEMPTS)(?:_|$)"
)
_FIXED_WORD = re.compile(
    r"(?:^|_)(?:TYPE|MODE|FMT|FORMAT|DIM|DIMS|ALIGN|ALIGNMENT|MASK|VERSION|OFFSET|PORT|HEAD|"
    r"VOCAB|UB|ID|IDX|INDEX|BITS|SHIFT|BLOCK|TILE|SIZE_HEAD|DTYPE|LAYOUT)(?:_|$)"
)
_MODEL_SHAPE = re.compile(
    r"shape|\bdim|_dim\b|head|hidden|ratio|vocab|\blen\(|version|\bsize\(|numel",
    re.I,
)
_KERNEL_DIM = re.compile(r"(?:^|\.)[A-Z]{1,2}$")  # K, D, BT: a kernel's tile dimension
_TOOLING = re.compile(r"(?:^|/)(?:csrc|scripts|tools|benchmarks|examples|\.agents|\.github)/")
_PY_KERNEL = re.compile(r"(?:^|/)(?:triton|kernels?)/|_kernels?\.py$|(?:^|/)patch_triton")


def tunable_constant(name: str, indent: int) -> bool:
    """An UPPER_CASE module constant whose name says it bounds something one could tune."""
    bare = name.lstrip("_")
    return indent == 0 and bool(_TUNABLE_WORD.search(bare)) and not _FIXED_WORD.search(bare)


def threshold_comparison(text: str) -> re.Match[str] | None:
    """An ordering comparison against a literal in control flow, not of a model constant."""
    if not _CONTROL_FLOW.match(text):
        return None
    for match in _THRESHOLD_COMPARE.finditer(text):
        if not _MODEL_SHAPE.search(match["left"]) and not _KERNEL_DIM.search(match["left"]):
            return match
    return None


def _a_default(name: str, added_text: str) -> bool:
    """Whether a constant is the default of a parameter or field the PR adds
    (``num_buffers: int = DEFAULT_NUM_BUFFERS``): callers set it, nothing is hard-coded."""
    bare = re.escape(name)
    annotated = rf"^\s+\w+\s*:[^=\n]*=\s*{bare}\b"  # a field, or a parameter on its own line
    in_signature = rf"^\s*(?:async\s+)?def\s.*\b\w+\s*=\s*{bare}\b"
    return re.search(f"{annotated}|{in_signature}", added_text, re.M) is not None


def _scanned_for_thresholds(path: str) -> bool:
    return path.endswith(".py") and not _TOOLING.search(path) and not _PY_KERNEL.search(path)


_ENV_CALL = re.compile(
    r"(?:os\.environ(?:\.get)?\s*[\[(]\s*|os\.getenv\(\s*|getenv\(\s*)[\"'](?P<name>[A-Z][A-Z0-9_]+)[\"']"
)
_ENV_ATTR = re.compile(r"\benvs\.(?P<name>[A-Z][A-Z0-9_]+)\b")
_SHELL_EXPORT = re.compile(r"^\s*(?:export\s+)(?P<name>[A-Z][A-Z0-9_]+)=")
_FLAG = re.compile(r"(?:add_argument|option)\(\s*[\"'](?P<flag>--[a-z][a-z0-9-]+)[\"']")
# a broad catch (bare, Exception, BaseException) that passes hides every error; a specific one
# that passes (``except ValueError: pass`` before a fallback, ``psutil.Error`` in a cleanup) is
# the intended handling of one expected case
_BROAD = r"(?:\s+\(?(?:Exception|BaseException)\b[^:]*)?"
_SWALLOW_ONE_LINE = re.compile(rf"^\s*except{_BROAD}\s*:\s*(?:pass|\.\.\.)\s*(?:#.*)?$")
_EXCEPT = re.compile(rf"^\s*except{_BROAD}\s*:\s*(?:#.*)?$")
_PASS = re.compile(r"^\s*(?:pass|\.\.\.)\s*(?:#.*)?$")
_CLAMP_CALL = re.compile(r"\bmin\(")
_BODY_ENV = re.compile(r"\b[A-Z][A-Z0-9]+(?:_[A-Z0-9]+){2,}\b")
_COMMAND = re.compile(r"^(?:\$|>|vllm\s|python\d?\s|pytest\s|uv\s|pip\s|export\s|[A-Z_]+=\S+\s)")

_TEST_DROPPED = re.compile(r"\b(?:remove|drop|delete|revert)\w*\b.*\btests?\b", re.I)
_FOLLOW_UP = re.compile(
    r"\b(?:in|as|for) a (?:separate |later |future )?follow[- ]?up\b|"
    r"\bfollow[- ]?up (?:PR|idea|item|work|task)s?\b|"
    r"\bseparate PR\b|\b(?:later|future|next|another) PR\b|"
    r"\bwill (?:address|fix|handle) (?:it |this |that )?(?:later|separately)\b|"
    r"\bnot (?:for|in) this PR\b|\bout of scope\b",
    re.I,
)

NO_TESTS_MIN_LINES = 10
HUGE_FILE_LINES = 5000
HUGE_PR_LINES = 20000


MAX_PER_KIND = 20  # a generated file can hold thousands of TODOs; a reader needs the first few


class _Collector:
    def __init__(self) -> None:
        self.items: list[SignalFact] = []
        self._seen: set[tuple[SignalKind, str]] = set()
        self._per_kind: dict[SignalKind, int] = {}

    def add(
        self,
        kind: SignalKind,
        detail: str,
        *,
        path: str | None = None,
        line: int | None = None,
        owner: str | None = None,
        provenance: Provenance | None = None,
        value: str | None = None,
        condition: str | None = None,
        parameter_of: str | None = None,
    ) -> None:
        key = (kind, detail)
        if key in self._seen or self._per_kind.get(kind, 0) >= MAX_PER_KIND:
            return
        self._seen.add(key)
        self._per_kind[kind] = self._per_kind.get(kind, 0) + 1
        where = provenance or Provenance(kind="file", ref=path or "pr", line=line)
        self.items.append(
            SignalFact(
                id=f"g{len(self.items) + 1}",
                provenance=where,
                kind=kind,
                detail=detail,
                path=path,
                line=line,
                owner=owner,
                value=value,
                condition=condition,
                parameter_of=parameter_of,
            )
        )


# _CONST_NUMBER over a file's joined added lines: it finds something wherever a single line
# matches (``^``/``$`` at every line break), so a file where it and the other gates find
# nothing holds no line any detector could match.
_CONST_NUMBER_ANYWHERE = re.compile(_CONST_NUMBER.pattern, re.MULTILINE)


def _file_may_signal(added_text: str, words: re.Pattern[str]) -> bool:
    """False only for a file none of whose added lines a line detector could match."""
    return bool(
        words.search(added_text)
        or _COMPARE_NUMBER.search(added_text)
        or _CONST_NUMBER_ANYWHERE.search(added_text)
    )


def _removed_notes(parsed: Sequence[tuple[FileFact, ParsedPatch]]) -> frozenset[str]:
    """The TODO-like comments the PR removes anywhere, as written: one added again moved
    with its code, it is no new loose end."""
    return frozenset(
        line.text.strip()
        for _fact, patch in parsed
        for line in patch.removed()
        if _TODO_WORD.search(line.text) and _TODO.search(line.text)
    )


def _scan_added_lines(
    out: _Collector,
    parsed: ParsedPatch,
    role: Role,
    env_prefixes: Sequence[str],
    moved_notes: frozenset[str] = frozenset(),
) -> None:
    words = _trigger_words(tuple(env_prefixes))
    # a kernel's ASCEND_IS_AIC is a macro: in C/C++ only a getenv() call reads a variable
    prefixes = () if language_of(parsed.path) == "cpp" else env_prefixes
    added = list(parsed.added())
    added_text = "\n".join(line.text for line in added)
    if not _file_may_signal(added_text, words):
        return
    removed_text = "\n".join(line.text for line in parsed.removed())
    pending_except: tuple[str, int | None] | None = None
    # a substring test first: the pattern's word boundaries make a long text's search slow
    skips = role is Role.TEST and ("skip" in added_text or "#[ignore]" in added_text)
    kept = _skip_keys(parsed.side(REMOVED)) if skips else set()
    new_side = parsed.side(ADDED) if skips else []
    at_new = {line.new_no: i for i, line in enumerate(new_side)}
    worded = worded_lines(words, added, added_text)
    for index, line in enumerate(added):
        text = line.text
        if pending_except is None and index not in worded and not _may_signal_unworded(text):
            continue  # most lines can trigger nothing (_may_signal): they are ruled out cheaply
        todo = _TODO.search(text)
        if todo and text.strip() not in moved_notes:
            note = todo["text"].strip().rstrip("*/").strip()
            detail = (
                f"{todo['tag']}"
                + (f"({todo['owner']})" if todo["owner"] else "")
                + (f": {note[:80]}" if note else "")
            )
            out.add(
                SignalKind.TODO, detail, path=parsed.path, line=line.new_no, owner=todo["owner"]
            )
        skip = _SKIP.search(text) if skips else None
        here = at_new.get(line.new_no, 0)
        if (
            skip
            and _parks_a_test(new_side, here, skip)
            and not _kept_skip(new_side, here, skip, kept)
        ):
            out.add(
                SignalKind.SKIP_ADDED, skip.group(0).rstrip("("), path=parsed.path, line=line.new_no
            )
        if role is Role.SOURCE:
            _scan_source_line(
                out, parsed.path, text, line.new_no, removed_text, prefixes, added_text
            )
        if pending_except and _PASS.match(text):
            out.add(
                SignalKind.SWALLOWED_EXCEPTION,
                pending_except[0],
                path=parsed.path,
                line=pending_except[1],
            )
        pending_except = (text.strip(), line.new_no) if _EXCEPT.match(text) else None
        if _SWALLOW_ONE_LINE.match(text):
            out.add(
                SignalKind.SWALLOWED_EXCEPTION, text.strip(), path=parsed.path, line=line.new_no
            )


def _scan_source_line(
    out: _Collector,
    path: str,
    text: str,
    line_no: int | None,
    removed_text: str,
    env_prefixes: Sequence[str],
    added_text: str = "",
) -> None:
    const = _CONST_NUMBER.match(text) if _scanned_for_thresholds(path) else None
    if const and const["name"] not in removed_text and not _a_default(const["name"], added_text):
        try:
            value = float(const["value"].replace("_", ""))
        except ValueError:
            value = 0.0
        if abs(value) >= 2 and tunable_constant(const["name"], len(text) - len(text.lstrip())):
            out.add(
                SignalKind.MAGIC_NUMBER,
                const["name"],
                path=path,
                line=line_no,
                value=const["value"],
            )
    elif _scanned_for_thresholds(path):
        compare = threshold_comparison(text)
        if compare and compare["value"] not in removed_text:
            out.add(SignalKind.MAGIC_NUMBER, text.strip()[:80], path=path, line=line_no)
    for name in _env_names(text, env_prefixes):
        if name not in removed_text:
            out.add(SignalKind.ENV_VAR, name, path=path, line=line_no)
    flag = _FLAG.search(text)
    if flag and flag["flag"] not in removed_text:
        out.add(SignalKind.CONFIG_FLAG, flag["flag"], path=path, line=line_no)
    clamp = _clamp_expression(text)
    if clamp and clamp not in removed_text and not _clamp_was_there(clamp, removed_text):
        out.add(SignalKind.SILENT_CLAMP, clamp, path=path, line=line_no)


@functools.lru_cache(maxsize=8)
def _trigger_words(env_prefixes: tuple[str, ...]) -> re.Pattern[str]:
    """Literal words one of which most line detectors need (a literal alternation is fast)."""
    words = [
        "TODO", "FIXME", "XXX", "HACK",  # _TODO
        "skip", "xfail", "#[ignore]",  # _SKIP
        "environ", "getenv", "envs.", "export",  # _ENV_CALL, _ENV_ATTR, _SHELL_EXPORT
        "add_argument", "option(",  # _FLAG
        "min(",  # _CLAMP_CALL
        "except",  # _EXCEPT, _SWALLOW_ONE_LINE
        *env_prefixes,
    ]  # fmt: skip
    return re.compile("|".join(re.escape(word) for word in words))


def _may_signal(text: str, words: re.Pattern[str]) -> bool:
    """A cheap pre-check: False only for a line no line detector below could match.

    Skipping those lines changes no result (tests/test_signals.py holds this); it spares most
    added lines the dozen regular expressions of the detectors.
    """
    return bool(words.search(text)) or _may_signal_unworded(text)


def _may_signal_unworded(text: str) -> bool:
    """:func:`_may_signal` for a line without any of the trigger words."""
    stripped = text.lstrip()
    if "=" in stripped and (
        stripped[:1].isupper() or (stripped[:1] == "_" and stripped[1:2].isupper())
    ):
        return True  # _CONST_NUMBER
    return ("<" in text or ">" in text or "==" in text) and bool(_COMPARE_NUMBER.search(text))


_OPERAND = re.compile(r"\b(?!min\b|len\b)[A-Za-z_][\w.]*")


def _clamp_was_there(clamp: str, removed_text: str) -> bool:
    """Whether the patch removes a clamp of the same shape (``min(len(a), len(b))`` moved into
    a helper, its operands renamed): the truncation is not new."""
    if "min(" not in removed_text:
        return False
    shape = _OPERAND.sub("x", clamp)
    return any(
        _OPERAND.sub("x", old) == shape
        for line in removed_text.splitlines()
        if (old := _clamp_expression(line)) is not None
    )


def _clamp_expression(text: str) -> str | None:
    """``min(x, len(y) - 1)`` as written: it cuts a count or index down without a word.

    Numeric clamps (``torch.clamp``, ``.clamp(max=…)``) are left alone: in kernels and
    activations they are the intended maths, not a silent truncation.
    """
    for match in _CLAMP_CALL.finditer(text):
        depth, end = 0, None
        for index in range(match.end() - 1, len(text)):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if depth == 0:
                end = index + 1
                break
        if end is None:
            continue
        expression = text[match.start() : end]
        if "len(" in expression and not text[: match.start()].rstrip().endswith("range("):
            return expression[:100]  # a range(min(k, len(xs))) bound walks what there is
    return None


@functools.lru_cache(maxsize=8)
def _prefix_pattern(env_prefixes: tuple[str, ...]) -> re.Pattern[str] | None:
    if not env_prefixes:
        return None
    alternatives = "|".join(re.escape(p) for p in env_prefixes)
    # not an attribute (`CompilationMode.VLLM_COMPILE` is an enum member; `envs.` is read above)
    return re.compile(rf"(?<![.\w])(?:{alternatives})[A-Z0-9_]+\b")


def _env_names(text: str, env_prefixes: Sequence[str]) -> Iterable[str]:
    for pattern in (_ENV_CALL, _ENV_ATTR, _SHELL_EXPORT):
        for match in pattern.finditer(text):
            yield match["name"]
    prefixed = _prefix_pattern(tuple(env_prefixes))
    if prefixed is not None:
        messages = [m.group(2) for m in _QUOTED.finditer(text) if " " in m.group(2)]
        for name in prefixed.findall(text):
            if not any(name in message for message in messages):
                yield name  # a message that names a variable ("… FUSED_MC2 and …") adds none


_QUOTED = re.compile(r"(['\"])(.*?)\1")


_DOC_FLAG = re.compile(r"`(?P<flag>--[a-z][a-z0-9-]+)")
# Tutorials name variables in every recipe; only a reference page of options declares one.
_REFERENCE_DOC = re.compile(r"env|config|option|argument|flag|setting", re.IGNORECASE)


def is_reference_doc(path: str) -> bool:
    """A docs page that lists options (env vars, config keys, CLI flags), judged by its name."""
    return bool(_REFERENCE_DOC.search(path.rsplit("/", 1)[-1]))


def documented_knobs(docs_patches: Sequence[str], env_prefixes: Sequence[str]) -> tuple[str, ...]:
    """Variables and ``--flags`` that added docs lines name and removed lines did not."""
    added: dict[str, None] = {}
    removed: set[str] = set()
    for patch in docs_patches:
        for line in patch.splitlines():
            if line.startswith(("+++", "---")) or line[:1] not in ("+", "-"):
                continue
            names = [*_env_names(line[1:], env_prefixes), *_DOC_FLAG.findall(line[1:])]
            if line[0] == "+":
                added.update(dict.fromkeys(names))
            else:
                removed.update(names)
    return tuple(name for name in added if name not in removed)


def detect(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    *,
    files: Sequence[FileFact],
    tests: Sequence[TestFact],
    sections: Sequence[SectionFact],
    threads: Sequence[ThreadFact],
    checks: ChecksSummary | None,
    coverage: Coverage,
    kind: Kind,
    body: str | None,
    env_prefixes: Sequence[str] = (),
    commits: Sequence[CommitFact] = (),
    remarks: Sequence[RemarkFact] = (),
    is_test: Callable[[FileFact], bool] = lambda f: f.role is Role.TEST,
    moves: Moves | None = None,
    patch_texts: Sequence[str] = (),
) -> list[SignalFact]:
    out = _Collector()
    moved_notes = _removed_notes(parsed)
    for fact, patch in parsed:
        if patch.error:
            out.add(SignalKind.BROKEN_PATCH, f"{fact.path}: {patch.error[:80]}", path=fact.path)
            continue
        if fact.additions + fact.deletions > HUGE_FILE_LINES:
            out.add(SignalKind.HUGE_DIFF, fact.path, path=fact.path)
        role = Role.TEST if is_test(fact) else fact.role
        _scan_added_lines(out, patch, role, env_prefixes, moved_notes)
    for fact, patch in parsed:
        if fact.role is Role.SOURCE and fact.language == "python" and not is_test(fact):
            _defaults_changed(out, fact, patch)
    _tests_deleted(out, parsed, files, commits, moves or Moves())
    _no_tests(out, files, tests, kind, is_test)
    _promised(out, remarks)
    results = bool(body and _RESULTS.search(body))
    new_tests = any(not (t.existed or t.moved_from or t.renamed_from) for t in tests)
    _empty_test_result(out, sections, results=results, tested=new_tests)
    _breaking(out, sections)
    _unresolved(out, threads)
    if checks and checks.failed:
        out.add(
            SignalKind.FAILED_CHECKS,
            ", ".join(checks.failed[:3]),
            provenance=Provenance(kind="check", ref=checks.failed[0]),
        )
    if coverage.diff is DiffCoverage.FULL:
        _stale_body(out, body, patch_texts, env_prefixes)
    total = sum(f.additions + f.deletions for f in files)
    if total > HUGE_PR_LINES:
        out.add(
            SignalKind.HUGE_DIFF,
            f"{total} changed lines",
            provenance=Provenance(kind="file", ref="pr"),
        )
    return out.items


_LITERAL = r"(True|False|None|-?\d+(?:\.\d+)?(?:e-?\d+)?)"
_DEFAULTS = (  # an option and its default, in the shapes code gives one
    re.compile(
        r"""^\s*(?:.*\bget(?:attr|env)?\((?:[^,()"']*,\s*)?)?["']([A-Za-z_][\w.]*)["']\s*,\s*"""
        + _LITERAL
        + r"\s*\)?\s*,?\s*$"
    ),
    re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*:\s*[\w\[\]., |]+?\s*=\s*" + _LITERAL + r"\s*,?\s*$"),
    re.compile(r"""^\s*\w*\.add_argument\(\s*["'](--[\w-]+)["'].*\bdefault=""" + _LITERAL + r"\b"),
)


def _default_of(text: str) -> tuple[str, str, str] | None:
    """(the text before the option, the option, its literal default) of a line that sets one."""
    end = text.rstrip(" ,)\n")
    if not (end[-1:].isdigit() or end.endswith(("True", "False", "None")) or "default=" in text):
        return None  # every shape ends on its literal: most lines go without a regex
    for pattern in _DEFAULTS:
        match = pattern.match(text)
        if match:
            return text[: match.start(1)].strip(), match.group(1), match.group(2)
    return None


def _same_value(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


_CONTINUED = ("(", "[", "{", ",")


def _statement_start(lines: Sequence[DiffLine], at: int) -> int:
    """The first line of the statement line ``at`` continues (``x = get(`` above ``"key",
    True``), on that line's side of the diff."""
    side = lines[at].kind
    start = at
    for index in range(at - 1, -1, -1):
        line = lines[index]
        if line.kind not in (side, CONTEXT):
            continue
        if not line.text.rstrip().endswith(_CONTINUED):
            break
        start = index
    return start


def _defaults_changed(out: _Collector, fact: FileFact, patch: ParsedPatch) -> None:
    for hunk in patch.hunks:
        removed: list[tuple[str, str, str]] = []
        for at, line in enumerate(hunk.lines):
            if line.kind == REMOVED:
                if at and hunk.lines[at - 1].kind == ADDED:
                    removed = []  # a new run of removed lines
                found = _default_of(line.text)
                if found:
                    removed.append(found)
                continue
            if line.kind != ADDED:
                removed = []
                continue
            new = _default_of(line.text) if removed else None
            old = next((x for x in removed if new and x[:2] == new[:2]), None)
            if new and old and not _same_value(old[2], new[2]):
                out.add(
                    SignalKind.DEFAULT_CHANGED,
                    new[1],
                    path=fact.path,
                    line=line.new_no,
                    value=f"{old[2]} → {new[2]}",
                    condition=guard(hunk.lines, _statement_start(hunk.lines, at)) or None,
                    parameter_of=_signature_of(hunk, at),
                )


_DEF_OPEN = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(")


def _signature_of(hunk: Hunk, at: int) -> str | None:
    """The function whose parameter list holds line ``at`` (``enable_x: bool = False,``
    under ``def compute_logits(``), or None for a field, a keyword or anything else: a
    parameter's default changes for callers that leave it out, not for deployments."""
    lines = hunk.lines
    if not lines[at].text.rstrip().endswith(","):
        return None  # a field or a statement; a parameter list runs on with commas
    side = lines[at].kind
    for index in range(at - 1, -1, -1):
        above = lines[index]
        if above.kind not in (side, CONTEXT):
            continue
        opened = _DEF_OPEN.match(above.text)
        if opened:
            return opened.group(1)
        if not above.text.rstrip().endswith(_CONTINUED):
            return None  # a statement ended above: not inside a signature
    opened = _DEF_OPEN.match(hunk.header)
    return opened.group(1) if opened and hunk.header.rstrip().endswith(_CONTINUED) else None


_TEST_MODULE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test)\.(?:py|rs|go|sh|js|ts)$")


def _removed_test_body(patch: ParsedPatch, name: str) -> str:
    """The old text of a removed test: its def line and the old-side lines under it."""
    for hunk in patch.hunks:
        old_side = [x.text for x in hunk.lines if x.kind != ADDED]
        for at, text in enumerate(old_side):
            m = _TEST_DEF.match(text)
            if m is None or (m.group(1) or m.group(2)) != name:
                continue
            indent = len(text) - len(text.lstrip())
            body = [text]
            for after in old_side[at + 1 :]:
                if after.strip() and len(after) - len(after.lstrip()) <= indent:
                    break
                body.append(after)
            return "\n".join(body)
    return ""


_SNAKE_NAME = re.compile(r"\b_?[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}\b")


def _gone_identifiers(parsed: Sequence[tuple[FileFact, ParsedPatch]]) -> set[str]:
    """Distinctive names (three or more snake-case words: a keyword argument, an attribute)
    the PR's source lines lose and no added line uses again: a removed test that uses one
    exercised something the PR takes away (``skip_or_requeue_reason=`` when the reason
    counting goes)."""
    return _lost_names(parsed, _SNAKE_NAME)


def _lost_names(
    parsed: Sequence[tuple[FileFact, ParsedPatch]], pattern: re.Pattern[str]
) -> set[str]:
    """The names ``pattern`` finds in the PR's removed source lines and in no added line."""
    removed = {
        name
        for fact, patch in parsed
        if fact.role is Role.SOURCE
        for line in patch.removed()
        for name in pattern.findall(line.text)
    }
    if not removed:
        return set()
    added = {
        name
        for _fact, patch in parsed
        for line in patch.added()
        for name in pattern.findall(line.text)
    }
    return removed - added


_CAMEL_NAME = re.compile(r"\b_?[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,}\b")  # three words or more
_CAMEL_WORD = re.compile(r"[A-Z][a-z0-9]+")
CLASS_WORDS = 3  # consecutive words of a class's name a test's name must hold


def _gone_class_runs(parsed: Sequence[tuple[FileFact, ParsedPatch]]) -> frozenset[str]:
    """Runs of three consecutive words, in snake case, of the CamelCase names the PR's source
    lines lose and no added line uses again (``short_request_first`` of a dropped
    ``ShortRequestFirstSchedulerMixin``)."""
    runs: set[str] = set()
    for name in _lost_names(parsed, _CAMEL_NAME):
        words = [w.lower() for w in _CAMEL_WORD.findall(name)]
        runs.update(
            "_".join(words[i : i + CLASS_WORDS]) for i in range(len(words) - CLASS_WORDS + 1)
        )
    return frozenset(runs)


def _named_replacement(
    name: str, added_tests: set[str], removed_code: set[str], gone_runs: frozenset[str]
) -> bool:
    """Whether a removed test's name alone shows it replaced or gone with what it tested: a
    test of its name is added, or one whose name it extends (two tests folded into one
    parametrized ``test_x``: ``test_x_eager_mode`` …), or it is named after a definition the
    PR deletes (``test_pad_args`` when ``pad_args`` goes) or a class its source loses."""
    if name in added_tests or any(name.startswith(f"{added}_") for added in added_tests):
        return True
    subject = name.removeprefix("test_")
    if any(len(code) >= 8 and code.lstrip("_") in subject for code in removed_code):
        return True
    return _named_after_gone_class(subject, gone_runs)


def _named_after_gone_class(subject: str, runs: frozenset[str]) -> bool:
    """Whether a removed test's name (without ``test_``) holds three consecutive words of a
    class the PR's source loses for good (:func:`_gone_class_runs`): what it tested went on
    purpose."""
    padded = f"_{subject}_"
    return any(f"_{run}_" in padded for run in runs)


_WORD_RUN = re.compile(r"\w+")


def _names_test(names: Iterable[str]) -> Callable[[str], bool] | None:
    """Whether a test's text calls or patches one of the names (``worker.model_runner
    .profile_cudagraph_memory.assert_called_once_with()``) as a whole word; short names say
    too little. Names of word characters alone are looked up among the text's runs of them (a
    whole-word match is such a run), sparing a pattern of hundreds of names compiled per PR."""
    long = sorted(n for n in names if len(n) >= 8)
    if not long:
        return None
    if all(_WORD_RUN.fullmatch(n) for n in long):
        words = frozenset(long)
        return lambda text: not words.isdisjoint(_WORD_RUN.findall(text))
    pattern = re.compile(rf"\b(?:{'|'.join(map(re.escape, long))})\b")
    return lambda text: pattern.search(text) is not None


_MESSAGE = re.compile(r"\"([^\"\n]{30,})\"|'([^'\n]{30,})'")


def _checked_messages(body: str) -> list[str]:
    """The long messages a test's text holds (an error it expects, words with spaces): an id
    or a path has no spaces and says nothing about what was checked."""
    found = (m.group(1) or m.group(2) for m in _MESSAGE.finditer(body))
    return [text for text in found if " " in text.strip()]


def _removed_test_names(patch: ParsedPatch) -> list[tuple[str, int | None]]:
    """Tests whose definition the patch removes, but for placeholders (a test whose whole body
    as removed is ``pass``, ``...`` or a docstring tested nothing, so nothing is lost) and for
    tests rewritten in place under another name: a removed ``def test_…`` line in a run of
    changed lines that adds a test of the same subject (:func:`_same_subject`)."""
    found = []
    for hunk in patch.hunks:
        removed: list[tuple[str, int | None]] = []  # tests the current run of changes removes
        added: list[str] = []  # … and adds
        for at, line in enumerate((*hunk.lines, None)):
            if line is None or line.kind == CONTEXT:
                found += [x for x in removed if not any(_same_subject(x[0], a) for a in added)]
                removed, added = [], []
                continue
            if "test_" not in line.text:
                continue
            m = _TEST_DEF.match(line.text)
            if m is None:
                continue
            if line.kind == ADDED:
                added.append(m.group(1) or m.group(2))
            elif not _placeholder(hunk.lines, at):
                removed.append((m.group(1) or m.group(2), line.old_no))
    return found


def _same_subject(old: str, new: str) -> bool:
    """Two test names that start with the same words and are alike: three or more shared
    words, at least 40 % of the old name's (``test_host_args_requires_meta`` →
    ``test_host_args_falls_back``), or two and the names alike as strings (a word dropped
    from a long name: ``test_models_pcp_dcp_accuracy`` → ``test_models_dcp_accuracy``): one
    test, renamed for the behaviour it now checks."""
    shared = _shared_words(old, new)
    if shared < 2:  # `test` and one word more
        return False
    if shared >= 3 and shared >= 0.4 * len(old.split("_")):
        return True
    return SequenceMatcher(None, old, new).ratio() >= 0.8


_EMPTY_BODY = re.compile(r"""^\s*(?:pass|\.\.\.|#.*|(?:r?(?:\"\"\"|\'\'\'|"|').*))?\s*$""")


def _placeholder(lines: Sequence[DiffLine], at: int) -> bool:
    """Whether the removed Python test defined at ``lines[at]`` had an empty body: every removed
    line below it, up to the next line at its indentation or less, is blank, a comment, a
    docstring line, ``pass`` or ``...`` (a ``{``-bodied test of another language is never)."""
    head = lines[at].text
    if not head.rstrip().endswith(":"):
        return False
    indent = len(head) - len(head.lstrip())
    body = []
    for line in lines[at + 1 :]:
        if line.text.strip() and len(line.text) - len(line.text.lstrip()) <= indent:
            break
        if line.kind != REMOVED:
            return False  # the body goes on in context: not removed whole
        body.append(line.text)
    return bool(body) and all(_EMPTY_BODY.match(text) for text in body)


def _tests_deleted(
    out: _Collector,
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    files: Sequence[FileFact],
    commits: Sequence[CommitFact],
    moves: Moves,
) -> None:
    """Tests the PR takes away with nothing in their place.

    A test is replaced when a test of the same name is added anywhere in the PR, or the moves
    analysis found it moved or renamed (same body); a removed test file is replaced when git
    renamed it, its text reappears in an added file, or every test it held is replaced. Only a
    test module counts as a test file (``test_*.py`` …): a package ``__init__.py``, data or
    configuration under ``tests/`` holds no test.
    """
    for commit in commits:  # a test written during review and dropped before merge
        if commit.after_review and _TEST_DROPPED.search(commit.headline):
            out.add(SignalKind.TESTS_DELETED, commit.headline[:90], provenance=commit.provenance)
    added_tests: set[str] | None = None  # read only when a test is removed: few PRs
    moved_files = set(moves.files.values())

    removed_code: set[str] | None = None  # source definitions the PR deletes
    added_text = ""  # the added lines of the PR's test files
    refusal_removed = False  # a source file loses a ``raise NotImplementedError``
    gone_code: Callable[[str], bool] | None = None  # names deleted definitions, not moved
    gone_runs: frozenset[str] | None = None  # word runs of the classes the source loses

    def replaced(path: str, name: str) -> bool:
        """Replaced by a test of its name, by a test whose name it extends (two tests folded
        into one parametrized ``test_x``: ``test_x_eager_mode`` …), by its moved or renamed
        self, or gone with the code it tested (``test_pad_args`` when ``pad_args`` is deleted);
        or, read from its old text, a test that pinned a refusal the PR lifts, whose checked
        message a new test checks, or that calls code the PR deletes or uses names its source
        loses for good."""
        nonlocal added_tests, removed_code, added_text, refusal_removed, gone_code, gone_runs
        if added_tests is None:
            refusal_removed = any(
                "raise NotImplementedError" in line.text
                for fact, patch in parsed
                if fact.role is Role.SOURCE
                for line in patch.removed()
            )
            added_text = "\n".join(
                line.text
                for fact, patch in parsed
                if fact.role is Role.TEST
                for line in patch.added()
            )
            added_tests = {
                m.group(1) or m.group(2)
                for _fact, patch in parsed
                for line in patch.added()
                if "test_" in line.text and (m := _TEST_DEF.match(line.text))
            }
            removed_code = _removed_definitions(parsed)
            moved_away = {key[2] for key in moves.removed}
            gone = {n for n in removed_code if n not in moved_away} | _gone_identifiers(parsed)
            gone_code = _names_test(gone)
            gone_runs = _gone_class_runs(parsed)
        if moves.replaced(path, name) or _named_replacement(
            name, added_tests, removed_code or set(), gone_runs or frozenset()
        ):
            return True
        patch = patches.get(path)  # the test's old text, read only when its name says nothing
        body = _removed_test_body(patch, name) if patch else ""
        if refusal_removed and "NotImplementedError" in body:
            return True  # it pinned a refusal the PR lifts on purpose: nothing left to test
        if any(m in added_text for m in _checked_messages(body)):
            return True  # a new test checks the same message: the check moved there
        return gone_code is not None and gone_code(body)

    patches = {fact.path: patch for fact, patch in parsed}
    # a test module goes with the module it tests (``test_patch_x.py`` with ``patch_x.py``)
    removed_modules = {
        PurePosixPath(f.path).stem for f in files if f.status == "removed" and f.role is Role.SOURCE
    }
    for fact in files:
        if fact.status != "removed" or not _TEST_MODULE.search(fact.path):
            continue
        if fact.path in moved_files:
            continue
        if PurePosixPath(fact.path).stem.removeprefix("test_") in removed_modules:
            continue
        patch = patches.get(fact.path)
        names = _removed_test_names(patch) if patch is not None else []
        gone = [(n, line) for n, line in names if not replaced(fact.path, n)]
        if not names or len(gone) == len(names):
            out.add(SignalKind.TESTS_DELETED, fact.path, path=fact.path)
        else:
            for name, line in gone:
                out.add(SignalKind.TESTS_DELETED, name, path=fact.path, line=line)
    for fact, patch in parsed:
        if fact.role is not Role.TEST or fact.status == "removed":
            continue
        gone = _removed_test_names(patch)
        folded = _parametrized_tests(patch) if gone else []
        for name, line in gone:
            if not replaced(fact.path, name) and not any(_folds(p, name) for p in folded):
                out.add(SignalKind.TESTS_DELETED, name, path=fact.path, line=line)


MAX_DECORATOR_LINES = 12  # a parametrize decorator wrapped over lines above its def


def _parametrized_tests(patch: ParsedPatch) -> list[str]:
    """Tests the patch gives a ``parametrize`` decorator it adds (a new test, or an old one
    parametrized anew): cases of removed tests may have been folded into them."""
    found = []
    for hunk in patch.hunks:
        since = None  # lines since the last added parametrize decorator
        for line in hunk.lines:
            if line.kind == REMOVED:
                continue
            if line.kind == ADDED and "parametrize" in line.text and PARAMETRIZE.match(line.text):
                since = 0
                continue
            m = _TEST_DEF.match(line.text) if "test_" in line.text else None
            if m and line.kind == ADDED and since is not None and since <= MAX_DECORATOR_LINES:
                found.append(m.group(1) or m.group(2))
            since = None if m or since is None else since + 1
    return found


def _folds(parametrized: str, removed: str) -> bool:
    """Whether a removed test's cases may live on in a parametrized test of its file: their
    names share their first three words or more (``test_target_model_…``)."""
    return _shared_words(parametrized, removed) >= 3


def _shared_words(a: str, b: str) -> int:
    """How many ``_``-separated words two names start with in common."""
    shared = 0
    for x, y in zip(a.split("_"), b.split("_"), strict=False):
        if x != y:
            break
        shared += 1
    return shared


def _definitions(lines: Iterable[DiffLine]) -> set[str]:
    """Names of the Python functions and classes the lines define."""
    return {d.name for line in lines if (d := definition_in(line.text, "python")) is not None}


def _removed_definitions(parsed: Sequence[tuple[FileFact, ParsedPatch]]) -> set[str]:
    """Names of the functions and classes the PR's source files lose and do not define again."""
    sources = [patch for fact, patch in parsed if fact.role is Role.SOURCE]
    removed = _definitions(line for patch in sources for line in patch.removed())
    return removed - _definitions(line for _fact, patch in parsed for line in patch.added())


def _no_tests(
    out: _Collector,
    files: Sequence[FileFact],
    tests: Sequence[TestFact],
    kind: Kind,
    is_test: Callable[[FileFact], bool],
) -> None:
    if kind in (Kind.DOCS, Kind.CI, Kind.DEPS, Kind.CHORE, Kind.REVERT) or tests:
        return
    if any(is_test(f) for f in files):
        return
    source_lines = sum(f.additions + f.deletions for f in files if f.role is Role.SOURCE)
    # new code is what a test would cover: a PR that mostly deletes asks for none
    added = sum(f.additions for f in files if f.role is Role.SOURCE)
    if added >= NO_TESTS_MIN_LINES or (kind is Kind.FIX and added):
        out.add(
            SignalKind.NO_TESTS,
            f"{source_lines} source lines",
            provenance=Provenance(kind="file", ref="pr"),
        )


def _promised(out: _Collector, remarks: Sequence[RemarkFact]) -> None:
    for remark in remarks:
        if _FOLLOW_UP.search(remark.excerpt):
            out.add(
                SignalKind.FOLLOWUP_PROMISED,
                remark.excerpt[:120],
                owner=remark.author,
                provenance=remark.provenance,
            )


# results the body gives outside its test section: a figure going from one value to another,
# a "Result:"/"accuracy"/"TTFT" line with a number, a table row of numbers
_RESULTS = re.compile(
    r"\d[\d.,]*\s*%?\s*(?:->|→|=>|to)\s*\d|\b(?:results?|accuracy|ttft|tpot|throughput|"
    r"latency)\b[^\n]{0,40}?\d|^\s*\|(?:[^|\n]*\|){1,}[^|\n]*\d[^|\n]*\|",
    re.I | re.M,
)


def _empty_test_result(
    out: _Collector,
    sections: Sequence[SectionFact],
    *,
    results: bool = False,
    tested: bool = False,
) -> None:
    """An empty Test Result (vLLM's template); where the template has one test section
    (vllm-ascend's "How was this patch tested?"), that section empty, "no test", or naming only
    linters and compiles — unless the body reports ``results`` elsewhere (a figure, a results
    table, a benchmark heading of its own), or the PR adds tests of its own (``tested``: new
    test functions are its evidence, in a template without a results section)."""
    for section in sections:
        if section.name == "test_result" and section.empty:
            out.add(SignalKind.EMPTY_TEST_RESULT, section.heading, provenance=section.provenance)
    if any(s.name == "test_result" for s in sections):
        return
    if tested or results or any(s.name == "benchmark" and not s.empty for s in sections):
        return  # the PR's own tests, or results the body reports elsewhere
    plan = next((s for s in sections if s.name == "test_plan"), None)
    if plan is None:
        return
    testing = testing_of(list(sections))
    if testing == "none":
        out.add(SignalKind.EMPTY_TEST_RESULT, plan.heading, provenance=plan.provenance)
    elif testing == "lint":
        out.add(SignalKind.LINT_ONLY_TESTING, plan.heading, provenance=plan.provenance)


def _breaking(out: _Collector, sections: Sequence[SectionFact]) -> None:
    change, breaking = user_facing_of(list(sections))
    section = next((s for s in sections if s.name == "user_facing"), None)
    if breaking and section is not None:
        out.add(SignalKind.BREAKING_CHANGE, change, provenance=section.provenance)


def _unresolved(out: _Collector, threads: Sequence[ThreadFact]) -> None:
    for thread in threads:
        if not thread.is_resolved and not thread.is_outdated:
            out.add(
                SignalKind.UNRESOLVED_THREADS,
                thread.id,
                path=thread.path,
                line=thread.line,
                provenance=thread.provenance,
            )


# a body line that places the name outside this PR ("the existing upstream env", "vLLM PR #1"),
# or gives it as a reason for the change ("because … VLLM_X remapping can break that")
_ELSEWHERE_NAME = re.compile(
    r"\b(?:existing|upstream|already|vllm (?:pr|main)|pr #?\d|align(?:s|ed|ing)? with|because)|#\d",
    re.I,
)


def _sentence_with(sentences: Sequence[tuple[int, str]], line: int, name: str) -> str | None:
    """Of the body's prose ``sentences`` (wrapped lines joined), the one that says ``name`` on
    body line ``line``: a reference to another PR may sit on the line before."""
    found = None
    for start, sentence in sentences:
        if start > line:
            break
        if name in sentence:
            found = sentence
    return found


def _stale_body(
    out: _Collector, body: str | None, patch_texts: Sequence[str], env_prefixes: Sequence[str]
) -> None:
    """Env vars the body's prose names that the final diff never mentions.

    A PR body written for an earlier version of the change often still describes a switch
    that review removed; commands (code fences, ``$ …`` lines) are skipped because they
    usually set existing variables.
    """
    if not body or not patch_texts or not env_prefixes:
        return  # without known prefixes, constants and other projects' variables look the same
    diff_text = "\n".join(patch_texts)
    prose: list[tuple[int, str]] | None = None

    def sentences() -> list[tuple[int, str]]:  # read once, and only for a name the diff lacks
        nonlocal prose
        if prose is None:
            prose = list(prose_sentences(body))
        return prose

    in_fence = False
    for line in visible_lines(body):
        stripped = line.text.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence or _COMMAND.match(stripped):
            continue
        for match in _BODY_ENV.finditer(stripped):
            name = match.group(0)
            if not name.startswith(tuple(env_prefixes)) or stripped[match.end() :].startswith("="):
                continue  # not the project's variable, or set in an inline command
            if name not in diff_text and not _ELSEWHERE_NAME.search(
                _sentence_with(sentences(), line.number, name) or stripped
            ):
                out.add(
                    SignalKind.STALE_BODY,
                    name,
                    provenance=Provenance(kind="body", ref="body", line=line.number),
                )


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return None if index < 0 else text.count("\n", 0, index) + 1

"""Which code names carry the design: a ranking by salience, not by lines changed.

A reviewer reads first what the PR talks about and what it builds on: the names its title and
body mention, the names its new tests exercise, new classes, protocols and mixins with their
hooks, dispatch and resolve functions, names used from several files. Printing, logging and
summary helpers, a second copy of the same change (a header duplicated per target), generated
files and kernels whose Python side carries the change come last.

Two kinds of names are ranked: definitions (the dossier's symbols) and identifiers that the
changed lines use (``draft_window_size``, ``self.kernel_block_size``, ``torch.clamp_min``).
Next to the ranking this module finds *edits*: a line rewritten in place, reduced to the
expression that changed (``self.runner.block_size`` → ``self.kernel_block_size``), verbatim.

Every score is a sum of named reasons (:data:`REASONS`), so a writer can say why a name matters
in words the code backs. The weights are judgement, kept in one table.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

from prdigest.analyze.code import (
    LOGGING_CALL,
    Definition,
    bracket_depth,
    definition_in,
    deleted_definitions,
    hunk_definition,
)
from prdigest.analyze.moves import NAME_ALIKE
from prdigest.analyze.patches import ADDED, CONTEXT, REMOVED, DiffLine, Hunk, ParsedPatch
from prdigest.core.models import (
    EditFact,
    FileFact,
    Provenance,
    Role,
    SalientFact,
    SymbolFact,
    TestFact,
)

if TYPE_CHECKING:
    from difflib import SequenceMatcher
else:  # the same algorithm compiled (Cython): equal ratios and opcodes, ~6x faster
    from cydifflib import SequenceMatcher

# reason id → weight
REASONS: dict[str, float] = {
    "in_title": 4.0,  # the title names it
    "in_body": 3.0,  # the body names it (backticked or as written in the code)
    "title_words": 2.5,  # the title spells its words ("weight prefetch config")
    "tested": 2.0,  # the PR's new or changed tests use it
    "test_named": 2.0,  # a new test or test file is named after it (test_<name>…)
    "new_class": 2.0,  # a class the PR adds
    "extension_point": 2.5,  # an ABC, Protocol or mixin, or an abstract method / hook of one
    "dispatch": 2.0,  # a function that selects, dispatches or resolves
    "cross_file": 0.5,  # the changed lines of several files use it (common: a weak sign alone)
    "edited": 1.5,  # an expression the PR rewrote in place contains it
    "introduced": 1.0,  # only the added lines use it: new vocabulary
    "added": 1.0,  # a definition the PR adds (not one it moved)
    "gone": 0.5,  # only the removed lines use it
    "relocated": 1.0,  # a line the PR moved or re-indented unchanged uses it (code rearranged)
    "changed": 0.0,  # the size term (log of lines) carries it
    "generic": -2.0,  # __init__, forward, run …: says nothing without its class
    "helper": -3.0,  # print/log/dump/summary/debug helpers
    "kernel": -2.0,  # C/C++ or AscendC while the Python side carries the change too
    "test_code": -1.5,  # defined in a test file (tests are named by the test point)
    "duplicate": -4.0,  # the same change in another file, already ranked
}
MAX_SALIENT = 24
MAX_EDITS = 6
MAX_SPAN = 70  # longest before/after expression an edit keeps

_GENERIC = frozenset(
    {"__init__", "__call__", "__post_init__", "forward", "run", "main", "apply", "setUp", "new"}
)
_HELPER = re.compile(
    r"(?:^|_)(?:print|log|logs|logging|dump|summary|summarize|debug|repr|str|report|stats|"
    r"pretty|format|describe|trace)(?:_|$)|^__(?:repr|str)__$",
    re.I,
)
_ABOUT_OUTPUT = re.compile(
    r"\b(?:log\w*|debug\w*|print\w*|diagnos\w*|probes?|summar\w*|trace)\b", re.I
)
_DISPATCH = re.compile(
    r"(?:^|_)(?:dispatch|resolve|select|route|choose|pick|factory|registry|register|lookup)"
    r"(?:_|$)|^get_\w+_(?:method|impl|backend|cls|class|kernel|op|fn)$|_for_",
    re.I,
)
_EXTENSION_BASE = re.compile(r"^\s*class \w+\((?:[\w.]+, )*(?:\w*\.)?(?:ABC|Protocol|\w+Mixin)\b")
_ABSTRACT = re.compile(r"@(?:abc\.)?abstractmethod")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_SELF = re.compile(r"\bself\.")
# a call on a module alias is named with its module, as code writes it (torch.clamp_min)
_MODULE_CHAIN = re.compile(
    r"(?<![\w.])(?:torch(?:_npu)?|F|np|nn|dist|logger|triton|tl)\.[A-Za-z_]\w*(?=\()"
)
# what every module chain holds, without the look-behind that makes the chain's search slow
_MAY_CHAIN = re.compile(r"(?:torch(?:_npu)?|F|np|nn|dist|logger|triton|tl)\.[A-Za-z_]\w*\(")
# an operator of two characters is one token: a span never ends inside ``==`` or ``>=``
_TOKEN = re.compile(
    r"\"[^\"\n]*\"|'[^'\n]*'|[A-Za-z_]\w*|\d+(?:\.\d+)?|[=!<>:+\-*/%&|^]=|->|\*\*|//|<<|>>|[^\w\s]"
)
_COMMON = frozenset(
    {
        *keyword.kwlist,
        *keyword.softkwlist,
        "self", "cls", "None", "True", "False", "torch", "np", "numpy", "int", "str", "float",
        "bool", "list", "dict", "tuple", "set", "len", "range", "print", "logger", "args",
        "kwargs", "value", "values", "key", "keys", "data", "result", "results", "name", "type",
        "isinstance", "getattr", "setattr", "hasattr", "super", "object", "Optional", "Any",
        "Union", "List", "Dict", "Tuple", "field", "dataclass", "pytest", "mock", "patch",
        "assert", "item", "items", "append", "extend", "shape", "size", "dtype", "device",
        "return", "config", "layer", "model", "input", "output", "x", "y", "i", "j", "k", "n",
        "enumerate", "zip", "sorted", "min", "max", "sum", "any", "all", "Exception",
        "staticmethod", "classmethod", "property", "typing", "import", "from", "elif", "else",
        "tensor", "Tensor", "vllm", "vLLM", "vllm_ascend",
    }
)  # fmt: skip
_LITERAL = re.compile(r"True|False|None|[-+]?\d[\d_.]*|(['\"]).*\1")
_DEF_LINE = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s")
_SKIP_LINE = re.compile(
    r"^\s*(?:#|//|\*|/\*|import\s|from\s+\S+\s+import\s|use\s|#include|\"\"\"|'''|@)"
)
_DISTINCT = re.compile(r"\w_\w|[a-z][A-Z]|^[A-Z][A-Z0-9]{3,}$")  # snake, camel, CONSTANT


_WORD = re.compile(r"[A-Za-z_][\w.]*")
_ABSTRACT_HOOK = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)")
_CONTEXT_DEFINITION = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text))


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"  # what ``\w`` matches in a str pattern


def _names_word(text: str, word: str, *, after_dot: bool = True) -> bool:
    """Whether ``text`` holds ``word`` as a whole word (not inside a longer name; with
    ``after_dot=False``, not after a dot either): a pattern per name compiled for the search
    would cost more than the search (and evict the patterns the analyzer reuses)."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        before = text[at - 1] if at else ""
        if not (before and (_word_char(before) or (not after_dot and before == "."))) and not (
            end < len(text) and _word_char(text[end])
        ):
            return True
        at = text.find(word, at + 1)
    return False


@dataclass
class _Name:
    name: str
    path: str
    line: int | None
    added: int = 0
    removed: int = 0
    relocated: int = 0  # lines that use it and that the PR moved or re-indented unchanged
    files: set[str] = field(default_factory=set)


_BUILTINS = frozenset(dir(builtins))  # `ValueError`, `isinstance`: Python's, not the change's


def _distinct(name: str) -> bool:
    """A name that says something: not a keyword, a builtin or a common word; snake, camel or
    CONSTANT, or a call on a module alias."""
    if "." in name:
        return len(name.rsplit(".", 1)[-1]) >= 2
    return (
        len(name) >= 4
        and name not in _COMMON
        and name not in _BUILTINS
        and bool(_DISTINCT.search(name))
    )


# the same few thousand names recur on every line: each judged once
_distinct_seen = functools.lru_cache(maxsize=200_000)(_distinct)


def _usable(line: DiffLine) -> bool:
    return bool(line.text.strip()) and not _SKIP_LINE.match(line.text)


def _editable(line: DiffLine) -> bool:
    """A line whose edit is worth showing: code, and no definition line (a rename is said
    elsewhere)."""
    return _usable(line) and not _DEF_LINE.match(line.text) and _code_like(line.text)


def _edit_shown(line: DiffLine, others: Sequence[DiffLine], about_output: bool) -> bool:
    """:func:`_editable`, and no log or print call unless the PR is about its output or the
    call only gains arguments (its message was missing them): a log message reworded says
    nothing of what the code does. ``others`` are the lines of the block's other side."""
    if not _editable(line):
        return False
    if about_output or not LOGGING_CALL.match(line.text):
        return True
    text = line.text.strip()
    if line.kind == REMOVED:
        return any(_arguments_appended(text, x.text.strip()) for x in others)
    return any(_arguments_appended(x.text.strip(), text) for x in others)


def _arguments_appended(old: str, new: str) -> bool:
    """``new`` is the call ``old`` with arguments added at its end (``f(msg)`` →
    ``f(msg, a, b)``)."""
    return old.endswith(")") and new.startswith(old[:-1].rstrip() + ",")


_PY_STRING_OR_COMMENT = re.compile(
    r'"""|\'\'\'|[rbfu]?"(?:\\.|[^"\\\n])*"|[rbfu]?\'(?:\\.|[^\'\\\n])*\'|#.*', re.I
)
# a string that is a name, not prose: a config key, an env var, a route, a module path
_KEY = re.compile(r"[\w./:@-]*[A-Za-z_][\w./:@-]*")


def _python_code(text: str) -> str:
    """The code of a Python line without its comment and prose: a string that is a name
    (``"enable_npugraph_ex"``, ``"/v1/rerank"``) stays, a sentence or a log message goes, and so
    does the rest of a line after a triple quote (a docstring)."""
    if "#" not in text and '"' not in text and "'" not in text:
        return text
    out: list[str] = []
    at = 0
    for match in _PY_STRING_OR_COMMENT.finditer(text):
        out.append(text[at : match.start()])
        token = match.group(0)
        if token in ('"""', "'''") or token.startswith("#"):
            return "".join(out)
        inner = token.lstrip("rbfuRBFU")[1:-1]
        out.append(f'"{inner}"' if _KEY.fullmatch(inner) else '""')
        at = match.end()
    out.append(text[at:])
    return "".join(out)


_DOC_OPEN = re.compile(r"^\s*[rbu]?(\"\"\"|\'\'\')(?=\S)(?!.*\1)", re.I)  # """Text, not closed


def _changed_code(
    patch: ParsedPatch, *, python: bool, removed: bool = True
) -> Iterator[tuple[DiffLine, str]]:
    """The changed lines of a patch (without the removed ones when ``removed`` is False) with
    their code: in Python without comments and prose, and without the lines of a docstring the
    hunk opens (``\"\"\"Text`` … ``\"\"\"``; a lone triple quote may open or close one, so it
    opens none)."""
    for hunk in patch.hunks:
        docs: dict[str, str | None] = {ADDED: None, REMOVED: None}  # the open quote, per side
        for line in hunk.lines:
            kind, text = line.kind, line.text
            if kind == REMOVED and not removed:
                continue  # its docstrings are the old side's: the new side is tracked alone
            if not python:
                if kind != CONTEXT:
                    yield line, text
                continue
            quiet = docs[ADDED] is None and docs[REMOVED] is None
            if quiet and '"""' not in text and "'''" not in text:
                if kind != CONTEXT:  # most lines: no docstring opens, none is open
                    yield line, _python_code(text)
                continue
            sides = (ADDED, REMOVED) if kind == CONTEXT else (kind,)
            inside = all(docs[side] for side in sides)
            for side in sides:
                quote = docs[side]
                if quote is not None:
                    docs[side] = None if quote in text else quote
                elif opened := _DOC_OPEN.match(text):
                    docs[side] = opened.group(1)
            if kind != CONTEXT:
                yield line, "" if inside else _python_code(text)


def _identifiers(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    is_test: Callable[[FileFact], bool],
    code: dict[str, list[tuple[DiffLine, str]]],
) -> tuple[dict[str, _Name], set[str]]:
    """Distinct identifiers of the changed source and test lines, and those of test files (in
    Python, not in comments, strings or docstrings)."""
    names: dict[str, _Name] = {}
    in_tests: set[str] = set()
    for fact, patch in parsed:
        test_file = is_test(fact)
        if (fact.role is not Role.SOURCE and not test_file) or fact.duplicate_of:
            continue
        relocated = set() if test_file else _relocated_lines(patch)
        path = fact.path
        for line, text in code[path]:
            kind = line.kind
            if not text.strip() or _SKIP_LINE.match(text):
                continue
            words = filter(_distinct_seen, _line_words(text))
            if test_file:  # what the PR's tests exercise, not old ones
                if kind == ADDED:
                    in_tests.update(words)
                continue
            added = kind == ADDED
            moved = added and bool(relocated) and line.text.strip() in relocated
            for name in words:
                entry = names.get(name)
                if entry is None:
                    number = line.new_no if added else line.old_no
                    entry = names[name] = _Name(name, path, number)
                entry.files.add(path)
                if added:
                    entry.added += 1
                    entry.relocated += moved
                else:
                    entry.removed += 1
    return names, in_tests


def _line_words(text: str) -> list[str]:
    """The identifiers of a line of code, a call on a module alias as one (``torch.clamp_min``
    for ``torch`` and ``clamp_min``)."""
    words: list[str] = _IDENTIFIER.findall(text)
    # few lines hold a module chain: a search without the look-behind rules the rest out
    may_chain = "." in text and _MAY_CHAIN.search(text) is not None
    chains: list[str] = _MODULE_CHAIN.findall(text) if may_chain else []
    if chains:
        tails = {c.rsplit(".", 1)[-1] for c in chains}
        words = [*chains, *(w for w in words if w not in tails)]
    return words


MIN_RELOCATED = 12  # characters: a shorter line (``return x``, ``else:``) recurs by chance


def _relocated_lines(patch: ParsedPatch) -> set[str]:
    """Code lines that a file's patch removes and adds again unchanged, in another block of
    changed lines or at another indentation: code moved elsewhere or wrapped in a new block
    (a line the diff re-emits in place, beside an edit, is neither)."""
    if not any(line.kind == REMOVED for hunk in patch.hunks for line in hunk.lines):
        return set()  # an added file, or lines only added: nothing moved
    removed: dict[str, set[tuple[int, int]]] = {}
    added: dict[str, set[tuple[int, int]]] = {}
    block = 0  # consecutive changed lines form a block; context lines separate blocks
    for hunk in patch.hunks:
        block += 1
        for line in hunk.lines:
            if line.kind == CONTEXT:
                block += 1
                continue
            text = line.text.strip()
            if len(text) < MIN_RELOCATED:
                continue
            indent = len(line.text) - len(line.text.lstrip())
            side = added if line.kind == ADDED else removed
            side.setdefault(text, set()).add((block, indent))
    return {
        text
        for text, places in added.items()
        if text in removed and places - removed[text] and _editable_text(text)
    }


def _editable_text(text: str) -> bool:
    """:func:`_editable` of a line's stripped text."""
    return _editable(DiffLine(ADDED, text, None, None))


# -- edits --------------------------------------------------------------------------------


def _span(
    text: str, tokens: list[re.Match[str]], first: int, last: int, argument_line: bool = False
) -> tuple[str, int]:
    """The text of tokens ``first..last`` widened to whole dotted names and calls, and where
    it starts in ``text``."""
    while first > 0 and (
        tokens[first - 1].group(0) == "."
        or (tokens[first - 1].group(0).isidentifier() and tokens[first].group(0) == ".")
    ):
        first -= 1
    while last + 1 < len(tokens) and (
        tokens[last + 1].group(0) == "." or tokens[last].group(0) == "."
    ):
        last += 1
    if _keyword_before(text, tokens, first, argument_line) or _key_before(tokens, first):
        first -= 2  # say which keyword or key the value is passed by
    start, end = tokens[first].start(), tokens[last].end()
    snippet = text[start:end]
    if snippet.count("(") > snippet.count(")"):  # close a call the change opened
        depth, index = 0, end
        for index in range(end, len(text)):
            depth += {"(": 1, ")": -1}.get(text[index], 0)
            if snippet.count("(") - snippet.count(")") + depth <= 0:
                snippet = text[start : index + 1]
                break
    return snippet.strip(), start


def _keyword_before(
    text: str, tokens: list[re.Match[str]], first: int, argument_line: bool
) -> bool:
    """Whether token ``first`` is a value passed by keyword (``async_op=False``): inside a
    call, for ``a, b = x`` assigns a tuple and its last target is no keyword."""
    return (
        first > 1
        and tokens[first - 1].group(0) == "="
        and tokens[first - 2].group(0).isidentifier()
        and (tokens[first - 3].group(0) in ("(", ",") if first > 2 else argument_line)
        and (argument_line or bracket_depth(text[: tokens[first - 2].start()]) > 0)
    )


def _key_before(tokens: list[re.Match[str]], first: int) -> bool:
    """Whether token ``first`` is the value of a dict entry (``"expert_token_nums_type": 0``)."""
    return (
        first > 1
        and tokens[first - 1].group(0) == ":"
        and tokens[first - 2].group(0)[:1] in "\"'"
        and (first == 2 or tokens[first - 3].group(0) in ("{", ","))
    )


def _without_comment(text: str) -> str:
    """A Python line without the comment that ends it (strings kept as they are)."""
    if "#" not in text:
        return text
    for match in _PY_STRING_OR_COMMENT.finditer(text):
        if match.group(0).startswith("#"):
            return text[: match.start()].rstrip()
    return text


_CALL = re.compile(r"(?P<pre>.*?)(?P<callee>[A-Za-z_][\w.]*)\((?P<rest>.*)")


def _callee_swap(a: str, b: str) -> tuple[str, str] | None:
    """The function a line now calls instead of another, the rest of the line unchanged
    (``DeviceOperator.npu_dynamic_quant(x)`` → ``torch_npu.npu_dynamic_quant(x)``)."""
    ma, mb = _CALL.match(a), _CALL.match(b)
    if ma is None or mb is None or ma["callee"] == mb["callee"]:
        return None
    if ma["pre"] != mb["pre"] or ma["rest"] != mb["rest"] or ma["pre"].endswith("."):
        return None
    return ma["callee"], mb["callee"]


def _last_link(text: str) -> str | None:
    """The last call of a chain that ends a line, with its arguments (``transpose(1, 2)`` of
    ``x.transpose(1, 2)``), or None when the line does not end in a call."""
    if not text.endswith(")"):
        return None
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[index], 0)
        if depth == 0:
            name = re.search(r"[A-Za-z_]\w*$", text[:index])
            return text[name.start() :] if name else None
    return None


def _enclosing(text: str, at: int) -> str | None:
    """The innermost bracketed group of ``text`` around position ``at``, with the name it is
    called on (``foo.bar(x, y)``); None when ``at`` is in no group."""
    depth, start = 0, None
    for index in range(min(at, len(text)) - 1, -1, -1):
        char = text[index]
        if char in ")]":
            depth += 1
        elif char in "([":
            if depth == 0:
                start = index
                break
            depth -= 1
    if start is None:
        return None
    depth, end = 0, None
    for index in range(start, len(text)):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(text[index], 0)
        if depth == 0:
            end = index + 1
            break
    if end is None:
        return None
    name = re.search(r"[A-Za-z_][\w.]*$", text[:start])
    return text[name.start() if name else start : end]


def _balanced(text: str) -> bool:
    """Whether every bracket the text opens it closes, in order (``a), (b`` is not)."""
    depth = {"(": 0, "[": 0, "{": 0}
    closer = {")": "(", "]": "[", "}": "{"}
    for char in text:
        if char in depth:
            depth[char] += 1
        elif char in closer:
            depth[closer[char]] -= 1
            if depth[closer[char]] < 0:
                return False
    return not any(depth.values())


_TUPLE_TARGETS = re.compile(r"^\s*[\w.]+(?:\s*,\s*[\w.]+)+\s*=(?!=)")
_ARGUMENT_LINE = re.compile(r"^\s*(?:\w+\s*,|\w+=[^=].*,\s*$)")  # inside a multi-line call
# a line that only gains or loses one of these in front was rewrapped (a conjunct that now
# opens a condition, ``and x`` → ``x``), not edited
_KEYWORDS = (
    "if ", "elif ", "else ", "while ", "return ", "assert ", "not ", "await ", "yield ",
    "and ", "or ",
)  # fmt: skip
_STRING = re.compile(r"(\"[^\"\n]*\"|'[^'\n]*')")


def _squeeze(match: re.Match[str]) -> str:
    return " ".join(match.group(0).split()).replace(' "', '"').replace(" '", "'")


# what a line assigns: x = …, x: T = …, and a C-like declaration (uint32_t n = …, auto* p = …)
_TARGET = re.compile(
    r"^(?:(?:const\s+|static\s+|constexpr\s+)*[A-Za-z_](?:[\w<>,]|::)*[\s*&]+)?"
    r"(?P<name>[A-Za-z_][\w.]*)\s*(?::[^=]+)?=(?!=)"
)
_PROSE = re.compile(r"[A-Za-z]+ [A-Za-z]+ [A-Za-z]+")  # three plain words in a row
_QUOTED = re.compile(r"([\"']).*?\1")


def _code_like(text: str) -> bool:
    """Not a line of prose (a docstring or comment continued, a message): code has symbols
    between its words."""
    # string literals do not make code prose
    plain = _QUOTED.sub("''", text) if "'" in text or '"' in text else text
    return not _PROSE.search(plain)


_PY_KEYWORDS = frozenset(keyword.kwlist) - {"True", "False", "None"}  # values, not syntax


_ANNOTATED = re.compile(r"^(?P<target>[\w.]+)\s*:\s*[^=]+?\s*=(?!=)\s*(?P<value>.*)$")


_PARAMETER = re.compile(r"^(?P<name>\w+)\s*:\s*(?P<hint>[^=]+?)\s*(?P<default>=.*)?$")


def _retyped_parameter(old: str, new: str) -> bool:
    """Whether two lines are one parameter (or field) whose type hint alone changed."""
    a, b = _PARAMETER.match(old), _PARAMETER.match(new)
    return bool(
        a
        and b
        and a["name"] == b["name"]
        and a["default"] == b["default"]
        and a["hint"] != b["hint"]
    )


def _annotated_only(old: str, new: str) -> bool:
    """Whether the new assignment is the old one with a type annotation added (or dropped)."""
    for plain, annotated in ((old, new), (new, old)):
        match = _ANNOTATED.match(annotated)
        if match and re.sub(r"\s+", "", plain) == re.sub(
            r"\s+", "", f"{match['target']}={match['value']}"
        ):
            return True
    return False


_FRAGMENT_START = frozenset(". \t")  # a span cut from its receiver or from what it follows


def _same_start(a: str, old: str, at_a: int, b: str, new: str, at_b: int) -> tuple[str, str]:
    """The two spans (starting at ``at_a`` and ``at_b``) widened to start where the other
    starts, when the lines agree up to there: ``self.meta[req_id]`` →
    ``self.meta.pop(req_id, None)``, not ``[req_id]`` → …."""
    if at_a == at_b or a[: min(at_a, at_b)] != b[: min(at_a, at_b)]:
        return old, new
    wider = (a[at_b : at_a + len(old)], new) if at_a > at_b else (old, b[at_a : at_b + len(new)])
    return wider if _balanced(wider[0]) and _balanced(wider[1]) else (old, new)


_STATEMENT = re.compile(
    r"(if|elif|else|while|for|return|raise|assert|with|try|except|yield|del|def|class|import|from)\b"
)


def _statement_kind(line: str) -> str:
    """The keyword a Python statement starts with ("" for an expression or an assignment)."""
    match = _STATEMENT.match(line)
    return match.group(1) if match else ""


def edit_of(before: str, after: str, *, python: bool = True) -> tuple[str, str] | None:
    """The expression that differs between two versions of a line, or None when the lines are
    not one line edited (too different) or differ only in spacing."""
    a, b = before.strip().rstrip(",;:"), after.strip().rstrip(",;:")
    if a == b or SequenceMatcher(None, a, b).ratio() < 0.6:
        return None
    if python and _python_code(a).strip() == _python_code(b).strip():
        return None  # only a comment or a message changed: the code does what it did
    if python:  # a comment is no code the edit says
        a, b = _without_comment(a).rstrip(",;: "), _without_comment(b).rstrip(",;: ")
    if python and _annotated_only(a, b):
        return None  # ``x = []`` → ``x: list[Key] = []`` changes nothing the program does
    if python and _retyped_parameter(a, b):
        return None  # ``meta: Meta,`` → ``meta: MetaList,``: a hint, not what the code does
    if _STRING.sub(_squeeze, a) == _STRING.sub(_squeeze, b):
        return None  # only the spacing inside a string changed
    if python and _statement_kind(a) != _statement_kind(b):
        return None  # a call made an ``if``, a ``return`` an assignment: two statements
    swapped = _callee_swap(a, b)
    if swapped is not None:
        return swapped
    ta, tb = list(_TOKEN.finditer(a)), list(_TOKEN.finditer(b))
    # one matcher of the tokens for the ratio and the opcodes below (its blocks are kept)
    tokens = SequenceMatcher(None, [t.group(0) for t in ta], [t.group(0) for t in tb])
    if tokens.ratio() < 0.5:
        return None  # alike as text, not as code: two statements, not one edited
    for lead in _KEYWORDS:
        if a == lead + b or b == lead + a:
            return None  # "if x" → "x": the statement was rewrapped, not changed
    target_a, target_b = _TARGET.match(a), _TARGET.match(b)
    if (target_a is None) != (target_b is None) or (
        target_a and target_b and target_a["name"] != target_b["name"]
    ):
        return None  # two declarations of different names are no edit of one
    opcodes = [op for op in tokens.get_opcodes() if op[0] != "equal"]
    if not opcodes:
        return None
    i1, i2 = opcodes[0][1], opcodes[-1][2]
    j1, j2 = opcodes[0][3], opcodes[-1][4]
    if i1 == i2 == len(ta) and b[len(a) :].startswith("."):  # a call chained on at the end
        link = _last_link(a)
        if link and len(link) + len(b) - len(a) <= MAX_SPAN:
            return link, link + b[len(a) :]
    if i1 == i2 or j1 == j2:  # a pure insertion or deletion: show the call or line around it
        at_a = ta[i1].start() if i1 < len(ta) else len(a)
        at_b = tb[j1].start() if j1 < len(tb) else len(b)
        around_a, around_b = _enclosing(a, at_a), _enclosing(b, at_b)
        if (
            around_a
            and around_b
            and around_a != around_b  # the same group on both sides says no change
            and len(around_a) <= MAX_SPAN
            and len(around_b) <= MAX_SPAN
        ):
            return around_a, around_b
        continued = (
            before.rstrip().endswith((",", "(", "["))
            or after.rstrip().endswith(",")
            or _ARGUMENT_LINE.match(before) is not None
        )
        whole = len(a) <= MAX_SPAN and len(b) <= MAX_SPAN and _balanced(a) and _balanced(b)
        return (a, b) if whole and not continued else None
    # one argument of a multi-line call (``a, b = x`` assigns a tuple: no argument)
    argument = _ARGUMENT_LINE.match(before) is not None and not _TUPLE_TARGETS.match(before)
    (old, at_a), (new, at_b) = (
        _span(a, ta, i1, i2 - 1, argument),
        _span(b, tb, j1, j2 - 1, argument),
    )
    old, new = _same_start(a, old, at_a, b, new, at_b)
    if _operator_cut(old) or _operator_cut(new):  # ``len(x) ==`` → ``n >=``: the comparisons
        return _whole_expressions(a, b)
    if old[:1] in _FRAGMENT_START or new[:1] in _FRAGMENT_START:
        return None  # ``.contiguous(), dim=0`` → `` if … else x``: tails of two statements
    if old.endswith(",") or new.endswith(","):
        return None  # ``a.x, a.x`` → ``x,``: two changes in a line, one side cut short
    if not old or not new or len(old) > MAX_SPAN or len(new) > MAX_SPAN or old == new:
        return None
    if old in _PY_KEYWORDS and new in _PY_KEYWORDS:
        return None  # "if" → "elif": a branch added before it, said by the lines around
    if not (_balanced(old) and _balanced(new)):
        return None  # a fragment of a statement that spans lines
    if not python and (old in new or new in old):
        return None  # a wrapper added or dropped around the same code: layout, not logic
    short = len(old) < 4 and len(new) < 4
    if short or (_LITERAL.fullmatch(old) and _LITERAL.fullmatch(new)):  # 1800 → 3600: of what
        whole = len(a) <= MAX_SPAN and len(b) <= MAX_SPAN and _balanced(a) and _balanced(b)
        return (a, b) if whole else _keyword_groups(a, at_a, b, at_b)
    return old, new


_BINARY = frozenset(
    {"==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "**", "//"}
    | {"<<", ">>", "and", "or", "in", "is", "not"}
)


def _operator_cut(span: str) -> bool:
    """Whether a span starts or ends with a binary operator: half of an expression."""
    tokens = _TOKEN.findall(span)
    return bool(tokens) and (tokens[0] in _BINARY - {"-", "*", "not"} or tokens[-1] in _BINARY)


_LEAD = re.compile(r"^(?:if|elif|while|return|assert|yield)\s+")


def _whole_expressions(a: str, b: str) -> tuple[str, str] | None:
    """Both lines' whole expressions, without the statement word that leads them (``if``,
    ``return`` …), when they are short enough to say; else None."""
    a, b = _LEAD.sub("", a), _LEAD.sub("", b)
    if len(a) > MAX_SPAN or len(b) > MAX_SPAN or not (_balanced(a) and _balanced(b)):
        return None
    return a, b


_KEYWORD_BEFORE = re.compile(r"(?<![=!<>])\b(?P<key>[A-Za-z_]\w*)\s*=\s*$")


def _keyword_groups(a: str, at_a: int, b: str, at_b: int) -> tuple[str, str] | None:
    """The bracketed values around a changed literal, with the keyword they are passed by
    (``output_mask=[True, True]`` → ``output_mask=[True, False]``); None when the literal
    stands in no group or the groups are too long to say."""
    around_a, around_b = _enclosing(a, at_a + 1), _enclosing(b, at_b + 1)
    if not around_a or not around_b or around_a == around_b:
        return None
    if around_a[0] in "([":  # no name it is called on: the keyword it is passed by
        key_a = _KEYWORD_BEFORE.search(a[: a.find(around_a, max(0, at_a - len(around_a)))])
        key_b = _KEYWORD_BEFORE.search(b[: b.find(around_b, max(0, at_b - len(around_b)))])
        if key_a and key_b and key_a["key"] == key_b["key"]:
            around_a, around_b = f"{key_a['key']}={around_a}", f"{key_b['key']}={around_b}"
    if len(around_a) > MAX_SPAN or len(around_b) > MAX_SPAN:
        return None
    return around_a, around_b


MAX_EDIT_LINES = 150  # changed lines of one file compared for edits beyond their block
_AUTOJUNK_FROM = 200  # difflib's autojunk heuristic applies to sequences this long


def _as_if(text: str) -> str:
    """A branch's condition line as an ``if``: ``if x:`` that became ``elif x:`` (a branch
    moved under another) is the same line moved."""
    return text[2:] if text.startswith("elif ") else text


def _edits(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    is_test: Callable[[FileFact], bool],
    context: Context,
) -> list[tuple[FileFact, DiffLine, str, str]]:
    """Lines rewritten in source files: first a removed line with the added line that replaced
    it in the same block, then, across the file, a removed line whose edited copy was added
    elsewhere (code moved and changed on the way). Tests are named by the test point; a copy's
    edits are its first copy's."""
    found: list[tuple[FileFact, DiffLine, str, str]] = []
    python, logs = context.python_carries, context.about_output
    for fact, patch in parsed:
        if fact.role is not Role.SOURCE or is_test(fact) or fact.duplicate_of:
            continue
        if fact.status not in ("modified", "renamed") or (fact.language == "cpp" and python):
            continue  # a kernel's edit is detail when the Python side carries the change
        found += _file_edits(fact, patch, logs)
    named = _named_numbers(parsed)
    # a literal given a name of its own value (`512` → `_LIMIT`, with `_LIMIT = 512`) changes
    # nothing the program does: no edit to read
    return [x for x in found if not named or named.get(x[3]) != x[2].strip()]


def _file_edits(
    fact: FileFact, patch: ParsedPatch, logs: bool
) -> list[tuple[FileFact, DiffLine, str, str]]:
    """One file's edits (:func:`_edits`): in each block, then across the file."""
    found: list[tuple[FileFact, DiffLine, str, str]] = []
    # a line also on the other side of the file's patch moved: it is no edit's old or new
    # line (a parameter moved up its list beside one deleted is no rename of the deleted)
    removed_texts = {_as_if(x.text.strip()) for x in patch.removed()}
    added_texts = {_as_if(x.text.strip()) for x in patch.added()}
    owners = _Owners(fact, patch)
    # the lines left for the file-wide pairing, in order, each with whether it was judged
    # shown: a block of one side (half the lines) pairs nothing where it stands, so its
    # lines are judged only when the file-wide pairing may run (most files: it cannot)
    left_old: list[tuple[DiffLine, bool]] = []
    left_new: list[tuple[DiffLine, bool]] = []
    for removed, added in _blocks(patch):
        if not removed or not added:
            left_old += [(x, False) for x in removed]
            left_new += [(x, False) for x in added]
            continue
        olds = [
            x
            for x in removed
            if _as_if(x.text.strip()) not in added_texts and _edit_shown(x, added, logs)
        ]
        news = [
            x
            for x in added
            if _as_if(x.text.strip()) not in removed_texts and _edit_shown(x, removed, logs)
        ]
        if _values_replaced(olds, news):
            olds, news = [], []  # left out of the file-wide pairing too
        pairs, old_rest, new_rest = _pair(fact, olds, news, 0.6, owners.in_block)
        found += pairs
        # across the file only code that moved: from a block that mostly removes, to one that
        # mostly adds (a block that replaces its lines one for one has had its pairing)
        left_old += [(x, True) for x in old_rest] if 3 * len(added) <= len(removed) else []
        left_new += [(x, True) for x in new_rest] if 3 * len(removed) <= len(added) else []
    olds_left = _shown_upto(left_old, added_texts, logs)
    news_left = _shown_upto(left_new, removed_texts, logs) if olds_left else None
    if olds_left and news_left is not None:
        found += _pair(fact, olds_left, news_left, 0.75, owners.across)[0]
    return found


def _blocks(patch: ParsedPatch) -> Iterator[tuple[list[DiffLine], list[DiffLine]]]:
    """Each block of changed lines: its removed lines and the added lines after them (a
    context line between two changed ones ends no block)."""
    for hunk in patch.hunks:
        removed: list[DiffLine] = []
        added: list[DiffLine] = []
        for line in (*hunk.lines, None):
            if line is not None and line.kind == REMOVED and not added:
                removed.append(line)
                continue
            if line is not None and line.kind == ADDED:
                added.append(line)
                continue
            if removed or added:
                yield removed, added
                removed, added = [], []
            if line is not None and line.kind == REMOVED:
                removed.append(line)


def _shown_upto(
    lines: list[tuple[DiffLine, bool]], other_side: set[str], logs: bool
) -> list[DiffLine] | None:
    """The lines an edit may show, those judged already and the others judged as a block of one
    side's (not on the other side, :func:`_edit_shown`); None once more than
    :data:`MAX_EDIT_LINES`, which the file-wide pairing does not compare."""
    out: list[DiffLine] = []
    for line, judged in lines:
        if judged or (_as_if(line.text.strip()) not in other_side and _edit_shown(line, (), logs)):
            out.append(line)
            if len(out) > MAX_EDIT_LINES:
                return None
    return out


_NAMED_NUMBER = re.compile(
    r"^(?P<name>_?[A-Z][A-Z0-9_]*)\s*(?::\s*\w+)?\s*=\s*(?P<value>-?\d[\d_.]*)\s*(?:#.*)?$"
)


def _named_numbers(parsed: Sequence[tuple[FileFact, ParsedPatch]]) -> dict[str, str]:
    """Module-level constants the PR adds with a number (``_MC2_TOKENS_PER_RANK_LIMIT = 512``),
    by name."""
    named: dict[str, str] = {}
    for _fact, patch in parsed:
        for line in patch.added():
            if line.text[:1].isupper() or line.text[:1] == "_":  # module level, a constant's
                match = _NAMED_NUMBER.match(line.text)
                if match:
                    named[match["name"]] = match["value"]
    return named


_VALUE = re.compile(r"\d+(?:\.\d+)?|\"[^\"\n]*\"|'[^'\n]*'")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")


def _values_replaced(olds: list[DiffLine], news: list[DiffLine]) -> bool:
    """Rows of one shape (``Config({"BLOCK": 64})``, …) replaced by rows of another with other
    values: a table swapped whole, whose rows pair by accident of their digits (64 with 4)."""
    if len(olds) < 2 or len(news) < 2:
        return False
    shapes = {_VALUE.sub("#", x.text.strip()) for x in olds}
    if len(shapes) != 1 or len({_VALUE.sub("#", x.text.strip()) for x in news}) != 1:
        return False
    numbers = [_NUMBER.findall(x.text) for x in olds]
    return numbers != [_NUMBER.findall(x.text) for x in news]


def _items(text: str) -> list[str]:
    return [x.strip() for x in text.strip().rstrip(",").split(",") if x.strip()]


def _rewrapped(old: str, new: str) -> bool:
    """One line of a call's arguments wrapped again (``a, b, c`` became ``a,`` / ``b,`` …):
    the shorter line's arguments are some of the longer one's, no argument was edited."""
    (short, short_text), (long, _long_text) = sorted(
        ((_items(old), old), (_items(new), new)), key=lambda x: len(x[0])
    )
    wrapped = short_text.rstrip().endswith(",")  # one argument of a call put on its own line
    return wrapped and len(long) > len(short) >= 1 and set(short) <= set(long)


class _Owners:
    """Which definition each changed line of a Python file sits in, on its side of the diff,
    read once, when a pair is first weighed (most files pair no lines); other languages pair
    freely."""

    def __init__(self, fact: FileFact, patch: ParsedPatch) -> None:
        self.python = fact.language == "python"
        self.patch = patch
        self._sides: tuple[dict[int, str], dict[int, str]] | None = None
        # the classes the patch shows, and where each removed line now stands
        self._places: tuple[set[str], dict[int, int]] | None = None

    def _of(self, old: DiffLine, new: DiffLine) -> tuple[str | None, str | None]:
        if self._sides is None:
            self._sides = (
                _python_owners(self.patch, {}, REMOVED),
                _python_owners(self.patch, {}, ADDED),
            )
        return self._sides[0].get(old.old_no or -1), self._sides[1].get(new.new_no or -1)

    def in_block(self, old: DiffLine, new: DiffLine) -> bool:
        """Whether two lines of one block sit in the same definition, or in two of alike names
        (a function renamed where it stands): the diff may align the end of one function with
        the start of the next (``return tuple(masks)`` of ``store_mask`` with ``return masks`` of
        the new ``_reachable_masks`` above it)."""
        if not self.python:
            return True
        a, b = self._of(old, new)
        return a is None or b is None or a == b or _alike_names(a, b)

    def across(self, old: DiffLine, new: DiffLine) -> bool:
        """Whether a removed line and an added one of the file sit in the same definition: a
        line moved from one function into another and changed on the way is that function's
        new code, not an edit made in it ("X 里把 a 改为 b" would say X had a). Two lines that
        hunk headers place only in their class may sit in two of its methods: they pair only
        when the new line stands near where the old one would now be (``sparse_mode = 3`` of one
        loop and ``sparse_mode=4,`` of a new branch 400 lines on are no edit)."""
        if not self.python:
            return True
        owner, other = self._of(old, new)
        if owner != other:
            return False
        if self._places is None:
            self._places = (_class_names(self.patch), _new_positions(self.patch))
        classes, now_at = self._places
        if owner not in classes:
            return True
        return abs((new.new_no or 0) - now_at.get(old.old_no or -1, 0)) <= MAX_CLASS_MOVE


KEPT_SPAN = 10  # a shorter old span may well recur in other new code on its own
_LINE_ENDS = " \t,;(){}"


def _still_there(before: str, news: list[DiffLine], partner: int) -> bool:
    """Whether the old span went to an added line of its own in the block (a parameter put on
    the line above the one it was paired with, ``const LocalTensor<T> &normResUb,``): then it
    was kept, not replaced. A name used again in other new code was still replaced where the
    edit is."""
    if len(before) < KEPT_SPAN:
        return False
    for i, x in enumerate(news):
        core = x.text.strip(_LINE_ENDS).removeprefix("const ")
        if i != partner and len(core) <= len(before) + 8 and _span_at(core, before) >= 0:
            return True
    return False


def _swapped(
    edit: tuple[str, str], olds: list[DiffLine], old_at: int, news: list[DiffLine], new_at: int
) -> bool:
    """Whether the edit's old value stands in another added line of the block and its new
    value in another removed one (``== QuantType.MXFP8`` → ``== QuantType.MXFP4`` where the
    MXFP8 case now shares a branch and MXFP4 left one): lines regrouped, no value replaced."""
    before, after = edit
    kept = any(_span_at(x.text, before) >= 0 for i, x in enumerate(news) if i != new_at)
    return kept and any(_span_at(x.text, after) >= 0 for i, x in enumerate(olds) if i != old_at)


def _span_at(text: str, span: str) -> int:
    """Where ``span`` stands in ``text`` as a whole (not inside a longer name), or -1."""
    at = text.find(span)
    while at >= 0:
        end = at + len(span)
        cut_before = at and _word_char(span[0]) and _word_char(text[at - 1])
        cut_after = end < len(text) and _word_char(span[-1]) and _word_char(text[end])
        if not (cut_before or cut_after):
            return at
        at = text.find(span, at + 1)
    return -1


def _alike_names(a: str, b: str) -> bool:
    return SequenceMatcher(None, a.lower(), b.lower()).ratio() >= NAME_ALIKE


MAX_CLASS_MOVE = 100  # lines: farther, a class's line is likely in another of its methods


def _new_positions(patch: ParsedPatch) -> dict[int, int]:
    """For each removed line, the new-side line number where it stood."""
    at: dict[int, int] = {}
    for hunk in patch.hunks:
        position = hunk.new_start
        for line in hunk.lines:
            if line.kind == REMOVED and line.old_no is not None:
                at[line.old_no] = position
            elif line.new_no is not None:
                position = line.new_no + 1
    return at


def _class_names(patch: ParsedPatch) -> set[str]:
    """The classes a Python patch shows, in its lines or its hunk headers."""
    names = set()
    for hunk in patch.hunks:
        for text in (hunk.header, *(line.text for line in hunk.lines if "class " in line.text)):
            found = definition_in(text, "python")
            if found is not None and found.kind == "class":
                names.add(found.name)
    return names


def _pair(
    fact: FileFact,
    olds: list[DiffLine],
    news: list[DiffLine],
    floor: float,
    allowed: Callable[[DiffLine, DiffLine], bool] | None = None,
) -> tuple[list[tuple[FileFact, DiffLine, str, str]], list[DiffLine], list[DiffLine]]:
    """Edits of removed lines by their most similar added line (each used once), and the
    lines of each side left without a partner; the lines given are all :func:`_editable`."""
    out: list[tuple[FileFact, DiffLine, str, str]] = []
    if not olds or not news:
        return out, olds, news
    used: set[int] = set()
    unpaired: list[DiffLine] = []
    texts = [new.text.strip() for new in news]
    # one matcher per added line, built when a pair first passes the length bound: its index
    # of characters is built once, not once per pair, and not at all for most lines
    matchers: list[SequenceMatcher[str] | None] = [None] * len(news)
    # an identical line scores 1.0 and nothing else does, so the first unused one is the
    # partner, found by hashing; from 200 characters difflib's autojunk may score it lower
    twins: dict[str, list[int]] = {}
    for index, new_text in enumerate(texts):
        if len(new_text) < _AUTOJUNK_FROM:
            twins.setdefault(new_text, []).append(index)
    candidates: list[tuple[float, int, int]] = []  # (ratio, old, new) of the pairs alike enough
    waiting: list[int] = []  # olds without an identical twin
    for position, old in enumerate(olds):
        text = old.text.strip()
        same = twins.get(text)
        twin = next((i for i in same if i not in used), None) if same else None
        if twin is not None:
            used.add(twin)
            continue  # an unchanged line moved: no edit (edit_of gives None)
        waiting.append(position)
        size = len(text)
        for index, new_text in enumerate(texts):
            if index in used:
                continue
            # the quick ratios bound the ratio from above: skip a line that cannot reach the floor
            quick = 2.0 * min(size, len(new_text)) / (size + len(new_text))  # real_quick_ratio
            if quick < floor:
                continue
            matcher = matchers[index]
            if matcher is None:
                matcher = matchers[index] = SequenceMatcher(None, "", new_text)
            matcher.set_seq1(text)
            if matcher.quick_ratio() < floor:
                continue
            ratio = matcher.ratio()
            if (
                ratio >= floor
                and not _rewrapped(text, new_text)
                and (allowed is None or allowed(old, news[index]))
            ):
                candidates.append((ratio, position, index))
    # the most alike pairs first: a removed line takes the added line most like it only when no
    # other removed line is more like that one (``isinstance(x, MambaSpec)`` pairs with its own
    # edited copy, not with the ``EncoderOnlyAttentionSpec`` check removed above it)
    partner: dict[int, int] = {}
    for _ratio, position, index in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        if position not in partner and index not in used:
            partner[position] = index
            used.add(index)
    for position in waiting:
        old = olds[position]
        if position not in partner:
            unpaired.append(old)
            continue
        new = news[partner[position]]
        edit = edit_of(old.text, new.text, python=fact.language == "python")
        if edit is None or _still_there(edit[0], news, partner[position]):
            continue
        if _swapped(edit, olds, position, news, partner[position]):
            continue  # branches reordered: each value is still there, in another line
        out.append((fact, new, *edit))
    return out, unpaired, [x for i, x in enumerate(news) if i not in used]


# -- ranking ------------------------------------------------------------------------------


def _extension_symbols(parsed: Sequence[tuple[FileFact, ParsedPatch]]) -> set[str]:
    """Classes added with an ABC/Protocol/mixin base, and abstract methods (hooks)."""
    found: set[str] = set()
    for _fact, patch in parsed:
        pending_abstract = False
        for line in patch.added():
            text = line.text
            if "class " in text and _EXTENSION_BASE.match(text):
                found.add(text.split("class ", 1)[1].split("(", 1)[0].strip())
            if "abstractmethod" in text and _ABSTRACT.search(text):
                pending_abstract = True
                continue
            if pending_abstract:
                match = _ABSTRACT_HOOK.match(line.text)
                if match:
                    found.add(match.group(1))
                    pending_abstract = False
    return found


def duplicates(parsed: Sequence[tuple[FileFact, ParsedPatch]]) -> dict[str, str]:
    """Files whose change is the same as an earlier file's (path → the first copy's path)."""
    first: dict[tuple[str, ...], str] = {}
    out: dict[str, str] = {}
    # two copies have as many added and as many removed lines: a file whose counts no other
    # file shares has no copy, and its lines are never joined into a key
    sizes = [(len(patch.added()), len(patch.removed())) for _, patch in parsed]
    shared = {size for size, n in Counter(sizes).items() if n > 1 and sum(size) >= 3}
    for (fact, patch), size in zip(parsed, sizes, strict=True):
        if size not in shared:
            continue
        lines = tuple(
            f"{line.kind}{line.text.strip()}"
            for hunk in patch.hunks
            for line in hunk.lines
            if line.kind != " "
        )
        if len(lines) < 3:
            continue
        if lines in first:
            out[fact.path] = first[lines]
        else:
            first[lines] = fact.path
    return out


@dataclass(frozen=True)
class Context:
    """What salience is judged against."""

    title: str
    body: str
    python_carries: bool  # the PR changes Python source: kernels rank below it

    @property
    def about_output(self) -> bool:
        """A PR about logging or diagnostics: its print/log helpers are the change itself."""
        return bool(_ABOUT_OUTPUT.search(self.title))


def _reasons_of_name(
    name: str,
    context: Context,
    tested: set[str],
    edited: set[str],
    files: int,
    *,
    definition: bool = False,
) -> list[str]:
    bare = name.rsplit(".", 1)[-1]
    reasons = []
    if _mentions(context.title, name, bare, after_dot=False):
        reasons.append("in_title")
    elif _names_word(context.body, name) and _as_code(context.body, name):
        reasons.append("in_body")
    elif (
        bare != name and len(bare) >= 6 and _distinct_seen(bare) and _names_word(context.body, bare)
    ):
        reasons.append("in_body")  # `self.model.markov_embed` when the body says `markov_embed`
    elif _spelled_in(context.title, bare, 2 if definition else 3):
        reasons.append("title_words")  # `WeightPrefetchConfig` of "Remove weight prefetch config"
    if name in tested or bare in tested:
        reasons.append("tested")
    if files >= 2:
        reasons.append("cross_file")
    if name in edited or bare in edited:
        reasons.append("edited")
    if _HELPER.search(bare) and not context.about_output:
        reasons.append("helper")
    return reasons


_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_TITLE_WORD = re.compile(r"[A-Za-z]+|\d+")


def _spelled_in(title: str, name: str, least: int) -> bool:
    """Whether the title writes a name's words (``least`` or more, camel or snake case) in a
    row: two for a definition, three for a name the code uses (`kv_cache` of "KV cache" is
    everywhere in such a PR)."""
    words = [w.lower() for w in _NAME_WORD.findall(name)]
    if len(words) < least:
        return False
    said = [w.lower() for w in _TITLE_WORD.findall(title)]
    n = len(words)
    return any(said[i : i + n] == words for i in range(len(said) - n + 1))


def _mentions(text: str, name: str, bare: str, *, after_dot: bool = True) -> bool:
    """Whether prose names this code: the name itself, or the last part of a dotted name when
    that part is a name of its own (``markov_embed``), never an English word (``warning`` of
    ``logger.warning``); a word-like name (``free``) only where the text writes it as code."""
    if bare != name and not _distinct_seen(bare):
        return _names_word(text, name) and _as_code(text, name)
    return _names_word(text, bare, after_dot=after_dot) and _as_code(text, bare)


def _as_code(text: str, name: str) -> bool:
    """A word-like name counts only in code form: in backticks, called, or after a dot."""
    if "." in name or _distinct_seen(name):
        return True
    return (
        f"{name}(" in text
        or f".{name}" in text
        or re.search(rf"`[^`\n]*\b{re.escape(name)}\b[^`\n]*`", text) is not None
    )


def _score(reasons: Sequence[str], lines: int) -> float:
    return round(sum(REASONS[r] for r in reasons) + 0.5 * math.log1p(lines), 3)


def _context_names(parsed: Sequence[tuple[FileFact, ParsedPatch]], body: str) -> dict[str, _Name]:
    """Definitions the hunks show as context (a hunk header, an unchanged ``def`` line) that
    the body names: the function a fix is in, when the diff does not change its first line."""
    found: dict[str, _Name] = {}
    for fact, patch in parsed:
        if fact.role is not Role.SOURCE or fact.duplicate_of:
            continue
        for hunk in patch.hunks:
            texts = [(hunk.header, None)] + [
                (line.text, line.new_no) for line in hunk.lines if line.kind == " "
            ]
            for text, number in texts:
                match = _CONTEXT_DEFINITION.match(text or "")
                if match and match.group(1) not in found and match.group(1) in body:
                    found[match.group(1)] = _Name(
                        match.group(1), fact.path, number, files={fact.path}
                    )
    return found


# every span, so the backticks stay paired: "`cpu` / `np`" holds no span " / "
_BODY_CODE = re.compile(r"`([^`\n]+)`")
_NAME_CHAR = re.compile(r"[A-Za-z_]")


def _body_code_names(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    body: str,
    code: dict[str, list[tuple[DiffLine, str]]],
) -> dict[str, _Name]:
    """Code spans of the body (``seq_lens - offset``, ``get_pergroup_param``) that the changed
    code of a source file shows: what the author points the reader at."""
    spans = [
        span
        for span in dict.fromkeys(m.group(1).strip() for m in _BODY_CODE.finditer(body))
        if 3 <= len(span) <= 60
        and _NAME_CHAR.search(span)
        and span not in _COMMON
        and (not span.isalpha() or _distinct(span))
    ]  # a keyword or a plain word in backticks names no code
    found: dict[str, _Name] = {}
    if not spans:
        return found
    words = {span: _IDENTIFIER.fullmatch(span) is not None for span in spans}
    for fact, _patch in parsed:
        if fact.role is not Role.SOURCE or fact.duplicate_of:
            continue
        lines = code[fact.path]
        whole = "\n".join(text for _line, text in lines)  # one search rules most spans out
        here = [span for span in spans if span not in found and span in whole]
        for line, text in lines if here else ():
            for span in here:
                # a name as a whole word (``_propose`` is not in ``_log_propose_entry``)
                if (
                    span not in found
                    and span in text
                    and (not words[span] or _names_word(text, span))
                ):
                    number = line.old_no if line.kind == REMOVED else line.new_no
                    found[span] = _Name(span, fact.path, number, files={fact.path})
    return found


def _named_by_a_test(name: str, test_names: set[str]) -> bool:
    """Whether a new test (or a new test file) is named after this definition, as
    ``test_<name>`` or ``test_<name>_<case>``: by convention it tests it, through helpers too."""
    if len(name) < 6 or not _distinct_seen(name):
        return False
    own = f"test_{name.lstrip('_')}"
    return any(t == own or t.startswith(own + "_") for t in test_names)


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A name as ranked, before the cut to :data:`MAX_SALIENT`: its fact is made only if kept
    (most candidates of a large PR are not)."""

    score: float
    path: str
    name: str
    fields: Mapping[str, object]  # the fact's other fields

    def fact(self, id: str) -> SalientFact:
        named = {"id": id, "score": self.score, "path": self.path, "name": self.name}
        return SalientFact.model_validate({**named, **self.fields})


def _symbol_facts(
    symbols: Sequence[SymbolFact],
    names: dict[str, _Name],
    context: Context,
    tested: set[str],
    edited: set[str],
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    test_names: set[str],
) -> list[_Candidate]:
    extension = _extension_symbols(parsed)
    duplicate_paths = {f.path for f, _p in parsed if f.duplicate_of}
    kernels = {f.path for f, _p in parsed if f.language == "cpp"}
    found: list[_Candidate] = []
    seen: set[tuple[str | None, str]] = set()
    gone = {(s.path, s.name) for s in symbols if s.change == "removed" and s.kind == "class"}
    for s in symbols:
        if s.in_test or s.kind in ("step", "field") or (s.change == "removed" and s.relocated):
            continue  # tests are named by the test point; a move is said where it arrives
        if s.change == "removed" and s.parent and (s.path, s.parent) in gone:
            continue  # a method of a deleted class goes with it: the class is what was deleted
        if (s.parent, s.name) in seen:
            continue
        seen.add((s.parent, s.name))
        use = names.get(s.name)
        files = len(use.files) if use else 1
        reasons = _reasons_of_name(s.name, context, tested, edited, files, definition=True)
        if "tested" not in reasons and _named_by_a_test(s.name, test_names):
            reasons.append("test_named")
        if s.change == "added" and not s.relocated:
            reasons.append("new_class" if s.kind in ("class", "struct") else "added")
        if s.name in extension:
            reasons.append("extension_point")
        if _DISPATCH.search(s.name) and s.kind in ("function", "method"):
            reasons.append("dispatch")
        if s.name in _GENERIC:
            reasons.append("generic")
        if s.path in kernels and context.python_carries:
            reasons.append("kernel")
        if s.path in duplicate_paths:
            reasons.append("duplicate")
        fields = {
            "provenance": s.provenance,
            "kind": "symbol",
            "line": s.line,
            "reasons": tuple(reasons),
            "symbol": s.id,
            "change": s.change,
            "files": files,
        }
        found.append(_Candidate(_score(reasons, s.lines_changed), s.path, s.name, fields))
    return found


_BEYOND_THERE = frozenset(("in_title", "in_body", "tested", "edited", "cross_file", "relocated"))


def _may_go_beyond_there(
    entry: _Name, context: Context, tested: set[str], edited: set[str]
) -> bool:
    """Whether an identifier may get a reason of :data:`_BEYOND_THERE` (a cheap test that
    :func:`_reasons_of_name` would agree with: prose can name it only if it holds its last
    part): most identifiers have none."""
    name = entry.name
    bare = name.rsplit(".", 1)[-1]
    return bool(
        entry.relocated
        or len(entry.files) >= 2
        or name in tested
        or bare in tested
        or name in edited
        or bare in edited
        or bare in context.title
        or bare in context.body
    )


def _identifier_facts(
    names: dict[str, _Name],
    defined: set[str],
    context: Context,
    tested: set[str],
    edited: set[str],
    kernels: set[str],
) -> list[_Candidate]:
    found: list[_Candidate] = []
    for entry in names.values():
        if entry.name in defined or not _may_go_beyond_there(entry, context, tested, edited):
            continue
        reasons = _reasons_of_name(entry.name, context, tested, edited, len(entry.files))
        change: Literal["used", "introduced", "gone"] = "used"
        if entry.added and not entry.removed:
            reasons.append("introduced")
            change = "introduced"
        elif entry.removed and not entry.added and entry.name not in tested:
            reasons.append("gone")  # no added line uses it, not even a test's
            change = "gone"
        elif entry.relocated:
            reasons.append("relocated")
        if entry.path in kernels and context.python_carries:
            reasons.append("kernel")
        if _BEYOND_THERE.isdisjoint(reasons):
            continue  # an identifier needs a reason beyond being there
        fields = {
            "provenance": {"kind": "file", "ref": entry.path, "line": entry.line},
            "kind": "identifier",
            "line": entry.line,
            "reasons": tuple(reasons),
            "change": change,
            "files": len(entry.files),
        }
        score = _score(reasons, entry.added + entry.removed) - 1.0  # below a definition
        found.append(_Candidate(score, entry.path, entry.name, fields))
    return found


def rank(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    symbols: Sequence[SymbolFact],
    tests: Sequence[TestFact],
    context: Context,
    is_test: Callable[[FileFact], bool] = lambda f: f.role is Role.TEST,
) -> tuple[list[SalientFact], list[EditFact]]:
    """The PR's code names, most salient first, and its in-place edits (most telling first)."""
    code = {  # a test file's removed lines name nothing the ranking counts
        f.path: list(_changed_code(p, python=f.language == "python", removed=not is_test(f)))
        for f, p in parsed
        if (f.role is Role.SOURCE or is_test(f)) and not f.duplicate_of
    }
    names, in_tests = _identifiers(parsed, is_test, code)
    for name, entry in _context_names(parsed, context.body).items():
        names.setdefault(name, entry)
    for name, entry in _body_code_names(parsed, context.body, code).items():
        names.setdefault(name, entry)
    tested = in_tests | {t.name for t in tests}
    raw_edits = _without_made_local(_edits(parsed, is_test, context), parsed)
    edited = {w for _f, _l, before, after in raw_edits for w in _words(before) | _words(after)}
    kernels = {f.path for f, _p in parsed if f.language == "cpp"}
    new_tests = {t.name for t in tests if not (t.existed or t.moved_from or t.renamed_from)}
    new_tests |= {
        PurePosixPath(f.path).stem for f, _p in parsed if is_test(f) and f.status == "added"
    }
    found = _symbol_facts(symbols, names, context, tested, edited, parsed, new_tests)
    found += _identifier_facts(names, {s.name for s in symbols}, context, tested, edited, kernels)
    found.sort(key=lambda x: -x.score)
    best: dict[tuple[str, str], _Candidate] = {}
    for x in found:  # one fact a name and file (a C++ ``operator`` per class is one name)
        best.setdefault((x.path, x.name), x)
    unique = list(best.values())
    ranked = [x.fact(f"n{i}") for i, x in enumerate(unique[:MAX_SALIENT], 1)]
    edited_paths = {f.path for f, _l, _b, _a in raw_edits}
    owners = {
        f.path: (
            _python_owners(p, _stale_headers(p, f.language, symbols))
            if f.language == "python"
            else _header_owners(p, f.language, _stale_headers(p, f.language, symbols))
        )
        for f, p in parsed
        if f.path in edited_paths
    }
    scores = {x.name: x.score for x in ranked}
    renames = _renamed_names(parsed, raw_edits)
    aliases = _aliases(parsed, edited_paths)
    return ranked, _ranked_edits(raw_edits, symbols, context, scores, owners, renames, aliases)


_ASSIGNMENT = re.compile(
    r"^\s*(?P<self>self\.)?(?P<name>[A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)(?P<value>.*)$"
)


def _made_local(patch: ParsedPatch) -> set[str]:
    """Attributes the patch turns into locals of the same value: ``self.batch = Batch(`` removed
    and ``batch = Batch(`` added."""

    def assigned(lines: Iterable[DiffLine], on_self: bool) -> set[tuple[str, str]]:
        found = set()
        for line in lines:
            match = _ASSIGNMENT.match(line.text)
            if match and bool(match["self"]) == on_self:
                found.add((match["name"], _SELF.sub("", match["value"]).strip()))
        return found

    gone = assigned(patch.removed(), on_self=True)
    return {name for name, _value in gone & assigned(patch.added(), on_self=False)}


def _without_made_local(
    edits: list[tuple[FileFact, DiffLine, str, str]],
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
) -> list[tuple[FileFact, DiffLine, str, str]]:
    """The edits but those that only read a local where the attribute it replaced was read
    (``return self.batch`` → ``return batch``): the line does what it did."""
    edited = {f.path for f, _l, before, after in edits if "self." in before + after}
    local = {f.path: _made_local(p) for f, p in parsed if f.path in edited}

    def same(fact: FileFact, before: str, after: str) -> bool:
        names = local.get(fact.path, set())
        attributes = set(re.findall(r"\bself\.(\w+)", f"{before} {after}"))
        return (
            bool(attributes)
            and attributes <= names
            and (_SELF.sub("", before) == _SELF.sub("", after))
        )

    return [e for e in edits if not same(e[0], e[2], e[3])]


def _renamed_names(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    edits: Sequence[tuple[FileFact, DiffLine, str, str]],
) -> set[tuple[str, str, str]]:
    """Edits of one bare name into another that rename it: the file's new side (added and
    context lines) no longer uses the old name, its old side did not use the new one
    (``num_reqs`` → ``num_reqs_padded`` where ``num_reqs`` stays is another value)."""
    bare = [
        (f.path, before, after)
        for f, _line, before, after in edits
        if _IDENTIFIER.fullmatch(before) and _IDENTIFIER.fullmatch(after)
    ]
    edited = {f.path for f, _l, _b, _a in edits}
    bare += _reassigned(p for p in parsed if p[0].path in edited)
    if not bare:
        return set()
    # only these names are looked up: a line none of them is in (every identifier of its uses
    # is part of its text) adds none of them to either side
    asked: dict[str, set[str]] = {}
    for path, before, after in bare:
        asked.setdefault(path, set()).update((before, after))
    words: dict[str, tuple[set[str], set[str]]] = {}  # the new side's, the old side's
    for f, p in parsed:
        if f.path not in asked:
            continue
        new_side, old_side = words.setdefault(f.path, (set(), set()))
        names = asked[f.path]
        for hunk in p.hunks:
            for line in hunk.lines:
                if not any(name in line.text for name in names):
                    continue
                found = _IDENTIFIER.findall(_uses(line.text, f.language))
                if line.kind != REMOVED:
                    new_side.update(found)
                if line.kind != ADDED:
                    old_side.update(found)
    return {
        (path, before, after)
        for path, before, after in bare
        if before not in words[path][0] and after not in words[path][1]
    }


def _reassigned(parsed: Iterable[tuple[FileFact, ParsedPatch]]) -> list[tuple[str, str, str]]:
    """(path, old, new) of a local the patch assigns the same value under a new name (``x =
    self.n`` removed, ``y = self.n`` added): a candidate rename, the uses decide."""
    found: list[tuple[str, str, str]] = []
    for f, p in parsed:
        if f.language != "python":
            continue
        gone = {value: name for name, value in _local_bindings(p.removed())}
        new_names = {value: name for name, value in _local_bindings(p.added())}
        for value, old in gone.items():
            new = new_names.get(value)
            if new and new != old:
                found.append((f.path, old, new))
    return found


def _local_assignments(lines: Iterable[DiffLine]) -> Iterator[tuple[str, str]]:
    """(name, value) of each Python line that assigns a local (``x = self.n``; not ``self.x``)."""
    for line in lines:
        if "=" not in line.text:
            continue  # no assignment, and its code (a part of it) holds none either
        match = _ASSIGNMENT.match(_python_code(line.text))
        if match and not match["self"]:
            yield match["name"], match["value"].strip()


_LOOP = re.compile(r"^\s*for\s+(?P<name>[A-Za-z_]\w*)\s+in\s+(?P<value>.+?):\s*$")


def _local_bindings(lines: Iterable[DiffLine]) -> Iterator[tuple[str, str]]:
    """(name, value) of each local a Python line binds: an assignment, or a loop's target
    (``for item in keys:`` binds ``item`` to what ``keys`` yields)."""
    lines = list(lines)
    yield from _local_assignments(lines)
    for line in lines:
        if "for " in line.text and (match := _LOOP.match(_python_code(line.text))):
            yield match["name"], "for " + match["value"].strip()


_KEYWORD = re.compile(r"\b[A-Za-z_]\w*=(?!=)")  # ``name=`` of a keyword argument: no use of name


def _uses(text: str, language: str | None) -> str:
    """A Python line's code without its comment and its keyword names: what it reads and
    writes (other languages: the line as it is)."""
    return _KEYWORD.sub("=", _python_code(text)) if language == "python" else text


def _aliases(
    parsed: Sequence[tuple[FileFact, ParsedPatch]], paths: set[str]
) -> frozenset[tuple[str, str, str]]:
    """(path, name, value) of the locals the added lines assign (``block_size =
    self.num_speculative_tokens``): an edit of ``value`` into ``name`` passes the same value."""
    values: dict[tuple[str, str], set[str]] = {}
    for f, p in parsed:
        if f.path not in paths or f.language != "python":
            continue
        for name, value in _local_assignments(p.added()):
            values.setdefault((f.path, name), set()).add(value)
    # a local given another value elsewhere (a fallback under an `if`) is no alias
    return frozenset(
        (path, name, next(iter(v))) for (path, name), v in values.items() if len(v) == 1
    )


def _same_value(
    path: str, before: str, after: str, aliases: frozenset[tuple[str, str, str]]
) -> bool:
    """Whether an edit only passes a value under a new local's name (``k=X`` → ``k=b`` where the
    PR adds ``b = X``)."""
    key, sep, value = before.partition("=")
    new_key, new_sep, new_value = after.partition("=")
    if sep and new_sep and key.strip() == new_key.strip() and "=" not in (value[:1], new_value[:1]):
        before, after = value.strip(), new_value.strip()
    if (path, after, before) in aliases:
        return True
    # an attribute read through the new local: ``metadata.seq_lens`` with ``metadata = m[k]``
    root, dot, rest = after.partition(".")
    return bool(dot) and any(
        before == f"{value}.{rest}" for value in _alias_values(aliases, path, root)
    )


def _alias_values(aliases: frozenset[tuple[str, str, str]], path: str, name: str) -> list[str]:
    return [value for p, n, value in aliases if (p, n) == (path, name)]


def _renamed_use(before: str, after: str, renamed: dict[str, str]) -> bool:
    """Whether ``after`` is ``before`` with a renamed local's uses renamed (keyword names
    stay: ``num_query_per_req=num_query_per_req`` → ``num_query_per_req=block_size``)."""
    if not renamed or before == after:
        return False
    out, at = [], 0
    for match in _IDENTIFIER.finditer(before):
        name = match[0]
        keyword = before[match.end() : match.end() + 1] == "=" and (
            before[match.end() + 1 : match.end() + 2] != "="
        )
        out.append(before[at : match.start()])
        out.append(name if keyword else renamed.get(name, name))
        at = match.end()
    out.append(before[at:])
    return "".join(out) == after and not _IDENTIFIER.fullmatch(before)


def _unambiguous(renames: set[tuple[str, str, str]]) -> dict[str, str]:
    """Each renamed local's new name; a local split into two names (``nblk_idx`` into
    ``qk_cols`` and ``v_cols``) is no rename, and no set order may pick one of them."""
    targets: dict[str, set[str]] = {}
    for _path, before, after in renames:
        targets.setdefault(before, set()).add(after)
    return {before: next(iter(after)) for before, after in targets.items() if len(after) == 1}


def _ranked_edits(
    raw: Sequence[tuple[FileFact, DiffLine, str, str]],
    symbols: Sequence[SymbolFact],
    context: Context,
    scores: dict[str, float],
    owners: dict[str, dict[int, str]],
    renames: set[tuple[str, str, str]],
    aliases: frozenset[tuple[str, str, str]] = frozenset(),
) -> list[EditFact]:
    def worth(item: tuple[FileFact, DiffLine, str, str]) -> float:
        fact, _line, before, after = item
        # in a fixed order and rounded: a float sum over a set follows string hashing, and two
        # equally worth edits must not swap places from one run to the next
        words = sorted(_words(before) | _words(after))
        value = sum(max(scores.get(w, 0.0), 0.0) for w in words)
        value += sum(2.0 for w in words if len(w) >= 4 and w in context.body)
        if fact.role is Role.TEST:
            value -= 3.0
        if fact.language == "cpp" and context.python_carries:
            value -= 3.0
        if (fact.path, before, after) in renames:
            value -= 3.0  # a name renamed (``skipped`` → ``step_skipped``): what it does is kept
        return round(value, 6)

    def owner_of(fact: FileFact, line: DiffLine) -> str | None:
        """The definition the line sits in, as the hunk shows it."""
        return owners.get(fact.path, {}).get(line.new_no or -1)

    # a line of a definition the PR adds (not one moved or renamed) is new code, not an edit
    # made in place: "X 里把 a 改为 b" would say X was there before
    new_defs = {(s.path, s.name) for s in symbols if s.change == "added" and not s.relocated}
    renamed_definitions = {s.renamed_from: s.name for s in symbols if s.renamed_from}
    local_renames = _unambiguous(renames)
    renamed_to = local_renames | renamed_definitions
    seen: set[tuple[str, str]] = set()
    unique = []
    for item in raw:
        pair = (item[2], item[3])
        names = _IDENTIFIER.findall(item[2])
        if (
            any(n in renamed_definitions for n in names)
            and _IDENTIFIER.sub(lambda m: renamed_to.get(m[0], m[0]), item[2]) == item[3]
        ):
            continue  # a renamed definition used under its new name: the rename says it
        if _renamed_use(item[2], item[3], local_renames) or _same_value(
            item[0].path, item[2], item[3], aliases
        ):
            continue  # the same value under a local's new name: nothing a reader need check
        if pair not in seen and (item[0].path, owner_of(item[0], item[1])) not in new_defs:
            seen.add(pair)
            unique.append(item)
    best = sorted(unique, key=worth, reverse=True)[:MAX_EDITS]
    out = []
    for index, (fact, line, before, after) in enumerate(best, start=1):
        owner = owner_of(fact, line)
        out.append(
            EditFact(
                id=f"e{index}",
                provenance=Provenance(kind="file", ref=fact.path, line=line.new_no),
                path=fact.path,
                line=line.new_no,
                before=before,
                after=after,
                symbol=owner,
            )
        )
    return out


def _stale_headers(
    patch: ParsedPatch, language: str | None, symbols: Sequence[SymbolFact]
) -> dict[str, str | None]:
    """Definitions the file's patch deletes, each with the name it has now when it was renamed
    in place (else None): git takes a hunk header from the old side, so a header naming one of
    them does not say where the hunk's new lines sit."""
    renamed = {
        s.name: s.renamed_to
        for s in symbols
        if s.path == patch.path and s.change == "removed" and s.moved_to in (None, patch.path)
    }
    return {name: renamed.get(name) for name in deleted_definitions(patch, language)}


def _header_owner(
    hunk: Hunk, language: str | None, stale: dict[str, str | None]
) -> Definition | None:
    """The definition a hunk header names, as it is called after the change (none when the
    PR removed it)."""
    opened = hunk_definition(hunk, language)
    if opened is None or opened.name not in stale:
        return opened
    now = stale[opened.name]
    return Definition(now, opened.kind, opened.indent) if now else None


def _python_owners(
    patch: ParsedPatch, stale: dict[str, str | None], side: str = ADDED
) -> dict[int, str]:
    """For each added line of a Python patch (or removed line, ``side``), the innermost
    definition it sits in on that side: the ``def``/``class`` lines of the hunk above it, else
    the hunk header's (git prints the nearest top-level line: a method between it and the hunk
    is unknown, so the class is said, never the method above; a header naming what the PR
    removed, ``stale``, says none of the new side)."""
    owners: dict[int, str] = {}
    other = REMOVED if side == ADDED else ADDED
    for hunk in patch.hunks:
        opened = (
            _header_owner(hunk, "python", stale)
            if side == ADDED
            else hunk_definition(hunk, "python")
        )
        stack: list[tuple[int, str]] = [(opened.indent, opened.name)] if opened else []
        for line in hunk.lines:
            if line.kind == other or not line.text.strip():
                continue
            body = line.text.lstrip()
            indent = len(line.text) - len(body)
            if body[0] not in ")]}":  # a continuation line closes nothing
                while stack and stack[-1][0] >= indent:
                    stack.pop()
            found = definition_in(line.text, "python")
            number = line.new_no if side == ADDED else line.old_no
            if found is not None:
                stack.append((indent, found.name))
            elif line.kind == side and number is not None and stack:
                owners[number] = stack[-1][1]
    return owners


def _header_owners(
    patch: ParsedPatch, language: str | None, stale: dict[str, str | None]
) -> dict[int, str]:
    """For each added line of a patch in a language without Python's indentation, the
    definition git's hunk header names, or the last one the hunk opens above the line; a line
    of a hunk whose header names none (``public:``) before any opens has no owner — the nearest
    changed definition above it may have ended long before."""
    owners: dict[int, str] = {}
    for hunk in patch.hunks:
        opened = _header_owner(hunk, language, stale)
        current = opened.name if opened else None
        for line in hunk.lines:
            if line.kind == REMOVED:
                continue
            found = definition_in(line.text, language)
            if found is not None:
                current = found.name
            elif line.kind == ADDED and line.new_no is not None and current:
                owners[line.new_no] = current
            if found is None and line.text.startswith("}"):
                current = None  # a brace in the first column closes a top-level body
    return owners

"""Changed symbols, added tests and test techniques, read from parsed patches.

Symbols come from three places, best first:

* ``ast``: a Python file the PR adds whole is parsed, giving exact functions, classes and lines;
* hunk walking: inside each hunk, ``def``/``class``/``fn``/… lines (context or added) open a
  scope; every changed line is attributed to the innermost open scope, or to the function git
  named in the hunk header when the hunk starts inside a body;
* patterns per language for definitions that are added or removed outright.

Only names that occur in the patch are ever produced, so a writer citing them cites real code.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from prdigest.analyze.patches import ADDED, CONTEXT, REMOVED, DiffLine, Hunk, ParsedPatch
from prdigest.core.models import Provenance, SymbolFact, TechniqueFact, TestFact

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".c": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".cu": "cpp",
    ".cuh": "cpp",
    ".h": "cpp",
    ".hpp": "cpp",
    ".rs": "rust",
    ".go": "go",
    ".sh": "shell",
    ".bash": "shell",
    ".js": "js",
    ".ts": "js",
    ".tsx": "js",
    ".jsx": "js",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".md": "markdown",
    ".rst": "markdown",
    ".json": "json",
}


def language_of(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1]
    if name in {"Dockerfile", "Makefile", "CMakeLists.txt"} or name.startswith("Dockerfile"):
        return "build"
    dot = name.rfind(".")
    return LANGUAGES.get(name[dot:].lower()) if dot >= 0 else None


# -- definition patterns -----------------------------------------------------------------

_PY_DEF = re.compile(r"^(?P<indent>\s*)(?:async\s+)?(?P<kw>def|class)\s+(?P<name>[A-Za-z_]\w*)")
_RUST_DEF = re.compile(
    r"^(?P<indent>\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
    r"(?:extern\s+\"C\"\s+)?(?P<kw>fn|struct|enum|trait)\s+(?P<name>[A-Za-z_]\w*)"
)
_RUST_IMPL = re.compile(r"^\s*impl(?:<[^>]*>)?\s+(?:[\w:<>]+\s+for\s+)?(?P<name>[A-Za-z_]\w*)")
_RUST_MACRO = re.compile(r"^\s*macro_rules!\s+(?P<name>[A-Za-z_]\w*)")
_GO_DEF = re.compile(r"^func\s+(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_]\w*)\s*\(")
_GO_TYPE = re.compile(r"^type\s+(?P<name>[A-Za-z_]\w*)\s+(?:struct|interface)")
_SHELL_DEF = re.compile(r"^\s*(?:function\s+)?(?P<name>[A-Za-z_][\w:-]*)\s*\(\)\s*\{?\s*$")
_SHELL_FUNCTION_KW = re.compile(r"^\s*function\s+(?P<name>[A-Za-z_][\w:-]*)\s*\{?\s*$")
_JS_DEF = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\s*\*?\s*(?P<fn>[A-Za-z_$][\w$]*)"
    r"|class\s+(?P<cls>[A-Za-z_$][\w$]*)"
    r"|(?:const|let)\s+(?P<arrow>[A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?\([^)]*\)\s*=>)"
)
_CPP_TYPE = re.compile(
    r"^\s*(?:template\s*<[^>]*>\s*)?(?P<kw>class|struct|enum(?:\s+class)?)\s+"
    r"(?:__attribute__\(\([^)]*\)\)\s*)?(?P<name>[A-Za-z_]\w*)\s*(?::[^;{]*)?\{?\s*$"
)
_CPP_FUNC = re.compile(
    r"^\s*(?:template\s*<[^>]*>\s*)?(?:(?:static|inline|virtual|constexpr|explicit|extern|"
    r"__global__|__device__|__host__|__forceinline__|C10_HOST_DEVICE)\s+)*"
    r"[A-Za-z_][\w:<>,\s\*&]*?[\s\*&](?P<name>~?[A-Za-z_][\w:]*)\s*\((?P<args>[^;]*)$"
)
_CPP_NOT_FUNC = {
    "if",
    "for",
    "while",
    "switch",
    "return",
    "else",
    "do",
    "sizeof",
    "catch",
    "new",
    "delete",
    "throw",
    "case",
    "static_assert",
    "decltype",
    "TORCH_CHECK",
    "assert",
    "constexpr",
    "consteval",
    "alignof",
    "noexcept",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "dynamic_cast",
}


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    kind: str
    indent: int


# Words one of which every definition line of a language contains: a cheap test before regexes.
_DEFINITION_WORDS: dict[str, re.Pattern[str]] = {
    language: re.compile("|".join(re.escape(word) for word in words))
    for language, words in {
        "python": ("def ", "class "),
        "rust": ("fn ", "struct ", "enum ", "trait ", "impl", "macro_rules!"),
        "go": ("func", "type "),
        "shell": ("()", "function "),
        "js": ("function", "class ", "=>"),
        "cpp": ("(", "class ", "struct ", "enum "),
    }.items()
}


def definition_in(line: str, language: str | None) -> Definition | None:
    """The function/class a source line defines, if it defines one."""
    if language == "python":  # by far the most lines: two substring tests beat a regex search
        if "def " not in line and "class " not in line:
            return None
    else:
        words = _DEFINITION_WORDS.get(language or "")
        if words is None or not words.search(line):
            return None
    stripped = line.strip()
    if not stripped or (stripped.startswith(("#", "//", "*", "/*")) and language != "shell"):
        return None
    indent = len(line) - len(line.lstrip())
    if language == "python":
        m = _PY_DEF.match(line)
        if m:
            kind = "class" if m["kw"] == "class" else ("method" if indent else "function")
            return Definition(m["name"], kind, indent)
        return None
    if language == "rust":
        return _rust_definition(line, indent)
    if language == "go":
        m = _GO_DEF.match(line) or _GO_TYPE.match(line)
        return (
            Definition(m["name"], "function" if line.startswith("func") else "struct", 0)
            if m
            else None
        )
    if language == "shell":
        m = _SHELL_DEF.match(line) or _SHELL_FUNCTION_KW.match(line)
        return Definition(m["name"], "shell", indent) if m else None
    if language == "js":
        m = _JS_DEF.match(line)
        if m:
            name = m["fn"] or m["arrow"] or m["cls"]
            return Definition(name, "class" if m["cls"] else "function", indent)
        return None
    if language == "cpp":
        return _cpp_definition(line, indent)
    return None


def _rust_definition(line: str, indent: int) -> Definition | None:
    m = _RUST_DEF.match(line)
    if m:
        kind = {
            "fn": "method" if indent else "function",
            "struct": "struct",
            "enum": "enum",
            "trait": "trait",
        }[m["kw"]]
        return Definition(m["name"], kind, indent)
    m = _RUST_IMPL.match(line)
    if m:
        return Definition(m["name"], "struct", indent)  # an impl block scopes its methods
    m = _RUST_MACRO.match(line)
    return Definition(m["name"], "macro", indent) if m else None


def _cpp_definition(line: str, indent: int) -> Definition | None:
    m = _CPP_TYPE.match(line)
    if m:
        kind = (
            "enum" if m["kw"].startswith("enum") else ("class" if m["kw"] == "class" else "struct")
        )
        return Definition(m["name"], kind, indent)
    if line.rstrip().endswith(";") or "=" in line.split("(", 1)[0]:
        return None
    m = _CPP_FUNC.match(line)
    if not m:
        return None
    name = m["name"].split("::")[-1]
    first = line.split(None, 1)[0]
    if name in _CPP_NOT_FUNC or name.isupper() or first in _CPP_NOT_FUNC:
        return None  # `if constexpr (…) {`, `return Make(` : a statement, not a signature
    return Definition(name, "function", indent)


# a whole one-line def header whose first parameter is not self or cls: a plain function
_PLAIN_DEF = re.compile(
    r"^(?:async\s+)?def\s+\w+\((?!\s*(?:self|cls)\b)[^()]*\)\s*(?:->[^:]*)?:\s*$"
)


def hunk_definition(hunk: Hunk, language: str | None) -> Definition | None:
    """The definition a hunk starts inside, from its header; none when the header names a
    plain function but the hunk's code uses ``self.``: GitHub names the innermost def above a
    hunk, which may be a nested function that ended before it (a ``def mock_pass(a, b):``
    inside a method whose later lines the hunk changes)."""
    header = hunk.header.strip()
    plain = language == "python" and _PLAIN_DEF.match(header)
    if plain and any("self." in line.text for line in hunk.lines):
        return None
    return header_definition(hunk.header, language)


def header_definition(header: str, language: str | None) -> Definition | None:
    """The enclosing function git printed in a hunk header (``@@ … @@ def foo(self):``)."""
    if not header:
        return None
    found = definition_in(header, language)
    if found is None:
        return None
    kind = found.kind
    if language == "python" and kind == "function" and re.search(r"\(\s*(?:self|cls)\b", header):
        kind = "method"
    if language == "python":
        # git prints the header without its indentation; a method sits inside a class, anything
        # else at the top (git's default function lines start at column 0), so a top-level
        # line below the hunk's class closes it
        return Definition(found.name, kind, 2 if kind == "method" else 0)
    return Definition(found.name, kind, -1)


# -- symbol extraction --------------------------------------------------------------------


@dataclass
class _SymbolStats:
    name: str
    kind: str
    parent: str | None
    line: int | None = None
    added_def: bool = False
    removed_def: bool = False
    lines_changed: int = 0
    via: str = "hunk_header"
    order: int = 0
    # the changed lines on each side: one text without whitespace when only the layout changed
    removed_lines: list[str] = field(default_factory=list)
    added_lines: list[str] = field(default_factory=list)


@dataclass
class _Scope:
    """Definitions open at the current line of a hunk, outermost first."""

    stack: list[Definition] = field(default_factory=list)
    indented: bool = True  # Python and shell: indentation closes scopes

    def enter(self, definition: Definition) -> None:
        while self.stack and self.stack[-1].indent >= definition.indent >= 0:
            self.stack.pop()
        self.stack.append(definition)

    def current(self, indent: int) -> Definition | None:
        if self.indented:
            while self.stack and self.stack[-1].indent >= indent:
                self.stack.pop()
        return self.stack[-1] if self.stack else None

    def parent_of(self, target: Definition) -> str | None:
        below = self.stack[: self.stack.index(target)] if target in self.stack else self.stack
        for definition in reversed(below):
            if definition.kind in ("class", "struct", "trait"):
                return definition.name
        return None


_CONSTANT = re.compile(
    r"^\s*(?:export\s+|readonly\s+|declare\s+(?:-\w+\s+)?)?(?P<name>_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"
    r"\s*(?::\s*[\w\[\], .|]+)?=(?!=)"
)


_FIELD = re.compile(r"^\s+(?P<name>[a-z_][a-z0-9_]*)\s*:\s*[^=()]+?(?:\s*=.*)?$")


def field_in(line: str, language: str | None, scope: Definition | None) -> str | None:
    """An annotated attribute a Python class body declares (``awaiting_kvs: bool = False``);
    not a parameter of a signature that spans lines (it ends with a comma or bracket)."""
    if language != "python" or scope is None or scope.kind != "class":
        return None
    if line.rstrip().endswith((",", "(", "[")):
        return None
    if len(line) - len(line.lstrip()) > scope.indent + 4:
        return None  # deeper than the class body: a method's annotated local (its def above
        # the hunk, the header naming only the class)
    match = _FIELD.match(line)
    return match["name"] if match else None


def constant_in(line: str, language: str | None) -> str | None:
    """The UPPER_CASE name a Python or shell line assigns, if any (``BUILD_RETRY_PATTERN=…``)."""
    if language not in ("python", "shell"):
        return None
    first = line.lstrip()[:1]
    if not (first.isupper() or first in ("_", "e", "r", "d")):  # export / readonly / declare
        return None
    match = _CONSTANT.match(line)
    if match is None:
        return None
    code = line.split("#", 1)[0].rstrip()
    if language == "python" and (code.endswith(",") or code.count(")") > code.count("(")):
        return None  # a keyword argument of a call wrapped over lines (`TOTAL_CP_RANK=rank,`)
    return match["name"]


def _count(stats: dict[tuple[str, str | None], _SymbolStats], target: Definition) -> None:
    entry = stats.get((target.name, None))
    if entry is None:
        entry = stats[(target.name, None)] = _SymbolStats(
            target.name, target.kind, None, order=len(stats)
        )
    entry.lines_changed += 1


def _decorated(hunk: Hunk, language: str | None) -> dict[int, Definition]:
    """Python decorator lines of a hunk and the top-level definition each one decorates."""
    if language != "python" or not any(line.text[:1] == "@" for line in hunk.lines):
        return {}  # a decorator line starts with its "@": most hunks have none
    found: dict[int, Definition] = {}
    pending: list[int] = []
    for index, line in enumerate(hunk.lines):
        stripped = line.text.lstrip()
        if stripped.startswith("@") and len(line.text) == len(stripped):
            pending.append(index)
            continue
        if pending and stripped and (line.text[0] in " \t" or stripped[0] in _CLOSERS):
            pending.append(index)  # an argument of a decorator written over several lines
            continue
        definition = definition_in(line.text, language) if pending else None
        if definition is not None and definition.indent == 0:
            found.update(dict.fromkeys(pending, definition))
        if stripped and not stripped.startswith(("#", ")")) and not line.text.startswith(" "):
            pending = []
    return found


_CLOSERS = ")]}"
_INSIDE = 1 << 30  # an indentation no open scope reaches: the line stays in the innermost one


DOC_QUOTES = ('"""', "'''")


@dataclass(slots=True)
class _Words:
    """Per side of a hunk: the docstring quote open, if any, and where a def header stands."""

    quote: str = ""
    header_open: bool = False  # a def/class header wrapped over lines, not closed yet
    after_def: bool = False  # the last line closed a def/class header


def _doc_quote(body: str) -> str:
    """The triple quote a stripped line opens with (after a string prefix), if any."""
    lead = body.lstrip("rbuRBU")[:3]
    return lead if lead in DOC_QUOTES else ""


def _words_not_code(kind: str, body: str, state: dict[str, _Words]) -> bool:
    """Whether a changed Python line is a comment or a docstring's (opened right under its
    def), which change no definition; context lines only move the state along."""
    if body.startswith("#"):
        return kind != CONTEXT
    words = False
    opens_header = body.startswith(("def ", "async def ", "class "))
    closed = body.rstrip().endswith(":")
    for side in (ADDED, REMOVED) if kind == CONTEXT else (kind,):
        st = state[side]
        if st.quote:
            words, st.after_def = True, False
            if st.quote in body:
                st.quote = ""
            continue
        opener = _doc_quote(body) if st.after_def else ""  # only right under a def
        if opener:
            words, st.after_def = True, False
            if body.count(opener) == 1:
                st.quote = opener
            continue
        header = st.header_open or opens_header
        st.header_open, st.after_def = header and not closed, header and closed
    return words and kind != CONTEXT


def _context_line(
    sides: dict[str, _Scope],
    definition: Definition | None,
    text: str,
    *,
    indented: bool,
    continued: bool,
) -> None:
    """What an unchanged line opens or closes, on both sides of the diff."""
    if definition is not None:
        sides[ADDED].enter(definition)
        sides[REMOVED].enter(definition)
    elif indented and not continued:  # indentation closes scopes on both sides
        indent = len(text) - len(text.lstrip())
        for scope in sides.values():
            while scope.stack and scope.stack[-1].indent >= indent:
                scope.stack.pop()
    elif not indented and text.startswith("}"):
        for scope in sides.values():  # a brace in the first column closes a top-level body
            scope.stack.clear()


_C_COMMENT = ("//", "/*", "*/", "* ")
_MAGIC_COMMA = re.compile(r",(?=[)\]}])")  # the comma a formatter adds before a wrapped bracket


def _comment_line(body: str, language: str | None) -> bool:
    """Whether a stripped line is a comment of a C-like language (or of shell)."""
    if language == "shell":
        return body.startswith("#") and not body.startswith("#!")
    return body.startswith(_C_COMMENT) or body == "*"


MAX_MAGIC_COMMAS = 3  # trailing commas a formatter adds or drops in one definition's rewrap


def _visible(lines: list[str]) -> int:
    """The characters of lines that are not spaces or tabs."""
    return sum(len(t) - t.count(" ") - t.count("\t") for t in lines)


def _relaid(stats: _SymbolStats) -> bool:
    """Whether a definition's changed lines only moved its line breaks and spaces (a call
    rewrapped by a formatter): the code is what it was. Lines that moved whole, unchanged,
    are no rewrap: the order of statements changed."""
    if stats.added_def or stats.removed_def or not stats.removed_lines or not stats.added_lines:
        return False
    if abs(_visible(stats.removed_lines) - _visible(stats.added_lines)) > MAX_MAGIC_COMMAS:
        return False  # most changes: more or fewer characters than spacing and a comma explain
    old = ["".join(t.split()) for t in stats.removed_lines]
    new = ["".join(t.split()) for t in stats.added_lines]
    return _MAGIC_COMMA.sub("", "".join(old)) == _MAGIC_COMMA.sub("", "".join(new)) and sorted(
        old
    ) != sorted(new)


def _walk_hunk(
    hunk: Hunk,
    language: str | None,
    stats: dict[tuple[str, str | None], _SymbolStats],
    gone: frozenset[str] = frozenset(),
) -> None:
    """Attribute every changed line of a hunk to the innermost definition it sits in.

    Two scopes are kept, one per side of the diff: an added line belongs to the definitions
    the new file has around it (context and added lines), a removed line to those the old file
    had (context and removed lines). So a field added below a class the diff deletes is not
    given to the deleted class, and a method removed with its class is not given to the class
    that replaced it. git takes the hunk header from the old side: one naming a definition the
    patch deletes (``gone``) opens no scope, for the new lines below it sit in something else.
    """
    indented, python = language in ("python", "shell"), language == "python"
    constants = indented  # the languages constant_in reads: its call is spared for the others
    sides = {ADDED: _Scope(indented=indented), REMOVED: _Scope(indented=indented)}
    opened = hunk_definition(hunk, language)
    if opened and opened.name not in gone:
        for scope in sides.values():
            scope.stack.append(opened)
    last: dict[str, tuple[Definition, str | None]] = {}  # parent_of is asked once per target
    decorated = _decorated(hunk, language)
    # words, not code: a comment, and a docstring opened right under its def (the quote it
    # closes with, per side of the diff), change no definition
    words = {ADDED: _Words(), REMOVED: _Words()}
    for index, line in enumerate(hunk.lines):
        text = line.text
        body = text.lstrip()
        if not body:
            continue
        if python and _words_not_code(line.kind, body, words):
            continue
        if not python and line.kind != CONTEXT and _comment_line(body, language):
            continue  # a comment changes no definition (a banner removed above a function)
        if decorated and index in decorated and line.kind != CONTEXT:  # its definition's
            _count(stats, decorated[index])
            continue
        definition = (
            None  # definition_in's own first test, without a call for every Python line
            if python and "def " not in text and "class " not in text
            else definition_in(text, language)
        )
        # a line that opens with a closing bracket (``) -> int:`` of a signature written over
        # several lines) continues a statement: its indentation closes no scope
        continued = python and body[0] in _CLOSERS
        if line.kind == CONTEXT:
            _context_line(sides, definition, text, indented=indented, continued=continued)
            continue
        if definition is not None:
            sides[line.kind].enter(definition)
        scope = sides[line.kind]
        indent = _INSIDE if continued else len(text) - len(body)
        target = definition if definition is not None else scope.current(indent)
        # in a function's body an UPPER_CASE name is a global assigned there, not a constant
        in_function = target is not None and target.kind in ("function", "method")
        named = (
            None
            if definition is not None or not constants or in_function
            else constant_in(text, language)
        )
        if named is not None:  # a changed constant is named for itself, not its enclosing scope
            target, parent = Definition(named, "constant", -1), None
        elif (
            definition is None
            and target is not None
            and target.kind == "class"  # field_in's own test, without a call for every line
            and (field := field_in(text, language, target)) is not None
        ):
            target, parent, named = Definition(field, "field", -1), target.name, field
        elif target is None:
            continue
        elif line.kind in last and last[line.kind][0] is target:
            parent = last[line.kind][1]
        else:
            parent = scope.parent_of(target)
            last[line.kind] = (target, parent)
        _attribute(stats, line, target, parent, defines=definition is not None or named is not None)
        if not indented and text.startswith("}"):
            scope.stack.clear()  # the brace is its definition's last line: what follows is not


def _attribute(
    stats: dict[tuple[str, str | None], _SymbolStats],
    line: DiffLine,
    target: Definition,
    parent: str | None,
    *,
    defines: bool,
) -> None:
    """Count a changed line for ``target``; a line that ``defines`` it marks it added or
    removed."""
    entry = stats.get((target.name, parent))
    if entry is None:
        entry = _SymbolStats(target.name, target.kind, parent, order=len(stats))
        stats[(target.name, parent)] = entry
    entry.lines_changed += 1
    (entry.added_lines if line.kind == ADDED else entry.removed_lines).append(line.text)
    if defines:
        if line.kind == ADDED:
            entry.added_def, entry.line, entry.via = True, line.new_no, "pattern"
        else:
            entry.removed_def = True
            entry.line = entry.line or line.old_no
    elif entry.line is None and line.kind == ADDED:
        entry.line = line.new_no


_YAML_STEP = re.compile(r"^\s*-?\s*label:\s*[\"']?(?P<name>[^\"'#]+?)[\"']?\s*(?:#.*)?$")


# a line that only reports (a log call, a print, a warning): diagnostics, not behaviour
LOGGING_CALL = re.compile(
    r"^\s*(?:(?:self\.)?_?log(?:ger)?|logging)\.\w+\(|^\s*print\(|^\s*warnings\.warn\("
)

# a GitHub Actions job: a key two spaces in under `jobs:` (the layout GitHub's docs and
# generators use; a workflow indented otherwise has its jobs unnamed, never misnamed)
_WORKFLOW_JOB = re.compile(r"^  (?P<name>[A-Za-z_][\w-]*):\s*(?:#.*)?$")
_TOP_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*):")
# a job's display name (a key four spaces in): renaming it changes no step
_JOB_DISPLAY_NAME = re.compile(r"^    name:\s")


def _is_workflow(path: str) -> bool:
    return path.startswith(".github/workflows/")


def _step_at(line: str, in_jobs: bool) -> str | None:
    """The CI step a line opens: a Buildkite ``- label: …``, or a workflow job's key."""
    match = _YAML_STEP.match(line)
    if match:
        return match["name"].strip()
    job = _WORKFLOW_JOB.match(line) if in_jobs else None
    return job["name"] if job else None


def _yaml_steps(parsed: ParsedPatch) -> list[_SymbolStats]:
    """CI steps that a patch adds or changes: ``- label: …`` in Buildkite-style YAML, the jobs
    of a GitHub Actions workflow (the hunk header or a ``jobs:`` line places a hunk there)."""
    stats: dict[str, _SymbolStats] = {}
    workflow = _is_workflow(parsed.path)
    for hunk in parsed.hunks:
        current: str | None = None
        in_jobs = workflow and hunk.header.strip() == "jobs:"
        for line in hunk.lines:
            top = _TOP_KEY.match(line.text) if workflow else None
            if top:  # a top-level key ends the job before it
                in_jobs, current = top["key"] == "jobs", None
            name = _step_at(line.text, in_jobs)
            match = name is not None
            if match:
                current = name
            if line.kind == CONTEXT or current is None or not line.text.strip():
                continue
            if in_jobs and _JOB_DISPLAY_NAME.match(line.text):
                continue
            entry = stats.setdefault(current, _SymbolStats(current, "step", None, order=len(stats)))
            entry.lines_changed += 1
            if match and line.kind == ADDED:
                entry.added_def, entry.line, entry.via = True, line.new_no, "pattern"
            elif match:
                entry.removed_def = True
            elif entry.line is None and line.kind == ADDED:
                entry.line = line.new_no
    return list(stats.values())


def _python_ast_symbols(parsed: ParsedPatch) -> list[_SymbolStats] | None:
    """Exact symbols of a Python file added whole; None when its text does not parse."""
    if len(parsed.hunks) != 1 or parsed.hunks[0].old_start not in (0, 1):
        return None
    lines = parsed.hunks[0].lines
    if any(line.kind != ADDED for line in lines):
        return None
    source = "\n".join(line.text for line in lines)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: list[_SymbolStats] = []

    def visit(body: Iterable[ast.stmt], parent: str | None) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                found.append(
                    _SymbolStats(
                        node.name,
                        "class",
                        parent,
                        node.lineno,
                        True,
                        lines_changed=_span(node),
                        via="ast",
                        order=len(found),
                    )
                )
                visit(node.body, node.name)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                kind = "method" if parent else "function"
                found.append(
                    _SymbolStats(
                        node.name,
                        kind,
                        parent,
                        node.lineno,
                        True,
                        lines_changed=_span(node),
                        via="ast",
                        order=len(found),
                    )
                )

    visit(tree.body, None)
    return found


def _span(node: ast.stmt) -> int:
    return (node.end_lineno or node.lineno) - node.lineno + 1


def deleted_definitions(parsed: ParsedPatch, language: str | None) -> frozenset[str]:
    """Names whose ``def``/``class`` line the patch removes and adds nowhere."""

    def names(lines: Iterable[DiffLine]) -> set[str]:
        return {
            found.name
            for line in lines
            if ("def " in line.text or "class " in line.text or language != "python")
            and (found := definition_in(line.text, language)) is not None
        }

    removed = names(parsed.removed())
    if not removed:  # most patches remove no definition: their added side is not read
        return frozenset()
    return frozenset(removed - names(parsed.added()))


def _moved_under_new_class(
    stats: dict[tuple[str, str | None], _SymbolStats], gone: frozenset[str]
) -> list[_SymbolStats]:
    """The symbols, a method whose old lines were in a class the patch deletes and whose new
    ones are in the class that took its place (its ``def`` line kept) counted once, under the
    class that holds it now."""
    now: dict[str, list[_SymbolStats]] = {}
    for (name, parent), item in stats.items():
        if parent is not None and parent not in gone and not item.added_def:
            now.setdefault(name, []).append(item)
    out = []
    for (name, parent), item in stats.items():
        heirs = now.get(name, []) if parent in gone and not item.removed_def else []
        heir = heirs[0] if len(heirs) == 1 else None  # of two classes, which one is unknown
        if heir is None:
            out.append(item)
            continue
        heir.lines_changed += item.lines_changed
        heir.line = heir.line or item.line
    return out


_SIGNATURE_START = re.compile(r"^(?P<indent>\s*)(?:async\s+)?def\s+(?P<name>\w+)\s*\(")
MAX_SIGNATURE_LINES = 30


def _signature_text(lines: list[str], start: int) -> str | None:
    """The ``def`` that opens on ``lines[start]``, joined on one line up to its colon (None: it
    does not end within the lines)."""
    depth, parts = 0, []
    for text in lines[start : start + MAX_SIGNATURE_LINES]:
        text = code_part(text)  # a comment would swallow the rest of the joined signature
        parts.append(text.strip())
        depth += bracket_depth(text)
        if depth <= 0 and text.rstrip().endswith(":"):
            return " ".join(parts)
    return None


def _parameters(signature: str) -> tuple[str, ...] | None:
    """The parameter names of a joined ``def`` line (None: it does not parse)."""
    try:
        node = ast.parse(signature + " pass").body[0]
    except SyntaxError:
        return None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    a = node.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [f"*{a.vararg.arg}"] if a.vararg else []
    names += [f"**{a.kwarg.arg}"] if a.kwarg else []
    return tuple(n for n in names if n not in ("self", "cls"))


def _def_lines(lines: list[str]) -> list[tuple[int, str]]:
    """Where each ``def`` of one side of a hunk opens, with its name."""
    found = []
    for index, text in enumerate(lines):
        match = _SIGNATURE_START.match(text) if "def " in text else None
        if match:
            found.append((index, match["name"]))
    return found


def _signatures(
    lines: list[str], defs: list[tuple[int, str]], names: set[str]
) -> dict[str, str | None]:
    """The signatures of ``names`` on one side of a hunk (None: defined twice there, or
    unfinished)."""
    found: dict[str, str | None] = {}
    for index, name in defs:
        if name in names:
            found[name] = None if name in found else _signature_text(lines, index)
    return found


def _touches_a_signature(lines: tuple[DiffLine, ...]) -> bool:
    """Whether a changed line of the hunk is part of a ``def``'s signature."""
    for index, line in enumerate(lines):
        if "def " not in line.text or not _SIGNATURE_START.match(line.text):
            continue
        depth = 0
        for part in lines[index : index + MAX_SIGNATURE_LINES]:
            if part.kind != CONTEXT:
                return True
            text = code_part(part.text)
            depth += bracket_depth(text)
            if depth <= 0 and text.rstrip().endswith(":"):
                break
    return False


def _only_marked_unused(added: tuple[str, ...], removed: tuple[str, ...]) -> bool:
    """``app`` → ``_app``: one parameter marked unused, the same parameter."""
    return len(added) == len(removed) == 1 and added[0].lstrip("_") == removed[0].lstrip("_")


def signature_changes(parsed: ParsedPatch) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Python functions whose parameters a hunk changes, by name: (added, removed). Only a
    signature the hunk shows whole on both sides, of a name defined once in the file's hunks."""
    changes: dict[str, tuple[tuple[str, ...], tuple[str, ...]] | None] = {}
    for hunk in parsed.hunks:
        if not _touches_a_signature(hunk.lines):
            continue  # most hunks show a def only as context: nothing is parsed
        old = [line.text for line in hunk.lines if line.kind != ADDED]
        new = [line.text for line in hunk.lines if line.kind != REMOVED]
        old_defs, new_defs = _def_lines(old), _def_lines(new)
        both = {name for _, name in old_defs} & {name for _, name in new_defs}
        if not both:
            continue  # a new or a deleted function: no signature of it changed
        before, after = _signatures(old, old_defs, both), _signatures(new, new_defs, both)
        for name in both:
            old_text, new_text = before[name], after[name]
            if old_text is None or new_text is None or old_text == new_text:
                continue
            a, b = _parameters(old_text), _parameters(new_text)
            if a is None or b is None or a == b:
                continue  # a reformatted signature
            change = (tuple(x for x in b if x not in a), tuple(x for x in a if x not in b))
            if _only_marked_unused(*change):
                continue
            changes[name] = None if name in changes else change
    return {name: change for name, change in changes.items() if change and any(change)}


# bases whose class-level annotations are fields (records, settings, structs)
_RECORD_BASES = re.compile(r"\b(?:BaseModel|BaseSettings|NamedTuple|TypedDict|Struct|SQLModel)\b")


def _plain_classes(parsed: ParsedPatch) -> set[str]:
    """Classes whose header the patch shows on its new side with the line above it, neither a
    decorator (``@dataclass``) nor a record base: their bare annotations declare a type."""
    plain: set[str] = set()
    for hunk in parsed.hunks:
        new_side = [line.text for line in hunk.lines if line.kind != REMOVED]
        for above, text in itertools.pairwise(new_side):
            definition = definition_in(text, "python")
            if definition is None or definition.kind != "class":
                continue
            if above.lstrip().startswith("@") or _RECORD_BASES.search(text):
                continue
            plain.add(definition.name)
    return plain


_BARE_ANNOTATION = re.compile(r"^\s*[A-Za-z_]\w*\s*:[^=]*$")


def _without_declarations(collected: list[_SymbolStats], parsed: ParsedPatch) -> list[_SymbolStats]:
    """The symbols less the bare annotations (``use_full_cuda_graph: bool``) a plain class
    gains for an attribute the PR never assigns: a type told to the checker, not new state."""
    bare = [
        s
        for s in collected
        if s.kind == "field"
        and s.added_lines
        and not s.removed_lines
        and all(_BARE_ANNOTATION.match(text) for text in s.added_lines)
    ]
    if not bare:
        return collected
    plain = _plain_classes(parsed)
    assigned = "\n".join(line.text for line in parsed.added())
    declared = {
        id(s)
        for s in bare
        if s.parent in plain and not re.search(rf"\bself\.{re.escape(s.name)}\s*=[^=]", assigned)
    }
    return [s for s in collected if id(s) not in declared]


def extract_symbols(
    parsed: ParsedPatch, *, language: str | None, in_test: bool, status: str, first_id: int
) -> list[SymbolFact]:
    """Symbols a file's patch adds, changes or removes, most-changed first within the file."""
    if language in (None, "toml", "markdown", "json", "build"):
        return []
    collected: list[_SymbolStats] | None = None
    if language == "yaml":
        collected = _yaml_steps(parsed)
    if language == "python" and status == "added":
        collected = _python_ast_symbols(parsed)
    if collected is None:
        stats: dict[tuple[str, str | None], _SymbolStats] = {}
        gone = deleted_definitions(parsed, language)
        for hunk in parsed.hunks:
            _walk_hunk(hunk, language, stats, gone)
        collected = [s for s in _moved_under_new_class(stats, gone) if not _relaid(s)]
        if language == "python":
            collected = _without_declarations(collected, parsed)
    signatures = signature_changes(parsed) if language == "python" else {}
    defined = Counter(item.name for item in collected)
    facts = []
    for offset, item in enumerate(collected):
        if item.added_def and not item.removed_def:
            change = "added"
        elif item.removed_def and not item.added_def:
            change = "removed"
        else:
            change = "modified"
        signature = signatures.get(item.name) if defined[item.name] == 1 else None
        # given only when there: a field passed is a field validated, for every symbol
        parameters = (
            {"parameters_added": signature[0], "parameters_removed": signature[1]}
            if signature and change == "modified"
            else {}
        )
        facts.append(
            SymbolFact(
                id=f"s{first_id + offset}",
                provenance=Provenance(kind="file", ref=parsed.path, line=item.line),
                name=item.name,
                kind=item.kind,
                path=parsed.path,
                line=item.line,
                change=change,
                language=language,
                via=item.via,
                in_test=in_test,
                lines_changed=item.lines_changed,
                parent=item.parent,
                **parameters,
            )
        )
    return facts


# -- tests --------------------------------------------------------------------------------

_PY_TEST = re.compile(r"^\s*(?:async\s+)?def\s+(?P<name>test_?\w*)\s*\(")
_RUST_TEST_ATTR = re.compile(r"^\s*#\[(?:tokio::)?test\b")
_SHELL_TEST = re.compile(r"^\s*(?:function\s+)?(?P<name>test_\w+)\s*\(\)")
_GO_TEST = re.compile(r"^func\s+(?P<name>Test\w+)\s*\(")
_JS_TEST = re.compile(r"^\s*(?:it|test)\(\s*['\"](?P<name>[^'\"]+)['\"]")
PARAMETRIZE = re.compile(r"^\s*@pytest\.mark\.parametrize")


def extract_tests(
    parsed: ParsedPatch, *, language: str | None, is_test_file: bool, first_id: int
) -> list[TestFact]:
    """Test functions whose definition line the PR adds."""
    found: list[TestFact] = []
    if language not in _TEST_LANGUAGES or (not is_test_file and language != "rust"):
        return found  # only Rust keeps tests inside source files
    removed_names = {
        name
        for hunk in parsed.hunks
        for line in hunk.lines
        if line.kind == REMOVED and (name := _test_name(line.text, [], language, is_test_file))
    }
    for hunk in parsed.hunks:
        previous: list[str] = []
        for line in hunk.lines:
            if line.kind == REMOVED:
                continue
            name = _test_name(line.text, previous, language, is_test_file)
            if name and line.kind == ADDED:
                parametrized = any(PARAMETRIZE.match(p) for p in previous[-4:])
                found.append(
                    TestFact(
                        id=f"t{first_id + len(found)}",
                        provenance=Provenance(kind="file", ref=parsed.path, line=line.new_no),
                        name=name,
                        path=parsed.path,
                        line=line.new_no,
                        parametrized=parametrized,
                        existed=name in removed_names,
                    )
                )
            previous.append(line.text)
    return found


_TEST_LANGUAGES = frozenset({"python", "rust", "shell", "go", "js"})


def _attributes_above(previous: list[str]) -> list[str]:
    """The ``#[...]`` attribute lines directly above a definition."""
    found = []
    for text in reversed(previous):
        if not text.strip().startswith("#["):
            break
        found.append(text)
    return found


def _test_name(
    text: str, previous: list[str], language: str | None, is_test_file: bool
) -> str | None:
    if language == "python" and is_test_file:
        m = _PY_TEST.match(text)
        return m["name"] if m and m["name"].startswith("test") else None
    if language == "rust":
        m = _RUST_DEF.match(text)
        if (
            m
            and m["kw"] == "fn"
            and any(_RUST_TEST_ATTR.match(a) for a in _attributes_above(previous))
        ):
            return m["name"]
        return None
    if language == "shell" and is_test_file:
        m = _SHELL_TEST.match(text)
        return m["name"] if m else None
    if language == "go" and is_test_file:
        m = _GO_TEST.match(text)
        return m["name"] if m else None
    if language == "js" and is_test_file:
        m = _JS_TEST.match(text)
        return m["name"] if m else None
    return None


# -- test techniques ----------------------------------------------------------------------

# (technique id, pattern over an added test line, how to label what matched)
TECHNIQUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("parametrize", re.compile(r"@pytest\.mark\.parametrize\b")),
    ("monkeypatch", re.compile(r"\bmonkeypatch\.(?:setattr|setenv|delattr|setitem)\b")),
    ("threading_event", re.compile(r"\bthreading\.Event\b|\basyncio\.Event\b")),
    ("bitwise_equal", re.compile(r"\btorch\.equal\b")),
    ("assert_close", re.compile(r"\btorch\.testing\.assert_close\b")),
    ("fake_object", re.compile(r"\bclass\s+(?:_?Fake|_?Dummy|_?Stub)\w*")),
    ("mock", re.compile(r"\b(?:MagicMock|AsyncMock|mock\.patch|patch\.object|Mock)\b\(?")),
    ("shell_stub", re.compile(r"(?:cat\s*>\s*\"?\$?\{?\w*[^\s\"]*/\w+|chmod\s+\+x\s)")),
    ("timeout_wait", re.compile(r"\.(?:wait|join|result)\(\s*timeout\s*=")),
    ("pytest_raises", re.compile(r"\bpytest\.raises\(")),
    ("hypothesis", re.compile(r"@given\(|\bfrom hypothesis\b")),
    ("subprocess", re.compile(r"\bsubprocess\.(?:run|check_output|Popen)\(")),
)

_PATTERNS = dict(TECHNIQUES)
_LABEL = re.compile(r"[A-Za-z_][\w.]*")


def _label(technique: str, text: str, match: re.Match[str]) -> str:
    if technique == "fake_object":
        return match.group(0).split()[-1]
    if technique == "shell_stub":
        return "shell stub"
    if technique == "timeout_wait":  # the method name: "wait", "join" or "result"
        return match.group(0).lstrip(".").split("(", 1)[0]
    token = _LABEL.search(match.group(0).lstrip("@.("))
    return token.group(0) if token else match.group(0)


# Literal words one of which every technique pattern needs: a fast pre-check per line.
_ANY_TECHNIQUE = re.compile(
    "|".join(
        re.escape(word)
        for word in (
            "parametrize",
            "monkeypatch",
            "Event",
            "torch.",
            "Fake",
            "Dummy",
            "Stub",
            "Mock",
            "patch",
            "cat",
            "chmod",
            "timeout",
            "pytest.raises",
            "@given",
            "hypothesis",
            "subprocess.",
        )
    )
)


_MOCK_ASSERT = re.compile(
    r"\.assert_(?:called|awaited|any_call|has_calls|not_called)\w*\(|"
    r"\b(?:call_args(?:_list)?|call_count|await_count|mock_calls)\b"
)
_FAKE_CLASS = re.compile(r"^class\s+(?P<name>_?(?:Fake|Dummy|Stub)\w*)")
_RECORDS = re.compile(r"\bself\.(?P<attr>\w+)\.append\(|\bself\.(?P<attr2>\w+)\s*\+=")
_SLEEP = re.compile(r"\b(?:time|asyncio)\.sleep\(")
EVENT_USE = re.compile(r"\.(?:set|wait)\(")  # an event a test sets or waits on


def bracket_depth(text: str, openers: str = "([{", closers: str = ")]}") -> int:
    """How many brackets a line leaves open (strings not parsed: an estimate that only decides
    whether the next line continues this one)."""
    return sum(map(text.count, openers)) - sum(map(text.count, closers))


def _call_text(lines: list[str], start: int) -> str:
    """The text of a call that opens on ``lines[start]``, up to its closing parenthesis."""
    depth, parts = 0, []
    for text in lines[start : start + 60]:
        parts.append(text)
        depth += bracket_depth(text, "([", ")]")
        if depth <= 0:
            break
    return "\n".join(parts)


def _parametrize_cases(text: str) -> int | None:
    """How many cases one ``@pytest.mark.parametrize(...)`` decorator gives; None: unknown."""
    try:
        node = ast.parse(text.strip().lstrip("@"), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.Call) or len(node.args) < 2:
        return None
    values = node.args[1]
    if isinstance(values, ast.List | ast.Tuple | ast.Set):
        return len(values.elts)
    return None


def parametrize_cases(lines: list[str], added: list[bool] | None = None) -> int | None:
    """How many cases each parametrised test gets from its stacked ``parametrize`` decorators
    (their product), when every such test gets the same count; None when a count cannot be
    read from the text (values from a name, a decorator the PR left as it was) or the tests
    differ, for "N 种组合" said of the file's tests is true of each of them.

    ``added`` flags the lines the PR added (all, when not given); a stack none of whose lines
    was added is a test the PR did not touch and counts for nothing."""
    flags = added if added is not None else [True] * len(lines)
    counts: set[int | None] = set()
    product: int | None = 1
    stacked = touched = False
    for index, text in enumerate(lines):
        stripped = text.lstrip()
        if PARAMETRIZE.match(text):
            cases = _parametrize_cases(_call_text(lines, index))
            kept = flags[index] and cases is not None and product is not None
            product = cases * product if kept and product is not None and cases else None
            stacked, touched = True, touched or flags[index]
        elif stripped.startswith(("def ", "async def ")):
            if stacked and touched:
                counts.add(product)
            product, stacked, touched = 1, False, False
    if stacked and touched:
        counts.add(product)
    return counts.pop() if len(counts) == 1 else None


def _functions_by_added_line(
    hunk: Hunk, language: str | None, top_level: set[str]
) -> dict[int, str | None]:
    """The innermost function each added line of a Python hunk sits in, in the new file (a
    decorator line: the function it decorates); None at module or class level. Functions
    defined at the top of the module are added to ``top_level``. A line inside open brackets
    (the ``):`` of a signature that spans lines) or a comment closes no scope."""
    scope = _Scope(indented=True)
    opened = hunk_definition(hunk, language)
    if opened:
        scope.stack.append(opened)
    found: dict[int, str | None] = {}
    decorators: list[tuple[int, int]] = []  # (line index, indent) waiting for their def
    depth = 0
    for index, line in enumerate(hunk.lines):
        if line.kind == REMOVED:
            continue
        body = line.text.lstrip()
        indent = len(line.text) - len(body)
        comment = body.startswith("#")
        continues = depth > 0 or comment
        if not comment:
            depth = max(0, depth + bracket_depth(body))
        definition = definition_in(line.text, language) if body and not continues else None
        if definition is not None:
            scope.enter(definition)
            name = definition.name if definition.kind in ("function", "method") else None
            if name and indent == 0:
                top_level.add(name)
            for waiting, at in decorators:
                if at == indent:
                    found[waiting] = name
            decorators = []
        elif body.startswith("@") and not continues:
            scope.current(indent)
            decorators.append((index, indent))
            continue
        else:
            if body and not continues:
                scope.current(indent)
            name = next(
                (d.name for d in reversed(scope.stack) if d.kind in ("function", "method")),
                None,
            )
        if line.kind == ADDED:
            found[index] = name
    return found


@dataclass(frozen=True)
class _ScopedLines:
    added: list[tuple[DiffLine, str | None]]  # each added line and the function it sits in
    top_level: frozenset[str]  # module-level functions (helpers, fixtures, tests)


def _added_with_functions(parsed: ParsedPatch, language: str | None) -> _ScopedLines:
    """Every added line with the function it sits in (None at module or class level)."""
    out: list[tuple[DiffLine, str | None]] = []
    top_level: set[str] = set()
    for hunk in parsed.hunks:
        functions = _functions_by_added_line(hunk, language, top_level)
        out += [
            (line, functions.get(index))
            for index, line in enumerate(hunk.lines)
            if line.kind == ADDED
        ]
    return _ScopedLines(out, frozenset(top_level))


def _users(
    scoped: _ScopedLines, technique: str, pattern: re.Pattern[str], label: str
) -> tuple[str, ...]:
    """The functions whose added lines show a technique (a fake class: those naming it), and
    those that name a module-level helper or fixture that shows it."""
    wanted = re.compile(rf"\b{re.escape(label)}\b") if technique == "fake_object" else pattern
    hits = {f for line, f in scoped.added if f and wanted.search(line.text)}
    helpers = [f for f in hits if f in scoped.top_level]
    if helpers:
        named = re.compile(r"\b(?:" + "|".join(map(re.escape, helpers)) + r")\b")
        hits |= {f for line, f in scoped.added if f and named.search(line.text)}
    return tuple(sorted(hits))


def worded_lines(words: re.Pattern[str], lines: Sequence[DiffLine], joined: str) -> set[int]:
    """The indices of the lines (``joined`` by line breaks) in which ``words``, an alternation
    of literal words, finds one: no word holds a line break, so one search of the joined text
    finds each line's first word, sparing a search call per line."""
    starts = list(itertools.accumulate((len(line.text) + 1 for line in lines), initial=0))
    return {bisect.bisect_right(starts, m.start()) - 1 for m in words.finditer(joined)}


def code_part(text: str) -> str:
    """A line without its comment (``#`` or ``//`` after a blank or at the start, outside
    quotes): a technique named in a comment is not used."""
    if "#" not in text and "/" not in text:
        return text  # most lines: no character to look at one by one
    for index, char in enumerate(text):
        if char not in "#/" or (index and not text[index - 1].isspace()):
            continue
        if char == "/" and not text.startswith("//", index):
            continue
        before = text[:index]
        if before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
            return before
    return text


def extract_techniques(
    parsed: ParsedPatch, *, first_id: int, language: str | None = None
) -> list[TechniqueFact]:
    """The first use of each notable technique in a test file's added lines, with what the file
    shows about it (cases of a parametrisation, asserts on recorded calls, sleeps) and, for
    Python, the functions that use it."""
    seen: set[str] = set()
    found: list[TechniqueFact] = []
    added = [line.text for line in parsed.added()]
    joined = "\n".join(added)
    if not _ANY_TECHNIQUE.search(joined):
        return found  # one search over the file rules most test files out
    worded = worded_lines(_ANY_TECHNIQUE, parsed.added(), joined)
    for index, line in enumerate(parsed.added()):
        if index not in worded:
            continue  # no technique's word: no search per technique
        code = code_part(line.text)
        for technique, pattern in TECHNIQUES:
            if technique in seen:
                continue
            match = pattern.search(code)
            if match is None:
                continue
            seen.add(technique)
            found.append(
                TechniqueFact(
                    id=f"q{first_id + len(found)}",
                    provenance=Provenance(kind="file", ref=parsed.path, line=line.new_no),
                    technique=technique,
                    label=_label(technique, code, match),
                    path=parsed.path,
                    line=line.new_no,
                )
            )
    if not found:
        return found
    sleeps = any(_SLEEP.search(text) for text in added)
    scoped = _added_with_functions(parsed, language) if language == "python" else None
    out = []
    for fact in found:
        if fact.technique == "threading_event" and not any(EVENT_USE.search(t) for t in added):
            continue  # an event only read with is_set() orders nothing
        update: dict[str, object] = {"sleeps": sleeps}
        if fact.technique == "parametrize":
            new_side = parsed.side(ADDED)
            update["cases"] = parametrize_cases(
                [x.text for x in new_side], [x.kind == ADDED for x in new_side]
            )
        elif fact.technique == "mock":
            update["asserts_calls"] = any(_MOCK_ASSERT.search(text) for text in added)
        elif fact.technique == "fake_object":
            asserted = asserted_fake(added)
            if asserted is not None:
                update.update(label=asserted, asserts_calls=True)
        if scoped is not None:
            label = str(update.get("label", fact.label))
            update["used_in"] = _users(scoped, fact.technique, _PATTERNS[fact.technique], label)
            if fact.technique == "mock":
                asserting = {f for line, f in scoped.added if f and _MOCK_ASSERT.search(line.text)}
                update["asserted_in"] = tuple(sorted(asserting))
        out.append(fact.model_copy(update=update))
    return out


def asserted_fake(lines: list[str]) -> str | None:
    """The fake class of a test file that records what it is called with (``self.calls.append``)
    and whose record an ``assert`` reads; None when no fake is asserted on."""
    fakes: dict[str, set[str]] = {}
    current: str | None = None
    for text in lines:
        match = _FAKE_CLASS.match(text)
        if match:
            current = match["name"]
            fakes[current] = set()
            continue
        if text[:1].strip():  # the next top-level statement ends the class
            current = None
        if current is not None:
            for record in _RECORDS.finditer(text):
                fakes[current].add(record["attr"] or record["attr2"])
    asserts = [t for t in lines if t.lstrip().startswith("assert")]
    for name, attributes in fakes.items():
        if any(re.search(rf"\.{re.escape(a)}\b", t) for a in attributes for t in asserts):
            return name
    return None


# ``module.attr = f`` / ``Class.method = f``: a module-level line putting a function in
# another's place (``self.x = f`` and ``cls.x = f`` set state, they replace nothing)
_REPLACES = re.compile(
    r"^\s*(?P<target>(?!self\.|cls\.)(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*)\s*=\s*(?P<name>[A-Za-z_]\w*)\s*$"
)


def replaced_targets(patch: ParsedPatch) -> dict[str, str]:
    """The attributes of other modules or classes a Python patch's added lines set to a
    function (a monkey patch), by the function's name: its last two parts
    (``Eagle3LlamaForCausalLM.compute_logits``, ``kv_cache_utils.resolve_kv_cache_block_sizes``)."""
    out: dict[str, str] = {}
    for line in patch.added():
        if "=" not in line.text or "." not in line.text:
            continue
        match = _REPLACES.match(line.text.split("#", 1)[0])
        if match:
            target = ".".join(match["target"].rsplit(".", 2)[-2:])
            out.setdefault(match["name"], target)
    return out

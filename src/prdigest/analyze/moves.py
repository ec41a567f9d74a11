"""Renames and moves: a file, class, function or test that the PR takes away in one place and
puts back in another is not a deletion plus an addition.

Three kinds of evidence, best first:

* git's rename info: a file with ``status == "renamed"`` and its ``previous_path``;
* the same name defined on the removed side of one file and the added side of another (a
  class moved between modules, a test moved to a new file), with bodies alike enough;
* a removed and an added definition with different names whose bodies are alike (a test or
  function renamed in place or on its way to another file);
* a ``def``/``class`` line edited in its name alone where it stands (``class AscendDsparkProposer
  (Base):`` → ``class AscendDSparkProposer(Base):``): the same definition renamed, however much
  its body was rewritten.

Bodies are compared as multisets of their lines, stripped of indentation, blank lines and
comments, without the definition line itself (which differs in a rename): the Dice coefficient
of the two multisets. A removed file and an added file with alike text are a move too. Only
definition blocks of indentation-scoped languages (Python) are compared by body; other
languages move by name only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import PurePosixPath

from prdigest.analyze.code import (
    DOC_QUOTES,
    Definition,
    bracket_depth,
    definition_in,
    header_definition,
    hunk_definition,
)
from prdigest.analyze.patches import ADDED, CONTEXT, REMOVED, DiffLine, Hunk, ParsedPatch
from prdigest.core.models import FileFact

MOVE_SIMILARITY = 0.5  # same name elsewhere: the body may have been edited on the way
RENAME_SIMILARITY = 0.75  # another name: the body must be mostly the same
# a test replaced by another of its file mostly the same: rewritten in place, its case kept
TEST_REWRITE_SIMILARITY = 0.6
FILE_SIMILARITY = 0.6
REWORKED_BELOW = 0.9  # a moved or renamed body less alike than this was rewritten too
NAME_ALIKE = 0.8  # a definition renamed where it stands keeps most of its name
MIN_RENAME_LINES = 2  # a one-line body says nothing about where it came from
# a definition of a class replaced by one of almost its name, whose old name the new code no
# longer says: renamed and rewritten, when some of its lines stayed
REWRITE_NAME_ALIKE = 0.85
REWRITE_SIMILARITY = 0.2
MOVED_REWRITE_SIMILARITY = 0.4  # the same, moved to another file: more of it must have stayed
MAX_PAIRS = 40_000  # removed × added blocks compared by body; past it only names match

Key = tuple[str, str | None, str]  # (path, parent, name)


@dataclass(frozen=True, slots=True)
class Block:
    """One definition on one side of the diff, with its body lines."""

    path: str
    name: str
    kind: str
    parent: str | None
    side: str
    body: tuple[str, ...]

    @property
    def key(self) -> Key:
        return (self.path, self.parent, self.name)


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an added definition (or file) came from."""

    path: str
    name: str
    alike: float = 1.0  # how alike the two bodies are (see :func:`similarity`)


@dataclass
class Moves:
    """What the PR moved or renamed, keyed by where it is now and where it was."""

    added: dict[Key, Origin] = field(default_factory=dict)  # new place → old place
    removed: dict[Key, Origin] = field(default_factory=dict)  # old place → new place
    files: dict[str, str] = field(default_factory=dict)  # new path → old path (text alike)
    # new function → the function of its file most of whose taken-out lines it now holds
    # ("" when the hunks do not show which function they sat in)
    extracted: dict[Key, str] = field(default_factory=dict)

    def origin(
        self, path: str, parent: str | None, name: str, exact: bool = False
    ) -> Origin | None:
        return _lookup(self.added, path, parent, name, exact)

    def destination(
        self, path: str, parent: str | None, name: str, exact: bool = False
    ) -> Origin | None:
        return _lookup(self.removed, path, parent, name, exact)

    def replaced(self, path: str, name: str) -> bool:
        """Whether a removed definition ``name`` of ``path`` reappears elsewhere (any parent)."""
        return any(k[0] == path and k[2] == name for k in self.removed)


def _lookup(
    table: dict[Key, Origin], path: str, parent: str | None, name: str, exact: bool = False
) -> Origin | None:
    """The entry for a definition; by path and name alone when its class is told differently
    (a hunk header's class is a guess) and only one entry has that name there — unless
    ``exact``: two classes of the file define that name, and the class tells them apart."""
    found = table.get((path, parent, name))
    if found is not None or exact:
        return found
    same = [o for (p, _parent, n), o in table.items() if p == path and n == name]
    return same[0] if len(same) == 1 else None


def _normal(text: str) -> str | None:
    stripped = " ".join(text.split())
    if not stripped or stripped.startswith("#"):
        return None
    return stripped


_PARAMETER = re.compile(r"^\s*\*{0,2}([A-Za-z_]\w*)")


def _parameters(signature: str) -> list[str]:
    """The parameter names and the return annotation of a ``def`` signature, as body items
    (``(param) x``, ``(returns) int``); a class's bases are no parameters."""
    if "def " not in signature or "(" not in signature:
        return []
    rest = signature.split("(", 1)[1]
    inner, _, returns = rest.rpartition(")") if ")" in rest else (rest, "", "")  # cut by a hunk
    names, depth, start = [], 0, 0
    if "->" in returns:
        names.append("(returns) " + " ".join(returns.split("->", 1)[1].rstrip(": ").split()))
    for at, char in enumerate(inner + ","):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth <= 0:
            match = _PARAMETER.match(inner[start:at])
            if match:
                names.append(f"(param) {match.group(1)}")
            start = at + 1
    return names


def definition_blocks(patch: ParsedPatch, language: str | None, side: str) -> list[Block]:
    """Definitions whose ``def``/``class`` line is on ``side``, each with the body lines of that
    side and of the context (a renamed definition keeps its body as context), docstrings left
    out (a function moved and renamed often loses or rewrites its docstring on the way)."""
    if language != "python":
        return []
    blocks: list[Block] = []
    for hunk in patch.hunks:
        if not any(x.kind == side and ("def " in x.text or "class " in x.text) for x in hunk.lines):
            continue  # no definition line on this side: no block (most hunks)
        lines = [x for x in hunk.lines if x.kind in (side, CONTEXT)]
        classes: list[tuple[int, str]] = []  # (indent, name) of open classes on this side
        opened = header_definition(hunk.header, language)
        if opened is not None and opened.kind == "class":  # git names the class the hunk is in
            classes.append((opened.indent, opened.name))
        for index, line in enumerate(lines):
            definition = definition_in(line.text, language)
            if definition is None:
                continue
            while classes and classes[-1][0] >= definition.indent:
                classes.pop()
            parent = classes[-1][1] if classes else None
            if definition.kind == "class":
                classes.append((definition.indent, definition.name))
            if line.kind != side:
                continue
            body: list[str] = []
            # a signature wrapped over lines closes at the def's indentation (`) -> T:`); its
            # parameters are compared by name, however wrapped or annotated
            signature = [line.text]
            depth = bracket_depth(line.text)
            quote = ""  # the docstring quote open, if any
            for after in lines[index + 1 :]:
                text = after.text
                if depth > 0:
                    depth += bracket_depth(text)
                    signature.append(text)
                    continue
                if text.strip() and len(text) - len(text.lstrip()) <= definition.indent:
                    break
                normal = _normal(text)
                if normal is None:
                    continue
                if quote:  # inside a docstring: its words are no code to compare
                    quote = "" if quote in normal else quote
                    continue
                opener = normal[:3] if normal[:3] in DOC_QUOTES else ""
                if opener:
                    quote = opener if normal.count(opener) == 1 else ""
                    continue
                body.append(normal)
            body += _parameters(" ".join(signature))
            kind = "method" if definition.kind == "function" and parent else definition.kind
            blocks.append(Block(patch.path, definition.name, kind, parent, side, tuple(body)))
    return blocks


def similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """Dice coefficient of two multisets of lines (1.0: the same lines, in any order)."""
    return _dice(_Lines(a), _Lines(b))


class _Lines:
    """A multiset of lines counted once, for comparing one body with many."""

    __slots__ = ("counts", "size")

    def __init__(self, lines: Sequence[str]) -> None:
        self.counts = Counter(lines)
        self.size = len(lines)


def _dice(a: _Lines, b: _Lines) -> float:
    if not a.size and not b.size:
        return 1.0
    small, big = (a.counts, b.counts) if len(a.counts) <= len(b.counts) else (b.counts, a.counts)
    common = sum(min(count, big.get(line, 0)) for line, count in small.items())
    return 2 * common / (a.size + b.size)


def _bound(a: _Lines, b: _Lines) -> float:
    """The highest Dice coefficient two multisets of these sizes can reach."""
    total = a.size + b.size
    return 1.0 if not total else 2 * min(a.size, b.size) / total


def _same_kind(a: Block, b: Block) -> bool:
    """Both classes or both functions, and both tests or neither (a helper that became a
    test, or the other way, is not one definition)."""
    return (a.kind == "class") == (b.kind == "class") and (
        a.name.startswith("test") == b.name.startswith("test")
    )


def _rename_bar(old: Block, new: Block) -> float:
    """How alike two bodies must be for one to be the other renamed: less for two tests of
    one file (a test rewritten where it stood), more for anything else."""
    tests = old.name.startswith("test") and new.name.startswith("test")
    return TEST_REWRITE_SIMILARITY if tests and old.path == new.path else RENAME_SIMILARITY


def _match_blocks(removed: list[Block], added: list[Block], moves: Moves) -> None:
    if not removed or not added:
        return  # nothing taken away, or nothing put back: no move
    counted = {id(b): _Lines(b.body) for b in (*removed, *added)}

    def alike(a: Block, b: Block) -> float:
        return _dice(counted[id(a)], counted[id(b)])

    used: set[Key] = set()
    by_name: dict[str, list[Block]] = {}
    for block in added:
        by_name.setdefault(block.name, []).append(block)
    leftovers: list[Block] = []
    for old in removed:  # same name in another file or class: a move
        candidates = [
            b
            for b in by_name.get(old.name, ())
            if b.key not in used
            and (b.path, b.parent) != (old.path, old.parent)
            and _same_kind(old, b)
        ]
        best = max(candidates, key=lambda b: alike(old, b), default=None)
        if best is not None and (
            alike(old, best) >= MOVE_SIMILARITY or max(len(old.body), len(best.body)) <= 3
        ):
            _record(old, best, moves, used, alike(old, best))
        else:
            leftovers.append(old)
    fresh = [b for b in added if b.key not in used]
    if len(leftovers) * len(fresh) > MAX_PAIRS:
        return
    removed_names = {b.name for b in removed}
    added_names = {b.name for b in added}
    # another name, the same body: a rename; the most alike pairs first (in one class, then in
    # one file, before one across files), so a weak match cannot take a new name from a strong one
    scored: list[tuple[float, tuple[bool, bool], int, Block, Block]] = []
    for index, old in enumerate(leftovers):
        if len(old.body) < MIN_RENAME_LINES or old.name in added_names:
            continue
        # a pair whose sizes alone keep it below the bar is not compared: it cannot be chosen
        for b in fresh:
            if (
                _same_kind(old, b)
                and b.name not in removed_names
                and len(b.body) >= MIN_RENAME_LINES
                and _bound(counted[id(old)], counted[id(b)]) >= (bar := _rename_bar(old, b))
            ):
                score = alike(old, b)
                if score >= bar:
                    near = (b.path == old.path, b.path == old.path and b.parent == old.parent)
                    scored.append((score, near, -index, old, b))
    renamed: set[Key] = set()
    for score, _near, _order, old, new in sorted(scored, key=lambda x: x[:3], reverse=True):
        if new.key not in used and old.key not in renamed:
            renamed.add(old.key)
            _record(old, new, moves, used, score)


def renamed_in_place(patch: ParsedPatch, language: str | None) -> list[tuple[str, str]]:
    """(old name, new name) of the definitions a run of removed lines and the run of added
    lines after it rename where they stand: the runs replace as many definitions, and the k-th
    definition line of one is the k-th of the other with only its name changed, to a name
    alike (two tests of one signature replaced by two others are no rename). Python and C/C++
    (a kernel class renamed with its file: ``class CompressorBlockCubePerf {`` →
    ``class CompressorBlockCube {``)."""
    if language not in ("python", "cpp"):
        return []
    found: list[tuple[str, str]] = []
    for hunk in patch.hunks:
        if not any(
            x.kind == REMOVED and ("def " in x.text or "class " in x.text) for x in hunk.lines
        ):
            continue  # no definition line removed here: none renamed (most hunks)
        runs: dict[str, list[str]] = {REMOVED: [], ADDED: []}
        for line in (*hunk.lines, None):
            kind = line.kind if line is not None else CONTEXT
            if (kind == REMOVED and runs[ADDED]) or kind == CONTEXT:
                found += _renamed_in_runs(runs[REMOVED], runs[ADDED], language)
                runs = {REMOVED: [], ADDED: []}
            if line is not None and kind in runs:
                runs[kind].append(line.text)
    return found


def _renamed_in_runs(removed: list[str], added: list[str], language: str) -> list[tuple[str, str]]:
    olds = [(t, d) for t in removed if (d := definition_in(t, language)) is not None]
    news = [(t, d) for t in added if (d := definition_in(t, language)) is not None]
    if olds and news and len(olds) != len(news):
        return _header_renamed(removed, added, language)
    if not olds or len(olds) != len(news):
        return []
    return [
        (old.name, new.name)
        for (old_text, old), (new_text, new) in zip(olds, news, strict=True)
        if old.name != new.name
        and old.kind == new.kind
        and old_text.replace(old.name, new.name, 1) == new_text
        and SequenceMatcher(None, old.name.lower(), new.name.lower()).ratio() >= NAME_ALIKE
    ]


def _header_renamed(removed: list[str], added: list[str], language: str) -> list[tuple[str, str]]:
    """A class whose header line alone is rewritten, its body kept as context, after new code
    put in front of it (``class EagleAclGraphManager(EagleCudaGraphManager):`` →
    ``class DecodeEagleAclGraphManager(DecodeEagleCudaGraphManager):`` below a new Prefill
    class): the last line of each run is a class header, the names alike."""
    old = definition_in(removed[-1], language)
    new = definition_in(added[-1], language)
    if old is None or new is None or old.kind != "class" or new.kind != "class":
        return []
    if old.name == new.name or old.indent != new.indent:
        return []
    alike = SequenceMatcher(None, old.name.lower(), new.name.lower()).ratio()
    return [(old.name, new.name)] if alike >= NAME_ALIKE else []


def _match_in_place(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    removed: list[Block],
    added: list[Block],
    moves: Moves,
) -> None:
    """Definitions renamed where they stand that no body comparison paired."""
    paths = {b.path for b in removed}  # a file that removes no definition renames none
    for fact, patch in parsed:
        if fact.path not in paths:
            continue
        for old_name, new_name in renamed_in_place(patch, fact.language):
            old = [b for b in removed if (b.path, b.name) == (fact.path, old_name)]
            new = [b for b in added if (b.path, b.name) == (fact.path, new_name)]
            if len(old) != 1 or len(new) != 1:
                continue  # two definitions of one name: which is which is not known
            if old[0].key in moves.removed or new[0].key in moves.added:
                continue
            _record(old[0], new[0], moves, set(), similarity(old[0].body, new[0].body))


def _match_rewrites(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    removed: list[Block],
    added: list[Block],
    moves: Moves,
) -> None:
    """A definition renamed and rewritten (``_sfa_preprocess_with_prolog_v3`` →
    ``_sfa_preprocess_prolog_v3``, the kernels it called inlined): same class (or both top
    level), almost the same name, some lines kept (more when it changed files), the old name
    gone from the new lines and the new one absent from the old lines (of its file, or of the
    whole PR when it changed files). Bodies this different are no rename by
    :func:`_match_blocks`."""
    left_old = [
        b for b in removed if b.key not in moves.removed and len(b.body) >= MIN_RENAME_LINES
    ]
    left_new = [b for b in added if b.key not in moves.added and len(b.body) >= MIN_RENAME_LINES]
    if not left_old or not left_new:
        return
    patches = {f.path: p for f, p in parsed}
    used: set[Key] = set()
    for old in left_old:
        candidates = [
            b
            for b in left_new
            if b.parent == old.parent
            and b.key not in used
            and _same_kind(old, b)
            and not old.name.startswith("test")
            and SequenceMatcher(None, old.name, b.name).ratio() >= REWRITE_NAME_ALIKE
        ]
        scored = [(_dice(_Lines(old.body), _Lines(b.body)), b) for b in candidates]
        scored = [
            (x, b)
            for x, b in scored
            if x >= (REWRITE_SIMILARITY if b.path == old.path else MOVED_REWRITE_SIMILARITY)
        ]
        if not scored:
            continue
        alike, new = max(scored, key=lambda x: (x[1].path == old.path, x[0]))
        where = [patches[old.path]] if new.path == old.path else list(patches.values())
        if any(_said(old.name, p.added()) or _said(new.name, p.removed()) for p in where):
            continue  # the old name still called, or the new one there before: two definitions
        _record(old, new, moves, used, alike)


MIN_EXTRACTED_LINES = 4  # a shorter body recurs by chance
EXTRACTED_SHARE = 0.5  # of a new function's lines, taken out of the code of its file


def _match_extractions(
    parsed: Sequence[tuple[FileFact, ParsedPatch]], added: list[Block], moves: Moves
) -> None:
    """New functions whose lines the PR took out of a function it keeps (``_add_recomputed_
    outputs`` from ``update_from_output``): extracted, not new code."""
    changed = {f.path for f, p in parsed if _may_extract(f, p)}
    fresh = [
        b
        for b in added
        if b.path in changed
        and b.key not in moves.added
        and b.kind != "class"
        and not b.name.startswith("test")
    ]
    if not fresh:
        return
    paths = {b.path for b in fresh}
    taken = {f.path: _taken_out(p) for f, p in parsed if f.path in paths}
    carved = {f.path: _carved_out(p) for f, p in parsed if f.path in paths}
    gone = {k[2] for k in moves.removed} | {b.name for b in added}
    for block in fresh:
        lines = [
            n
            for n in (_normal(x) for x in block.body)
            if n and len(n) >= MIN_TAKEN_CHARS and not n.startswith(("(param)", "(returns)"))
        ]
        if len(lines) < MIN_EXTRACTED_LINES:
            continue
        kept = carved[block.path].get(block.name, [])  # lines that stood there before its def
        from_old = kept + [taken[block.path][x] for x in lines if x in taken[block.path]]
        if len(from_old) < EXTRACTED_SHARE * len(lines):
            continue
        owner, count = Counter(from_old).most_common(1)[0]
        named = count >= EXTRACTED_SHARE * len(lines) and owner not in gone | {"", block.name}
        moves.extracted[block.key] = owner if named else ""


MOVED_METHODS_SHARE = 0.6  # of a new class's methods, moved from one other class
MIN_MOVED_METHODS = 3


def _match_pulled_classes(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    removed: list[Block],
    added: list[Block],
    moves: Moves,
) -> None:
    """A new class whose methods the PR moved from one other class: that class renamed and
    reworked when it is gone for good under almost this name (``PCPManager`` →
    ``DCPManager``), else, when most of its methods came from it, extracted from it (a base
    class pulled out of a subclass it keeps, ``AscendAutoRegressiveSpeculator`` out of
    ``AscendEagleSpeculator``): not new code either way."""
    classes = [b for b in added if b.kind == "class" and b.key not in moves.added]
    if not classes:
        return
    parent_of = {(b.path, b.name): b.parent for b in removed}
    old_classes = {b.name: b for b in removed if b.kind == "class" and b.key not in moves.removed}
    for cls in classes:
        methods = [b for b in added if (b.path, b.parent) == (cls.path, cls.name)]
        origins = Counter(
            parent_of.get((origin.path, origin.name))
            for b in methods
            if (origin := moves.added.get(b.key)) is not None
        )
        top = origins.most_common(1)
        source, count = top[0] if top else (None, 0)
        if source is None or count < MIN_MOVED_METHODS:
            continue
        old = old_classes.get(source)
        renamed = (
            old is not None
            and SequenceMatcher(None, old.name, cls.name).ratio() >= REWRITE_NAME_ALIKE
            and not any(_said(old.name, p.added()) for _f, p in parsed)
        )
        if old is not None and renamed:
            _record(old, cls, moves, set(), _dice(_Lines(old.body), _Lines(cls.body)))
        elif count >= MOVED_METHODS_SHARE * len(methods):
            moves.extracted[cls.key] = source


def _taken_out(patch: ParsedPatch) -> dict[str, str]:
    """Each removed line of a Python patch (normalised) with the function it sat in, where the
    hunk shows that function's ``def`` above it, else "" (a header naming a class says too
    little)."""
    out: dict[str, str] = {}
    for hunk in patch.hunks:
        if not any(x.kind == REMOVED for x in hunk.lines):
            continue  # nothing taken out here
        old_side = _OldSide(hunk)
        for line in hunk.lines:
            if line.kind == ADDED or not line.text.strip():
                continue
            found = old_side.read(line)
            if found is None and line.kind == REMOVED:
                text = _normal(line.text)
                if text and len(text) >= MIN_TAKEN_CHARS:
                    out.setdefault(text, old_side.function)
    return out


class _OldSide:
    """The definitions a hunk's old side is inside as its lines are read (the header's when
    no ``def`` above shows): :attr:`function` is the innermost function's name, "" inside a
    class body or where the hunk names none."""

    def __init__(self, hunk: Hunk) -> None:
        opened = hunk_definition(hunk, "python")
        self._stack = [(opened.indent, opened.name, opened.kind)] if opened else []

    def read(self, line: DiffLine) -> Definition | None:
        """Take in an old-side line: the definitions it closes, and the one it opens."""
        indent = len(line.text) - len(line.text.lstrip())
        while self._stack and self._stack[-1][0] >= indent:
            self._stack.pop()
        found = definition_in(line.text, "python")
        if found is not None:
            self._stack.append((indent, found.name, found.kind))
        return found

    @property
    def function(self) -> str:
        return self._stack[-1][1] if self._stack and self._stack[-1][2] != "class" else ""


MIN_TAKEN_CHARS = 12  # ``return x``, ``else:``: lines too short to say where code came from


def _may_extract(fact: FileFact, patch: ParsedPatch) -> bool:
    """Whether a file's patch may hold an extracted function: a Python file the PR changes
    (not adds) that loses lines and gains a ``def`` line."""
    return (
        fact.language == "python"
        and fact.status != "added"
        and bool(patch.removed())
        and any("def " in x.text for x in patch.added())
    )


def _carved_out(patch: ParsedPatch) -> dict[str, list[str]]:
    """For each function whose ``def`` line the patch adds above lines that were there before
    (a helper cut out of a function where it stood), the function each such line sat in on
    the old side ("" where the hunk does not show it), one entry per line."""
    out: dict[str, list[str]] = {}
    for hunk in patch.hunks:
        if not any(x.kind == ADDED and "def " in x.text for x in hunk.lines):
            continue  # no def line added: no helper cut out here (most hunks)
        old_side = _OldSide(hunk)
        new_def: tuple[int, str] | None = None
        for line in hunk.lines:
            text = _normal(line.text)
            if text is None:
                continue
            indent = len(line.text) - len(line.text.lstrip())
            if new_def is not None and indent <= new_def[0]:
                new_def = None
            found = (
                definition_in(line.text, "python") if line.kind == ADDED else old_side.read(line)
            )
            if line.kind == ADDED and found is not None and found.kind != "class":
                new_def = (indent, found.name)
            elif new_def is not None and line.kind == CONTEXT and len(text) >= MIN_TAKEN_CHARS:
                out.setdefault(new_def[1], []).append(old_side.function)
    return out


def _said(name: str, lines: Iterable[DiffLine]) -> bool:
    word = re.compile(rf"\b{re.escape(name)}\b")
    return any(word.search(x.text) for x in lines)


def _match_copies(removed: list[Block], added: list[Block], moves: Moves) -> None:
    """Copies of one definition deleted from several files and defined once elsewhere (a
    helper every header carried, gathered into one): each copy went there, none is lost."""
    by_name: dict[str, list[Block]] = {}
    for block in added:
        by_name.setdefault(block.name, []).append(block)
    for old in removed:
        news = by_name.get(old.name, [])
        if old.key not in moves.removed and len(news) == 1 and news[0].path != old.path:
            moves.removed[old.key] = Origin(news[0].path, news[0].name)


def _record(old: Block, new: Block, moves: Moves, used: set[Key], alike: float) -> None:
    used.add(new.key)
    moves.added[new.key] = Origin(old.path, old.name, alike)
    moves.removed[old.key] = Origin(new.path, new.name, alike)


def _side_text(patch: ParsedPatch, side: str) -> list[str]:
    lines = patch.added() if side == ADDED else patch.removed()
    return [n for n in (_normal(x.text) for x in lines) if n is not None]


def _match_files(parsed: Sequence[tuple[FileFact, ParsedPatch]], moves: Moves) -> None:
    gone = [(f, p) for f, p in parsed if f.status == "removed"]
    new = [(f, p) for f, p in parsed if f.status == "added"]
    if not gone or not new or len(gone) * len(new) > MAX_PAIRS // 10:
        return
    new_text = {f.path: _Lines(_side_text(p, ADDED)) for f, p in new}
    taken: set[str] = set()
    for old, patch in gone:
        old_text = _Lines(_side_text(patch, REMOVED))
        if old_text.size < MIN_RENAME_LINES:
            continue
        scored = [
            (_dice(old_text, text), path)
            for path, text in new_text.items()
            if path not in taken
            and PurePosixPath(path).suffix == PurePosixPath(old.path).suffix
            and _bound(old_text, text) >= FILE_SIMILARITY  # else it cannot be chosen
        ]
        if not scored:
            continue
        score, path = max(scored)
        if score >= FILE_SIMILARITY:
            taken.add(path)
            moves.files[path] = old.path


def _name_only_blocks(
    symbols: Iterable[tuple[str, str, str, str | None, str]],
) -> tuple[list[Block], list[Block]]:
    removed: list[Block] = []
    added: list[Block] = []
    for path, name, kind, parent, change in symbols:
        block = Block(path, name, kind, parent, REMOVED if change == "removed" else ADDED, ())
        (removed if change == "removed" else added).append(block)
    return removed, added


def detect(
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    other_symbols: Iterable[tuple[str, str, str, str | None, str]] = (),
) -> Moves:
    """Moves and renames of the PR. ``other_symbols`` are (path, name, kind, parent, change) of
    languages without body comparison, matched by name across files."""
    moves = Moves()
    readable = [(fact, patch) for fact, patch in parsed if not (patch.error or fact.generated)]
    removed = [b for f, p in readable for b in definition_blocks(p, f.language, REMOVED)]
    # a move needs a definition taken away, an extraction lines taken away: without them the
    # added bodies are not collected
    added = [
        b
        for f, p in readable
        if removed or _may_extract(f, p)
        for b in definition_blocks(p, f.language, ADDED)
    ]
    _match_blocks(removed, added, moves)
    _match_in_place(readable, removed, added, moves)
    _match_rewrites(readable, removed, added, moves)
    _match_extractions(readable, added, moves)
    _match_pulled_classes(readable, removed, added, moves)
    by_name_removed, by_name_added = _name_only_blocks(
        s for s in other_symbols if s[4] in ("added", "removed")
    )
    _match_blocks(by_name_removed, by_name_added, moves)
    _match_in_place(readable, by_name_removed, by_name_added, moves)  # bodies unknown: said renamed
    _match_copies(by_name_removed, by_name_added, moves)
    _match_files(parsed, moves)
    return moves

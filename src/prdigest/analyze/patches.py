"""Parse the per-file ``patch`` text of a record into hunks with line numbers.

The input is what GitHub's ``/files`` gives for one file (and what the git source produces):
hunks that start at ``@@ -a,b +c,d @@``, without ``---``/``+++`` headers. The parser is strict
about the counts in each hunk header: a patch whose hunks are shorter or longer than their
headers say, or that holds text outside a hunk, is not guessed at — the file is marked broken
and analysis goes on without its lines.

Why not ``unidiff``: it was the first implementation and still serves as the oracle of a
property test (``tests/test_patches.py``), but it builds an object per line for whole-diff
parsing, which made it a third of the analyzer's time on a real 4,700-PR history (issue 4's
benchmark). This module does only the hunk grammar, in one pass over the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import NamedTuple

ADDED, REMOVED, CONTEXT = "+", "-", " "
_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@[ \t]?(.*)")


class DiffLine(NamedTuple):
    """One line of a hunk (a tuple: there are millions of them in a long history)."""

    kind: str  # "+", "-" or " "
    text: str  # without the leading marker and the line break
    old_no: int | None
    new_no: int | None


@dataclass(frozen=True, slots=True)
class Hunk:
    header: str  # the function context git printed after the second @@, if any
    old_start: int
    new_start: int
    lines: tuple[DiffLine, ...]


@dataclass(frozen=True, slots=True)
class ParsedPatch:
    path: str
    hunks: tuple[Hunk, ...]
    error: str | None = None
    # lines the patch removes and adds back unchanged but for their line break (a file
    # converted to CRLF), read as context: counted in the file's additions and deletions
    relaid: int = 0
    # each side's changed lines, gathered once: a dozen readers of a patch read one side alone
    _added: tuple[DiffLine, ...] = field(init=False, repr=False, compare=False)
    _removed: tuple[DiffLine, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lines = [line for hunk in self.hunks for line in hunk.lines if line.kind != CONTEXT]
        object.__setattr__(self, "_added", tuple(x for x in lines if x.kind == ADDED))
        object.__setattr__(self, "_removed", tuple(x for x in lines if x.kind == REMOVED))

    def added(self) -> tuple[DiffLine, ...]:
        return self._added

    def removed(self) -> tuple[DiffLine, ...]:
        return self._removed

    def side(self, kind: str) -> list[DiffLine]:
        """One side of the patch in order (``ADDED`` or ``REMOVED``): its lines of that kind
        with the context between them."""
        return [line for hunk in self.hunks for line in hunk.lines if line.kind in (kind, CONTEXT)]


class _PatchError(ValueError):
    pass


_new_line = tuple.__new__  # builds a DiffLine without the NamedTuple's Python-level __new__


def _hunk_body(
    lines: list[str], start: int, old_no: int, new_no: int, old_left: int, new_left: int
) -> tuple[list[DiffLine], int]:
    """The lines of one hunk from ``start``; returns them and the index after the hunk."""
    body: list[DiffLine] = []
    append = body.append
    index, count = start, len(lines)
    while old_left > 0 or new_left > 0:
        if index >= count:
            raise _PatchError("hunk is shorter than its header says")
        raw = lines[index]
        index += 1
        tag = raw[:1]
        # each branch checks only the count it lowers: the other one was checked before
        if tag == "+":
            append(_new_line(DiffLine, (ADDED, raw[1:], None, new_no)))
            new_no += 1
            new_left -= 1
            if new_left < 0:
                raise _PatchError(f"line {index}: hunk is longer than its header says")
        elif tag == "-":
            append(_new_line(DiffLine, (REMOVED, raw[1:], old_no, None)))
            old_no += 1
            old_left -= 1
            if old_left < 0:
                raise _PatchError(f"line {index}: hunk is longer than its header says")
        elif tag == " " or not raw:  # an empty line is a context line whose space was trimmed
            append(_new_line(DiffLine, (CONTEXT, raw[1:], old_no, new_no)))
            old_no += 1
            new_no += 1
            old_left -= 1
            new_left -= 1
            if old_left < 0 or new_left < 0:
                raise _PatchError(f"line {index}: hunk is longer than its header says")
        elif tag == "\\":  # "\\ No newline at end of file"
            continue
        else:
            raise _PatchError(f"line {index}: unexpected {raw[:20]!r} inside a hunk")
    while index < len(lines) and lines[index].startswith("\\"):
        index += 1
    return body, index


def _unchanged_kept(body: list[DiffLine]) -> tuple[list[DiffLine], int]:
    """The hunk with each line removed and added again unchanged said as context, and how many
    there were: what a patch that converts line endings (CRLF to LF) shows as a rewrite of every
    line once its line breaks are read alike. Only the lines that really changed stay changed."""
    kept = 0
    out: list[DiffLine] = []
    run: list[DiffLine] = []
    for line in (*body, None):
        if line is not None and line.kind != CONTEXT:
            run.append(line)
            continue
        old = [x for x in run if x.kind == REMOVED]
        new = [x for x in run if x.kind == ADDED]
        if old and new:
            matcher = SequenceMatcher(None, [x.text for x in old], [x.text for x in new], False)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                if tag == "equal":
                    kept += i2 - i1
                    out += [
                        DiffLine(CONTEXT, a.text, a.old_no, b.new_no)
                        for a, b in zip(old[i1:i2], new[j1:j2], strict=True)
                    ]
                else:
                    out += old[i1:i2] + new[j1:j2]
        else:
            out += run
        run = []
        if line is not None:
            out.append(line)
    return out, kept


def _parse(patch: str) -> tuple[list[Hunk], int]:
    converted = "\r" in patch  # CRLF line breaks, on one side of the diff or on both
    if converted:  # the last line has its CR and no line break after it
        patch = patch.replace("\r\n", "\n").removesuffix("\r")
    lines = patch.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text's final line break
    hunks: list[Hunk] = []
    relaid = 0
    index = 0
    while index < len(lines):
        match = _HUNK_HEADER.fullmatch(lines[index])
        if match is None:
            raise _PatchError(f"line {index + 1}: expected a hunk header '@@ -a,b +c,d @@'")
        old_start, new_start = int(match[1]), int(match[3])
        old_len = int(match[2]) if match[2] is not None else 1
        new_len = int(match[4]) if match[4] is not None else 1
        body, index = _hunk_body(
            lines,
            index + 1,
            old_start if old_len else old_start + 1,
            new_start if new_len else new_start + 1,
            old_len,
            new_len,
        )
        if converted:
            body, kept = _unchanged_kept(body)
            relaid += kept
        hunks.append(Hunk(match[5].strip(), old_start, new_start, tuple(body)))
    return hunks, relaid


def parse_patch(path: str, patch: str | None) -> ParsedPatch:
    """Hunks of one file's patch; ``error`` says why a patch could not be parsed."""
    if not patch:
        return ParsedPatch(path, ())
    if not patch.lstrip().startswith("@@"):
        return ParsedPatch(path, (), error="does not start with a hunk header '@@'")
    try:
        hunks, relaid = _parse(patch.lstrip())
        return ParsedPatch(path, tuple(hunks), relaid=relaid)
    except _PatchError as exc:
        return ParsedPatch(path, (), error=str(exc))

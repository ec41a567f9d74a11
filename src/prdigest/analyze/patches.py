"""Parse the per-file ``patch`` text of a record into hunks with line numbers.

GitHub's ``/files`` gives each file's hunks without ``---``/``+++`` headers; we add them and let
``unidiff`` do the parsing. A patch that ``unidiff`` rejects (inconsistent hunk counts, garbage)
is not guessed at: the file is marked broken and analysis goes on without its lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

ADDED, REMOVED, CONTEXT = "+", "-", " "


@dataclass(frozen=True, slots=True)
class DiffLine:
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

    def added(self) -> Iterator[DiffLine]:
        for hunk in self.hunks:
            for line in hunk.lines:
                if line.kind == ADDED:
                    yield line

    def removed(self) -> Iterator[DiffLine]:
        for hunk in self.hunks:
            for line in hunk.lines:
                if line.kind == REMOVED:
                    yield line


def parse_patch(path: str, patch: str | None) -> ParsedPatch:
    """Hunks of one file's patch; ``error`` says why a patch could not be parsed."""
    if not patch:
        return ParsedPatch(path, ())
    if not patch.lstrip().startswith("@@"):
        return ParsedPatch(path, (), error="does not start with a hunk header '@@'")
    text = f"--- a/{path}\n+++ b/{path}\n{patch}"
    if not text.endswith("\n"):
        text += "\n"
    try:
        patch_set = PatchSet(text)
    except UnidiffParseError as exc:
        return ParsedPatch(path, (), error=str(exc))
    hunks: list[Hunk] = []
    for patched_file in patch_set:
        for hunk in patched_file:
            lines = tuple(
                DiffLine(
                    kind=line.line_type,
                    text=line.value.rstrip("\r\n"),
                    old_no=line.source_line_no,
                    new_no=line.target_line_no,
                )
                for line in hunk
                if line.line_type in (ADDED, REMOVED, CONTEXT)
            )
            hunks.append(
                Hunk(
                    header=(hunk.section_header or "").strip(),
                    old_start=hunk.source_start,
                    new_start=hunk.target_start,
                    lines=lines,
                )
            )
    return ParsedPatch(path, tuple(hunks))

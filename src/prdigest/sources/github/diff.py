"""Split a pull request's unified ``.diff`` into per-file hunk text, shaped like GitHub ``/files``.

GitHub's ``/files`` endpoint gives each file's ``patch`` as its hunks only: from the first
``@@`` line to the end of the file's section, without the ``diff --git``/``index``/``---``/
``+++`` headers and without a final line break. :func:`split_diff` produces exactly that from
the ``application/vnd.github.diff`` text of a PR, so a record has the same ``patch`` whichever of
the two endpoints served it.

Why not ``unidiff``: it parses hunks into line objects and renders them back, and we need the
hunk text byte for byte (CRLF, ``\\ No newline at end of file``, odd Unicode line separators); the
splitting itself is a few dozen lines. ``analyze.patches`` parses the hunks.

Every hunk's line counts are checked against its ``@@ -a,b +c,d @@`` header, so a diff cut off
in transit is reported (:class:`~prdigest.core.errors.UpstreamError`) instead of being stored
as if it were whole.

Assumptions: the diff comes from git (``diff --git`` sections, ``a/``/``b/`` prefixes, C-quoted
paths for unusual names); a context line whose leading space was stripped (an empty line inside a
hunk) still counts as context, as ``git apply`` accepts it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.core.errors import UpstreamError
from prdigest.core.records import FileStatus
from prdigest.sources.gitdiff import FileDiff, side_path, unquote

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(slots=True)
class _Section:
    git_header: str
    old_path: str | None = None
    new_path: str | None = None
    status: FileStatus = "modified"
    binary: bool = False
    saw_old_marker: bool = False


def split_diff(text: str) -> tuple[FileDiff, ...]:
    """Per-file sections of a git unified diff, in diff order."""
    # Only "\n" separates lines: str.splitlines() would also split on \x0b, \x1c, U+2028 …
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    starts = [i for i, line in enumerate(lines) if line.startswith("diff --git ")]
    if lines and (not starts or starts[0] != 0):
        raise UpstreamError("malformed diff: text before the first 'diff --git' line")
    if not starts:
        return ()
    bounds = zip(starts, [*starts[1:], len(lines)], strict=True)
    return tuple(_parse_section(lines[start:end]) for start, end in bounds)


def _parse_section(lines: list[str]) -> FileDiff:
    section = _Section(git_header=lines[0])
    index = 1
    while index < len(lines) and not lines[index].startswith("@@"):
        _read_header_line(section, lines[index])
        index += 1
    hunk_lines = lines[index:]
    additions, deletions = count_hunk_lines(hunk_lines, where=_name_of(section))
    old, new = _paths(section)
    path = new if section.status != "removed" else old
    return FileDiff(
        path=path,
        previous_path=old if section.status in ("renamed", "copied") else None,
        status=section.status,
        binary=section.binary,
        patch="\n".join(hunk_lines) if hunk_lines else None,
        additions=additions,
        deletions=deletions,
    )


def _read_header_line(section: _Section, line: str) -> None:
    if line.startswith("new file mode"):
        section.status = "added"
    elif line.startswith("deleted file mode"):
        section.status = "removed"
    elif line.startswith("rename from "):
        section.status, section.old_path = "renamed", unquote(line[len("rename from ") :])
    elif line.startswith("rename to "):
        section.new_path = unquote(line[len("rename to ") :])
    elif line.startswith("copy from "):
        section.status, section.old_path = "copied", unquote(line[len("copy from ") :])
    elif line.startswith("copy to "):
        section.new_path = unquote(line[len("copy to ") :])
    elif line.startswith("--- "):
        section.saw_old_marker = True
        section.old_path = _marker_path(line[4:]) or section.old_path
    elif line.startswith("+++ "):
        section.new_path = _marker_path(line[4:]) or section.new_path
    elif line.startswith(("Binary files ", "GIT binary patch")):
        section.binary = True


def _marker_path(raw: str) -> str | None:
    """The path of a ``---``/``+++`` line, without its ``a/``/``b/`` prefix; None for /dev/null."""
    return side_path(raw.encode("utf-8"))


def _paths(section: _Section) -> tuple[str, str]:
    """(old path, new path), from the most specific header lines that were present."""
    header_old, header_new = _git_header_paths(section.git_header)
    old = section.old_path or header_old
    new = section.new_path or header_new
    if section.status == "added" and section.saw_old_marker:
        old = new
    return old, new


def _git_header_paths(header: str) -> tuple[str, str]:
    """Both paths of ``diff --git a/X b/Y``; ambiguous with spaces, so used only as a fallback."""
    rest = header[len("diff --git ") :]
    if rest.startswith('"') or rest.endswith('"'):
        first, second = _split_quoted_pair(rest)
        return first[2:], second[2:]
    half = (len(rest) - 1) // 2
    first, second = rest[:half], rest[half + 1 :]
    if (
        first[2:] == second[2:] and rest[half] == " "
    ):  # same path on both sides: split in the middle
        return first[2:], second[2:]
    cut = rest.rfind(" b/")
    if not rest.startswith("a/") or cut < 0:
        raise UpstreamError(f"malformed diff header: {header[:200]!r}")
    return rest[2:cut], rest[cut + 3 :]


def _split_quoted_pair(rest: str) -> tuple[str, str]:
    if rest.startswith('"'):
        end = _closing_quote(rest)
        return unquote(rest[: end + 1]), unquote(rest[end + 2 :])
    start = rest.rfind(' "')
    return unquote(rest[:start]), unquote(rest[start + 1 :])


def _closing_quote(text: str) -> int:
    index = 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index
        index += 1
    raise UpstreamError(f"malformed quoted path in diff: {text[:200]!r}")


def count_hunk_lines(lines: list[str], *, where: str) -> tuple[int, int]:
    """(additions, deletions) of a file's hunks, checking each hunk against its header.

    Raises :class:`UpstreamError` naming ``where`` when a hunk is shorter or longer than its
    header says (a truncated or garbled diff).
    """
    additions = deletions = 0
    index = 0
    while index < len(lines):
        match = HUNK_HEADER.match(lines[index])
        if match is None:
            raise UpstreamError(
                f"malformed diff of {where}: expected a hunk header, got {lines[index][:80]!r}"
            )
        old_left = int(match.group(2) or "1")
        new_left = int(match.group(4) or "1")
        index += 1
        while index < len(lines) and (old_left > 0 or new_left > 0 or lines[index][:1] == "\\"):
            marker = lines[index][:1]
            if marker == "+":
                new_left, additions = new_left - 1, additions + 1
            elif marker == "-":
                old_left, deletions = old_left - 1, deletions + 1
            elif marker in (" ", ""):
                old_left, new_left = old_left - 1, new_left - 1
            elif marker != "\\":
                break
            index += 1
        if old_left != 0 or new_left != 0:
            raise UpstreamError(
                f"malformed diff of {where}: a hunk does not match its header (truncated?)"
            )
    return additions, deletions


def _name_of(section: _Section) -> str:
    try:
        old, new = _paths(section)
    except UpstreamError:
        return section.git_header[:200]
    return new or old

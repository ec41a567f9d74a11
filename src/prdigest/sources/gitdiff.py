"""Git's diff syntax, shared by the GitHub source (``.diff`` text) and the git source (``git log
-p`` bytes): quoted paths, the ``---``/``+++`` lines, and one file's section of a diff.

Git C-quotes a path with unusual bytes (``"a/\\303\\251.py"``: octal escapes of its UTF-8
bytes, and ``\\t``-style escapes); a path with a space gets a tab after it on the ``---`` and
``+++`` lines. Bytes that are not UTF-8 are replaced, never fatal.
"""

from __future__ import annotations

from dataclasses import dataclass

from prdigest.core.records import FileStatus

_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


@dataclass(frozen=True, slots=True)
class FileDiff:
    """One file's section of a diff: where it is, what happened to it, and its hunks."""

    path: str
    previous_path: str | None
    status: FileStatus
    binary: bool
    patch: str | None  # hunk text as GitHub's /files gives it; None: binary, too large, unknown
    additions: int
    deletions: int


def unquote_path(raw: bytes) -> str:
    """A path as git prints it: C-quoted when unusual, else verbatim."""
    if not (raw.startswith(b'"') and raw.endswith(b'"') and len(raw) >= 2):
        return raw.decode("utf-8", errors="replace")
    text, out, i = raw[1:-1].decode("latin-1"), bytearray(), 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 == len(text):
            out.append(ord(char))
            i += 1
        elif text[i + 1] in "01234567":
            out.append(int(text[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            out.append(_ESCAPES.get(text[i + 1], ord(text[i + 1])))
            i += 2
    return out.decode("utf-8", errors="replace")


def unquote(value: str) -> str:
    """:func:`unquote_path` for a path already decoded as text."""
    if len(value) < 2 or not (value.startswith('"') and value.endswith('"')):
        return value
    return unquote_path(value.encode("utf-8"))


def strip_prefix(path: str) -> str:
    """``a/x`` or ``b/x`` → ``x`` (the prefixes of ``diff --git`` and ``---``/``+++``)."""
    return path[2:] if path[:2] in ("a/", "b/") else path


def side_path(raw: bytes) -> str | None:
    """The path after ``--- `` or ``+++ ``, without its prefix; None for ``/dev/null``."""
    raw = raw.rstrip(b"\n")
    if raw.endswith(b"\t"):  # git appends a tab when the path contains a space
        raw = raw[:-1]
    if raw == b"/dev/null":
        return None
    return strip_prefix(unquote_path(raw))

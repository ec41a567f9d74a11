"""Parse the byte stream of ``git log -p`` (in :data:`LOG_FORMAT`) into :class:`RawCommit`.

Pure: the parser reads lines through a ``readline(limit)`` callable and yields one commit at a
time, so memory holds a single commit whatever the length of the history.

Per file it keeps what GitHub's ``/files`` gives: path, previous path of a rename or copy,
status, binary flag, added/removed line counts and the hunk text (from the first ``@@``, no
``diff --git``/``---``/``+++`` headers, no final line break). Limits, mirroring GitHub, so
that one vendored or generated file cannot blow up memory or the later stages:

* a file's patch is dropped (``patch=None``, counts kept) beyond :data:`MAX_PATCH_LINES` lines
  or :data:`MAX_PATCH_BYTES` bytes; a single line longer than the byte cap drops it too;
* once a commit's kept patches reach :data:`MAX_COMMIT_PATCH_BYTES`, later files of that
  commit get no patch;
* only the first :data:`MAX_FILES` files are listed; the rest still count in the totals.

A file without hunks (a pure rename, a mode change, an empty new file) gets ``patch=""``:
its text diff is known to be empty, which is not the same as unknown. Binary files get
``binary=True`` and ``patch=None``. Bytes that are not UTF-8 are replaced, never fatal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from prdigest.core.errors import SourceError
from prdigest.core.records import FileStatus
from prdigest.sources.gitdiff import FileDiff, side_path, strip_prefix, unquote_path

MAX_PATCH_LINES = 20_000
MAX_PATCH_BYTES = 1_000_000
MAX_COMMIT_PATCH_BYTES = 16_000_000
MAX_FILES = 3_000

ReadLine = Callable[[int], bytes]

_COMMIT_MARK = b"\x1e\x1fprdigest\x1f"
_END_MARK = b"\x1e\x1fend"
_SEP = "\x1f"
# %B ends with its own line break; the end mark on a line of its own closes the message.
LOG_FORMAT = "%x1e%x1fprdigest%x1f%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cI%n%B%n%x1e%x1fend"

_DIFF = b"diff --git "
_PLUS, _MINUS, _AT, _SPACE, _BACKSLASH = ord("+"), ord("-"), ord("@"), ord(" "), ord("\\")
_HUNK_BYTES = frozenset((_PLUS, _MINUS, _AT, _SPACE, _BACKSLASH))


@dataclass(frozen=True, slots=True)
class RawCommit:
    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    authored_at: datetime
    committed_at: datetime
    message: str
    files: tuple[FileDiff, ...]
    changed_files: int  # including files beyond MAX_FILES
    additions: int
    deletions: int


def _header_path(line: bytes) -> str:
    """The path of a ``diff --git a/P b/P`` line (both sides equal unless a rename says so)."""
    rest = line[len(_DIFF) :].rstrip(b"\n")
    if rest.startswith(b'"'):
        end = rest.index(b'" ', 1) + 1 if b'" ' in rest else len(rest)
        return strip_prefix(unquote_path(rest[:end]))
    # unquoted: "a/P b/P" with the same P twice, so the split point is the middle
    size = (len(rest) - 5) // 2
    return rest[2 : 2 + size].decode("utf-8", errors="replace")


@dataclass(slots=True)
class _File:
    owner: _Commit
    path: str
    previous_path: str | None = None
    status: FileStatus = "modified"
    binary: bool = False
    additions: int = 0
    deletions: int = 0
    in_hunks: bool = False
    keep: bool = True
    lines: int = 0
    size: int = 0
    chunks: list[bytes] = field(default_factory=list)

    def header(self, line: bytes) -> None:
        """One extended header line (between ``diff --git`` and the first hunk)."""
        if line.startswith(b"new file mode"):
            self.status = "added"
        elif line.startswith(b"deleted file mode"):
            self.status = "removed"
        elif line.startswith((b"rename from ", b"copy from ")):
            self.previous_path = unquote_path(line.split(b" ", 2)[2].rstrip(b"\n"))
        elif line.startswith((b"rename to ", b"copy to ")):
            self.path = unquote_path(line.split(b" ", 2)[2].rstrip(b"\n"))
            self.status = "renamed" if line.startswith(b"rename") else "copied"
        elif line.startswith((b"Binary files ", b"GIT binary patch")):
            self.binary = True
        elif line.startswith(b"--- "):
            old = side_path(line[4:])
            if old is not None and self.status in ("renamed", "copied"):
                self.previous_path = old
        elif line.startswith(b"+++ "):
            new = side_path(line[4:])
            if new is not None:
                self.path = new

    def result(self) -> FileDiff:
        patch: str | None
        if self.binary or not self.keep:
            patch = None
        else:
            patch = b"".join(self.chunks).decode("utf-8", errors="replace").removesuffix("\n")
        return FileDiff(
            path=self.path,
            previous_path=self.previous_path,
            status=self.status,
            binary=self.binary,
            patch=patch,
            additions=self.additions,
            deletions=self.deletions,
        )


@dataclass(slots=True)
class _Commit:
    fields: list[str]
    message: list[bytes] = field(default_factory=list)
    files: list[FileDiff] = field(default_factory=list)
    changed_files: int = 0
    additions: int = 0
    deletions: int = 0
    patch_bytes: int = 0

    def add(self, current: _File) -> None:
        self.changed_files += 1
        self.additions += current.additions
        self.deletions += current.deletions
        if len(self.files) < MAX_FILES:
            self.files.append(current.result())

    def result(self) -> RawCommit:
        sha, parents, name, email, authored, committed = self.fields
        message = b"".join(self.message).decode("utf-8", errors="replace").strip()
        return RawCommit(
            sha=sha,
            parents=tuple(parents.split()),
            author_name=name,
            author_email=email,
            authored_at=datetime.fromisoformat(authored),
            committed_at=datetime.fromisoformat(committed),
            message=message,
            files=tuple(self.files),
            changed_files=self.changed_files,
            additions=self.additions,
            deletions=self.deletions,
        )


def _commit_from_mark(readline: ReadLine, line: bytes) -> _Commit:
    while not line.endswith(b"\n"):  # many parents or a long name: the header came in pieces
        more = readline(MAX_PATCH_BYTES)
        if not more:
            break
        line += more
    fields = line[len(_COMMIT_MARK) :].rstrip(b"\n").decode("utf-8", errors="replace").split(_SEP)
    if len(fields) != 6:
        raise SourceError(f"cannot parse git log output near {line[:120]!r}")
    return _Commit(fields)


def _read_message(readline: ReadLine, commit: _Commit) -> None:
    while line := readline(MAX_PATCH_BYTES):
        if line.rstrip(b"\n") == _END_MARK:
            return
        commit.message.append(line)  # an over-long line arrives in pieces, joined again later


def _skip_rest_of_line(readline: ReadLine, line: bytes) -> None:
    while len(line) == MAX_PATCH_BYTES and not line.endswith(b"\n"):
        line = readline(MAX_PATCH_BYTES)


def _hunk_line(current: _File, line: bytes, first: int) -> None:
    if first == _PLUS:
        current.additions += 1
    elif first == _MINUS:
        current.deletions += 1
    if not current.keep:
        return
    current.lines += 1
    current.size += len(line)
    if (
        current.lines > MAX_PATCH_LINES
        or current.size > MAX_PATCH_BYTES
        or current.owner.patch_bytes + current.size > MAX_COMMIT_PATCH_BYTES
    ):
        current.keep = False
        current.chunks = []
    else:
        current.chunks.append(line)


def _hunk_lines(readline: ReadLine, current: _File, line: bytes) -> bytes:
    """:func:`_hunk_line` for ``line`` and each hunk line after it, with the file's counts in
    locals (millions of lines: attribute reads were most of the parser's time); returns the
    first line that is not a hunk line (``b""`` at the end of the stream)."""
    additions, deletions, keep = current.additions, current.deletions, current.keep
    lines, size, chunks = current.lines, current.size, current.chunks
    # the commit's kept bytes do not change before the file closes: one bound for both caps
    max_size = min(MAX_PATCH_BYTES, MAX_COMMIT_PATCH_BYTES - current.owner.patch_bytes)
    while True:
        first = line[0]
        if first == _PLUS:
            additions += 1
        elif first == _MINUS:
            deletions += 1
        if keep:
            lines += 1
            size += len(line)
            if lines > MAX_PATCH_LINES or size > max_size:
                keep, chunks = False, []
            else:
                chunks.append(line)
        if len(line) == MAX_PATCH_BYTES and not line.endswith(b"\n"):
            keep, chunks = False, []
            _skip_rest_of_line(readline, line)
        line = readline(MAX_PATCH_BYTES)
        if not line or line[0] not in _HUNK_BYTES:
            break
    current.additions, current.deletions, current.keep = additions, deletions, keep
    current.lines, current.size, current.chunks = lines, size, chunks
    return line


def _close(current: _File | None) -> None:
    if current is not None:
        if current.keep:
            current.owner.patch_bytes += current.size
        current.owner.add(current)


def parse_log(readline: ReadLine) -> Iterator[RawCommit]:
    """Commits of a ``git log -p --format=LOG_FORMAT`` stream, one at a time, in stream order."""
    commit: _Commit | None = None
    current: _File | None = None
    line = readline(MAX_PATCH_BYTES)
    while line:
        first = line[0]
        if current is not None and current.in_hunks and first in _HUNK_BYTES:
            line = _hunk_lines(readline, current, line)
            continue  # the line after the hunks is read: dispatched as it is
        if line.startswith(_COMMIT_MARK):
            _close(current)
            if commit is not None:
                yield commit.result()
            commit, current = _commit_from_mark(readline, line), None
            _read_message(readline, commit)
        elif line.startswith(_DIFF):
            _close(current)
            if commit is None:
                raise SourceError("cannot parse git log output: a diff before any commit header")
            current = _File(commit, _header_path(line))
        elif current is None:
            _skip_rest_of_line(readline, line)  # the blank line between message and diff
        elif line.startswith(b"@@"):
            current.in_hunks = True
            _hunk_line(current, line, first)
        else:
            current.header(line)
            _skip_rest_of_line(readline, line)
        line = readline(MAX_PATCH_BYTES)
    _close(current)
    if commit is not None:
        yield commit.result()

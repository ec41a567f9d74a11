"""JSON Lines import and export of ``prdigest.pr/v1`` records.

A bad line never stops an import: :func:`read_records` yields each good record and an
:class:`~prdigest.core.errors.ImportLineError` (line number and reason) for each bad one, in file
order, so the caller can store the good ones and report the bad ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, ClassVar

from prdigest.core.errors import ImportLineError, InputError, RecordError
from prdigest.core.models import Window
from prdigest.core.records import PullRequest, parse_record
from prdigest.sources.base import Details, Fetched, Item, NoDetails, Skipped

BATCH = 200
MAX_LINE = 64 * 1024 * 1024  # bytes; a record's strings are bounded too (core.records)
MAX_INT_DIGITS = 20  # a 64-bit integer has at most 19 digits and a sign


def _bounded_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise ValueError(f"integer of {len(text)} digits is out of the 64-bit range")
    return int(text)


def _load_json(line: str) -> object:
    """One JSON value; every way the decoder can fail becomes a ``ValueError`` with a reason."""
    try:
        return json.loads(line, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from exc
    except RecursionError as exc:
        raise ValueError("not a record: nested too deeply") from exc


def parse_lines(
    lines: Iterable[str | bytes], *, name: str
) -> Iterator[PullRequest | ImportLineError]:
    """Parse JSONL lines; blank lines are skipped, each bad line becomes an error."""
    for _, item in numbered_lines(lines, name=name):
        yield item


def numbered_lines(
    lines: Iterable[str | bytes], *, name: str
) -> Iterator[tuple[int, PullRequest | ImportLineError]]:
    """:func:`parse_lines` with the line number of each item."""
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE:
            yield (
                number,
                ImportLineError(
                    f"line of {len(raw):,} bytes (at most {MAX_LINE:,})", path=name, line=number
                ),
            )
            continue
        if isinstance(raw, bytes):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield (
                    number,
                    ImportLineError(f"not UTF-8 text at byte {exc.start}", path=name, line=number),
                )
                continue
        else:
            line = raw
        if not line.strip():
            continue
        try:
            data = _load_json(line)
        except ValueError as exc:
            yield number, ImportLineError(str(exc), path=name, line=number)
            continue
        try:
            yield number, parse_record(data)
        except RecordError as exc:
            yield number, ImportLineError(str(exc), path=name, line=number)


def read_records(path: Path) -> Iterator[PullRequest | ImportLineError]:
    """Stream records from a JSONL file, one line at a time (memory stays flat)."""
    for _, item in read_numbered(path):
        yield item


def read_numbered(path: Path) -> Iterator[tuple[int, PullRequest | ImportLineError]]:
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    with handle:
        yield from numbered_lines(handle, name=str(path))


def write_records(records: Iterable[PullRequest], out: IO[str]) -> int:
    """Write records as JSONL (one compact line each); returns how many were written."""
    count = 0
    for record in records:
        out.write(json.dumps(record.to_json_dict(), ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        count += 1
    return count


@dataclass
class JsonlSource:
    """The records of a JSONL file; with ``only`` set, lines of other repositories are skipped.

    A file has no notion of time: every record is read, whatever the window.
    """

    name: ClassVar[str] = "jsonl"
    path: Path
    only: str | None = None
    flush_every: int = BATCH
    yields_to_others: bool = False

    @property
    def repo(self) -> str:
        return self.only or "*"

    def read(self, window: Window | None) -> Iterator[Item]:
        for line, item in read_numbered(self.path):
            if isinstance(item, PullRequest):
                if self.only is not None and item.repo != self.only:
                    yield Skipped(item.ref, item.title, f"a record of {item.repo}")
                    continue
                yield Fetched(item, origin=f"{self.path}:{line}")
            else:
                yield item

    def details(self) -> Details:
        return NoDetails()

    def close(self) -> None:
        return None

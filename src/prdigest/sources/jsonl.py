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


def parse_lines(
    lines: Iterable[str | bytes], *, name: str
) -> Iterator[PullRequest | ImportLineError]:
    """Parse JSONL lines; blank lines are skipped, each bad line becomes an error."""
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, bytes):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield ImportLineError(f"not UTF-8 text at byte {exc.start}", path=name, line=number)
                continue
        else:
            line = raw
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            reason = f"not valid JSON ({exc.msg} at column {exc.colno})"
            yield ImportLineError(reason, path=name, line=number)
            continue
        try:
            yield parse_record(data)
        except RecordError as exc:
            yield ImportLineError(str(exc), path=name, line=number)


def read_records(path: Path) -> Iterator[PullRequest | ImportLineError]:
    """Stream records from a JSONL file, one line at a time (memory stays flat)."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    with handle:
        yield from parse_lines(handle, name=str(path))


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
        for item in read_records(self.path):
            if isinstance(item, PullRequest):
                if self.only is not None and item.repo != self.only:
                    yield Skipped(item.ref, item.title, f"a record of {item.repo}")
                    continue
                yield Fetched(item)
            else:
                yield item

    def details(self) -> Details:
        return NoDetails()

    def close(self) -> None:
        return None

"""What every source is: a :class:`Source` yields records; :func:`sync` stores them.

A source knows where PRs come from (GitHub, a local clone, a JSONL file) and nothing about the
store: :meth:`Source.read` yields :class:`Fetched` records (with the source's checkpoint, when
it keeps one), :class:`Skipped` items (a commit that is not a PR, a line of another repository)
and :class:`~prdigest.core.errors.ImportLineError` problems (a bad input line). :func:`sync` is
the one loop that stores what a source yields: in transactions of ``flush_every`` records, the
checkpoints in the same transaction as their records, never replacing a record from a richer
source with one from a source that ``yields_to_others`` (git knows no discussion). It returns a
:class:`SyncReport`, the one result type of every sync.

Adding a source: one module with a class that has the attributes of :class:`Source` and a
factory registered in :data:`prdigest.pipeline.registry.SOURCES`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from prdigest.core.errors import ImportLineError, SourceError, StorageError
from prdigest.core.models import Window
from prdigest.core.records import PullRequest
from prdigest.store.checkpoints import DoneMark
from prdigest.store.records import RecordRepository, UpsertResult

Progress = Callable[[int, int], None]
MAX_EXAMPLES = 20  # skipped items kept for the report


@dataclass(frozen=True, slots=True)
class Fetched:
    """A record, and the checkpoint to store in the same transaction (None: no checkpoint)."""

    record: PullRequest
    mark: DoneMark | None = None
    origin: str | None = None  # where it was read (``prs.jsonl:12``), for messages


@dataclass(frozen=True, slots=True)
class Skipped:
    """An item of the source that is not a PR of the repository (not an error)."""

    ref: str  # a commit sha, a line number
    subject: str
    reason: str


Item = Fetched | Skipped | ImportLineError


class Details(Protocol):
    """What only one kind of source knows about a sync (requests made, commits read …)."""

    @property
    def stopped(self) -> SourceError | None:
        """The source error that ended the read early (None: it read everything)."""
        ...

    def lines(self, report: SyncReport) -> list[str]:
        """The sync's summary for people, first line first."""
        ...


@dataclass(frozen=True)
class NoDetails:
    stopped: SourceError | None = None

    def lines(self, report: SyncReport) -> list[str]:
        s = report.stored
        return [
            f"{report.repo}: {report.found} record(s) read; stored {s.new} new, "
            f"{s.updated} updated, {s.unchanged} unchanged"
        ]


@dataclass(frozen=True)
class SyncReport:
    """What a sync did. ``stopped`` is the source error that ended it early, after the work
    done so far was stored (a re-run resumes); ``details`` what only this source knows."""

    repo: str
    source: str
    found: int = 0  # records the source read
    stored: UpsertResult = field(default_factory=UpsertResult)
    kept: int = 0  # left alone: the store has them from a richer source
    skipped: int = 0
    skipped_examples: tuple[Skipped, ...] = ()
    problems: tuple[str, ...] = ()  # bad input lines, each naming its line
    stopped: SourceError | None = None
    details: Details = field(default_factory=NoDetails)

    def lines(self) -> list[str]:
        return self.details.lines(self)


class Source(Protocol):
    """A place PRs come from. ``read`` yields the window's items (a source that has no notion
    of time, such as a file, yields everything)."""

    name: ClassVar[str]
    flush_every: int  # records per store transaction
    yields_to_others: bool  # never replaces a record stored from another source

    @property
    def repo(self) -> str:
        """The repository whose PRs are read (``*``: whatever a file holds)."""
        ...

    def read(self, window: Window | None) -> Iterator[Item]: ...

    def details(self) -> Details:
        """Filled in by ``read``; asked for after it finished (or stopped)."""
        ...

    def close(self) -> None: ...


@dataclass
class _Tally:
    found: int = 0
    stored: UpsertResult = field(default_factory=UpsertResult)
    kept: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    skipped_count: int = 0
    problems: list[str] = field(default_factory=list)


def _flush(source: Source, records: RecordRepository, batch: list[Fetched], tally: _Tally) -> None:
    if not batch:
        return
    keep: set[int] = set()
    if source.yields_to_others:
        stored = records.sources_of(source.repo, (f.record.number for f in batch))
        keep = {n for n, name in stored.items() if name != source.name}
    tally.kept += len(keep)
    fresh = [f for f in batch if f.record.number not in keep]
    batch.clear()
    try:
        tally.stored += _store(records, fresh)
    except StorageError as exc:
        if len(fresh) == 1:
            raise
        _store_one_by_one(records, fresh, tally, exc)


def _store(records: RecordRepository, fetched: list[Fetched]) -> UpsertResult:
    marks = [f.mark for f in fetched if f.mark is not None]
    return records.upsert([f.record for f in fetched], marks=marks)


def _store_one_by_one(
    records: RecordRepository, fresh: list[Fetched], tally: _Tally, first: StorageError
) -> None:
    """A batch the store refused: each record in its own transaction, so one bad record costs
    only itself. If none can be stored, the store itself is failing: raise its error."""
    failed: list[str] = []
    for item in fresh:
        try:
            tally.stored += _store(records, [item])
        except StorageError as exc:
            where = f"{item.origin}: " if item.origin else ""
            failed.append(f"{where}{item.record.ref}: {exc}")
    if len(failed) == len(fresh):
        raise first
    tally.problems.extend(failed)


def sync(source: Source, records: RecordRepository, window: Window | None) -> SyncReport:
    """Store everything ``source`` yields for ``window``; the source is closed afterwards.

    An error the source raises is raised here too, after the records it yielded before were
    stored.
    """
    tally = _Tally()
    batch: list[Fetched] = []
    try:
        for item in source.read(window):
            if isinstance(item, Fetched):
                tally.found += 1
                batch.append(item)
                if len(batch) >= source.flush_every:
                    _flush(source, records, batch, tally)
            elif isinstance(item, Skipped):
                tally.skipped_count += 1
                if len(tally.skipped) < MAX_EXAMPLES:
                    tally.skipped.append(item)
            else:
                tally.problems.append(str(item))
        _flush(source, records, batch, tally)
    finally:
        source.close()
    details = source.details()
    return SyncReport(
        repo=source.repo,
        source=source.name,
        found=tally.found,
        stored=tally.stored,
        kept=tally.kept,
        skipped=tally.skipped_count,
        skipped_examples=tuple(tally.skipped),
        problems=tuple(tally.problems),
        stopped=details.stopped,
        details=details,
    )

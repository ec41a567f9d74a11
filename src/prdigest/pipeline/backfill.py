"""Backfill: the digest of every day of a range, resumable, split between several workers.

Each worker (a process on this machine, another machine, a task of a cluster job array) runs
:func:`backfill` against the same database. The days of the range are planned once (rows of
``backfill_days``); each worker then claims one free day at a time (see
:mod:`prdigest.store.backfill`: ``FOR UPDATE SKIP LOCKED`` on PostgreSQL), syncs it when a
source is given, digests it, stores the digest, and marks the day done with its PR count and
time. A day is claimed by one worker only, so no day is digested twice; a killed worker's day
is claimed again once its lease runs out (or at once by a worker started under the same name).

Several workers need PostgreSQL; on SQLite they take turns at every write, which is correct but
gains little.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta

from prdigest.core.errors import AuthError, PrdigestError, RateLimitError, StorageError
from prdigest.core.window import day_window
from prdigest.pipeline.digest import DigestOptions, run_digest
from prdigest.pipeline.registry import SourceSpec, sync_repo
from prdigest.store import Store
from prdigest.store.backfill import Job, Progress
from prdigest.write import Writer

DEFAULT_LEASE = timedelta(hours=1)  # a claimed day is free again after this (its worker died)
# errors that end the whole run rather than one day: the next days would fail alike
_FATAL: tuple[type[PrdigestError], ...] = (AuthError, RateLimitError, StorageError)


@dataclass(frozen=True)
class BackfillOptions:
    repo: str
    since: date  # the first day
    until: date  # the day after the last (exclusive, like every --until)
    tz: str
    worker: str  # this worker's name: its claims are its own
    top: int = 8
    lang: str = "zh"
    source: SourceSpec | None = None  # sync each day from it first (None: the store has them)
    lease: timedelta = DEFAULT_LEASE

    @property
    def days(self) -> list[str]:
        count = (self.until - self.since).days
        return [(self.since + timedelta(days=n)).isoformat() for n in range(count)]


@dataclass(frozen=True)
class DayDone:
    """One day this worker finished, and where the whole backfill stands."""

    day: str
    prs: int
    seconds: float
    error: str | None
    progress: Progress
    eta_s: float | None  # seconds left at the pace of every worker since this one started


@dataclass
class BackfillReport:
    days: list[str] = field(default_factory=list)  # digested by this worker
    failed: list[tuple[str, str]] = field(default_factory=list)  # (day, error), every worker's
    progress: Progress | None = None


OnDay = Callable[[DayDone], None]


def _one_day(
    store: Store, options: BackfillOptions, day: str, writer: Writer, env: Mapping[str, str]
) -> int:
    window = day_window(day, options.tz)
    if options.source is not None:
        report = sync_repo(store, options.source, window, env)
        if report.stopped is not None:
            raise report.stopped
    run = run_digest(store, DigestOptions(options.repo, window, options.top, options.lang), writer)
    if run.digest.total:
        store.digests.put(run.digest)
    return run.digest.total


def backfill(
    store: Store,
    options: BackfillOptions,
    writer: Writer,
    env: Mapping[str, str],
    on_day: OnDay | None = None,
) -> BackfillReport:
    """Digest the free days of the range until none is left (see the module docstring)."""
    job = Job(options.repo, options.tz, options.lang)
    days = options.days
    store.backfill.plan(job, days)
    started, done_at_start = time.perf_counter(), store.backfill.progress(job, days).done
    report = BackfillReport()
    while (claim := store.backfill.claim(job, options.worker, options.lease, days)) is not None:
        began = time.perf_counter()
        prs, error, fatal = 0, None, None
        try:
            prs = _one_day(store, options, claim.day, writer, env)
        except _FATAL as exc:
            error, fatal = str(exc).splitlines()[0], exc
        except PrdigestError as exc:
            error = str(exc).splitlines()[0]
        seconds = time.perf_counter() - began
        store.backfill.finish(claim, options.worker, prs=prs, seconds=seconds, error=error)
        if error is None:
            report.days.append(claim.day)
        progress = store.backfill.progress(job, days)
        if on_day is not None:
            finished = progress.done - done_at_start
            pace = (time.perf_counter() - started) / finished if finished > 0 else None
            eta = pace * progress.left if pace is not None else None
            on_day(DayDone(claim.day, prs, seconds, error, progress, eta))
        if fatal is not None:
            raise fatal
    report.progress = store.backfill.progress(job, days)
    report.failed = [f for f in store.backfill.failures(job) if f[0] in set(days)]
    return report

"""Backfill days: which days of a backfill are to do, claimed, done or failed, and by whom.

Several processes (on one machine, or a job array on a cluster) share one database and split
the days between them through row claims:

* PostgreSQL: ``SELECT … FOR UPDATE SKIP LOCKED`` picks the first free day no other transaction
  holds, so workers never wait on each other and never take the same day;
* SQLite: a conditional ``UPDATE … WHERE id = ? AND status = ?`` (compare and set) — of two
  workers that saw the same free day only one update matches, the other picks again.

A claim is a lease: a ``claimed`` day whose lease ran out (its worker was killed) is free again,
and a worker that starts again under the same name takes back its own claims at once, so a
backfill resumes where it stopped and no day is lost.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, and_, func, or_, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from prdigest.core.errors import StorageError
from prdigest.store import schema
from prdigest.store.engine import begin_write, now

TODO, CLAIMED, DONE, FAILED = "todo", "claimed", "done", "failed"
MAX_ATTEMPTS = 3  # a day that failed this often is left failed (the report names it)


@dataclass(frozen=True, slots=True)
class Job:
    """What a backfill covers: one repository's days in one time zone and language."""

    repo: str
    tz: str
    lang: str


@dataclass(frozen=True, slots=True)
class Claim:
    id: int
    day: str
    attempts: int


@dataclass(frozen=True, slots=True)
class Progress:
    total: int
    done: int
    failed: int
    claimed: int
    seconds: float  # summed over the days done (all workers)

    @property
    def left(self) -> int:
        return self.total - self.done - self.failed


class BackfillRepository:
    """Read and write the ``backfill_days`` table."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def _job(self, job: Job) -> Any:
        t = schema.backfill_days
        return and_(t.c.repo == job.repo, t.c.tz == job.tz, t.c.lang == job.lang)

    def plan(self, job: Job, days: Iterable[str]) -> int:
        """Add the days not planned yet (as ``todo``); returns how many were added. Safe to run
        from several workers at once: a day another worker added first is left as it is."""
        t = schema.backfill_days
        wanted = list(dict.fromkeys(days))
        with self._engine.connect() as conn:
            known = set(conn.execute(select(t.c.day).where(self._job(job))).scalars())
        rows = [
            {"repo": job.repo, "day": d, "tz": job.tz, "lang": job.lang, "status": TODO}
            for d in wanted
            if d not in known
        ]
        added = 0
        for row in rows:
            try:
                with begin_write(self._engine) as conn:
                    conn.execute(t.insert().values(attempts=0, **row))
                added += 1
            except IntegrityError:
                continue  # another worker planned it a moment ago
            except SQLAlchemyError as exc:
                raise StorageError(f"cannot plan the backfill of {job.repo}") from exc
        return added

    def claim(
        self, job: Job, worker: str, lease: timedelta, days: Iterable[str] | None = None
    ) -> Claim | None:
        """The first free day (of ``days``, when given) for ``worker``, marked claimed; None when
        every day is done, failed or held by another worker's live lease."""
        t = schema.backfill_days
        moment = now()
        free = or_(
            t.c.status == TODO,
            and_(t.c.status == CLAIMED, or_(t.c.worker == worker, t.c.claimed_at < moment - lease)),
            and_(t.c.status == FAILED, t.c.attempts < MAX_ATTEMPTS, t.c.worker == worker),
        )
        query = select(t.c.id, t.c.day, t.c.attempts, t.c.status).where(self._job(job), free)
        if days is not None:
            query = query.where(t.c.day.in_(list(days)))
        query = query.order_by(t.c.day)
        try:
            if self._engine.dialect.name == "postgresql":
                return self._claim_locked(query, worker, moment)
            return self._claim_compare_and_set(query, worker, moment)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot claim a backfill day of {job.repo}") from exc

    def _claim_locked(self, query: Any, worker: str, moment: datetime) -> Claim | None:
        t = schema.backfill_days
        with begin_write(self._engine) as conn:
            row = conn.execute(query.limit(1).with_for_update(skip_locked=True)).first()
            if row is None:
                return None
            conn.execute(
                update(t)
                .where(t.c.id == row.id)
                .values(status=CLAIMED, worker=worker, claimed_at=moment, attempts=t.c.attempts + 1)
            )
        return Claim(row.id, row.day, row.attempts + 1)

    def _claim_compare_and_set(self, query: Any, worker: str, moment: datetime) -> Claim | None:
        t = schema.backfill_days
        while True:
            with self._engine.connect() as conn:
                candidates = conn.execute(query.limit(8)).all()
            if not candidates:
                return None
            for row in candidates:
                with begin_write(self._engine) as conn:
                    taken = conn.execute(
                        update(t)
                        .where(
                            t.c.id == row.id,
                            t.c.status == row.status,
                            t.c.attempts == row.attempts,
                        )
                        .values(
                            status=CLAIMED,
                            worker=worker,
                            claimed_at=moment,
                            attempts=row.attempts + 1,
                        )
                    ).rowcount
                if taken == 1:
                    return Claim(row.id, row.day, row.attempts + 1)
            # every candidate was taken by another worker meanwhile: look again

    def finish(
        self, claim: Claim, worker: str, *, prs: int, seconds: float, error: str | None = None
    ) -> None:
        """Mark a claimed day done (or failed, with a one-line error); only its claimant can."""
        t = schema.backfill_days
        values = {
            "status": FAILED if error else DONE,
            "prs": prs,
            "seconds": seconds,
            "error": error,
            "done_at": now(),
        }
        try:
            with begin_write(self._engine) as conn:
                conn.execute(
                    update(t)
                    .where(t.c.id == claim.id, t.c.worker == worker, t.c.status == CLAIMED)
                    .values(**values)
                )
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot record backfill day {claim.day}") from exc

    def progress(self, job: Job, days: Iterable[str] | None = None) -> Progress:
        """Counts over the job's days (of ``days``, when given), all workers together."""
        t = schema.backfill_days
        query = (
            select(t.c.status, func.count(), func.coalesce(func.sum(t.c.seconds), 0.0))
            .where(self._job(job))
            .group_by(t.c.status)
        )
        if days is not None:
            query = query.where(t.c.day.in_(list(days)))
        with self._engine.connect() as conn:
            rows = {status: (int(n), float(s)) for status, n, s in conn.execute(query)}
        total = sum(n for n, _ in rows.values())
        return Progress(
            total=total,
            done=rows.get(DONE, (0, 0.0))[0],
            failed=rows.get(FAILED, (0, 0.0))[0],
            claimed=rows.get(CLAIMED, (0, 0.0))[0],
            seconds=rows.get(DONE, (0, 0.0))[1],
        )

    def failures(self, job: Job) -> list[tuple[str, str]]:
        """(day, error) of the failed days, oldest first."""
        t = schema.backfill_days
        query = (
            select(t.c.day, t.c.error).where(self._job(job), t.c.status == FAILED).order_by(t.c.day)
        )
        with self._engine.connect() as conn:
            return [(day, error or "") for day, error in conn.execute(query)]

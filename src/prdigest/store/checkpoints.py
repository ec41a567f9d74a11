"""Checkpoints of the GitHub source: what a window listed and how far each PR's fetch got.

A PR goes ``(nothing) → detail → done``. ``detail`` holds the PR's complete GraphQL data while
its patch text is still to be fetched; ``done`` is a :class:`DoneMark` that the record
repository writes inside the transaction that stores the record
(``RecordRepository.upsert(records, marks=...)``), so a run killed at any point
leaves either the old state or the new one, never a record without its checkpoint. The
``updated_at`` kept here is the PR's ``updatedAt`` as GitHub wrote it; a listing with the same
or an older value means the stored data is current.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, delete, select, update
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import StorageError
from prdigest.store import schema
from prdigest.store.engine import begin_write, describe
from prdigest.store.engine import now as _now
from prdigest.store.engine import utc_naive as _naive

DETAIL, DONE = "detail", "done"


@dataclass(frozen=True, slots=True)
class DoneMark:
    """A PR stored as of ``updated_at`` (GitHub's own value), with how its diff was fetched."""

    repo: str
    number: int
    updated_at: str
    diff_mode: str | None
    diff_etag: str | None


@dataclass(frozen=True, slots=True)
class FetchState:
    number: int
    updated_at: str
    stage: str  # DETAIL or DONE
    detail: dict[str, Any] | None
    diff_mode: str | None
    diff_etag: str | None


@dataclass(frozen=True, slots=True)
class WindowState:
    since: datetime  # naive UTC
    until: datetime
    pr_count: int
    complete: bool
    numbers: tuple[int, ...]


class GitHubCheckpoints:
    """Read and write the ``github_*`` tables; the store hands one out as ``store.checkpoints``."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def record_listing(
        self, repo: str, since: datetime, until: datetime, listed: Sequence[tuple[int, str]]
    ) -> int:
        """Remember what a window listed (replacing an earlier listing); returns the window id."""
        windows, prs = schema.github_windows, schema.github_window_prs
        span = (
            windows.c.repo == repo,
            windows.c.since == _naive(since),
            windows.c.until == _naive(until),
        )
        try:
            with begin_write(self._engine) as conn:
                window_id = conn.execute(select(windows.c.id).where(*span)).scalar()
                values = {
                    "pr_count": len(listed),
                    "complete": False,
                    "listed_at": _now(),
                    "completed_at": None,
                }
                if window_id is None:
                    inserted = conn.execute(
                        windows.insert().values(
                            repo=repo, since=_naive(since), until=_naive(until), **values
                        )
                    ).inserted_primary_key
                    if inserted is None:
                        raise StorageError(f"no id for the new window of {repo}")
                    window_id = inserted[0]
                else:
                    conn.execute(update(windows).where(windows.c.id == window_id).values(**values))
                    conn.execute(delete(prs).where(prs.c.window_id == window_id))
                if listed:
                    conn.execute(
                        prs.insert(),
                        [{"window_id": window_id, "number": n, "updated_at": u} for n, u in listed],
                    )
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot record the listing of {repo}: {describe(exc)}") from exc
        return int(window_id)

    def mark_window_complete(self, window_id: int) -> None:
        windows = schema.github_windows
        with begin_write(self._engine) as conn:
            conn.execute(
                update(windows)
                .where(windows.c.id == window_id)
                .values(complete=True, completed_at=_now())
            )

    def window(self, repo: str, since: datetime, until: datetime) -> WindowState | None:
        """The last listing of exactly this window, if any."""
        windows, prs = schema.github_windows, schema.github_window_prs
        with self._engine.connect() as conn:
            row = conn.execute(
                select(windows).where(
                    windows.c.repo == repo,
                    windows.c.since == _naive(since),
                    windows.c.until == _naive(until),
                )
            ).first()
            if row is None:
                return None
            numbers = (
                conn.execute(
                    select(prs.c.number).where(prs.c.window_id == row.id).order_by(prs.c.number)
                )
                .scalars()
                .all()
            )
        return WindowState(row.since, row.until, row.pr_count, bool(row.complete), tuple(numbers))

    def fetch_states(self, repo: str, numbers: Iterable[int]) -> dict[int, FetchState]:
        table = schema.github_pr_fetch
        wanted = sorted(set(numbers))
        states: dict[int, FetchState] = {}
        with self._engine.connect() as conn:
            for start in range(0, len(wanted), 500):  # stay under SQL variable limits
                rows = conn.execute(
                    select(table).where(
                        table.c.repo == repo, table.c.number.in_(wanted[start : start + 500])
                    )
                )
                for row in rows:
                    detail = json.loads(row.detail) if row.detail else None
                    states[row.number] = FetchState(
                        row.number, row.updated_at, row.stage, detail, row.diff_mode, row.diff_etag
                    )
        return states

    def save_details(self, repo: str, details: Sequence[tuple[int, str, dict[str, Any]]]) -> None:
        """Keep (number, updatedAt, GraphQL data) of PRs whose patch text is still to come.

        The ETag of an earlier ``done`` fetch is kept: it still describes the stored record.
        """
        try:
            with begin_write(self._engine) as conn:
                for number, updated_at, raw in details:
                    values = {
                        "updated_at": updated_at,
                        "stage": DETAIL,
                        "detail": json.dumps(raw, ensure_ascii=False),
                        "fetched_at": _now(),
                    }
                    self._upsert(conn, repo, number, values)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot save fetched details of {repo}: {describe(exc)}") from exc

    @staticmethod
    def _upsert(conn: Connection, repo: str, number: int, values: dict[str, Any]) -> None:
        _upsert_fetch(conn, repo, number, values)


def mark_done(conn: Connection, mark: DoneMark) -> None:
    """Within the record's transaction: this PR is stored as of ``mark.updated_at``."""
    values = {
        "updated_at": mark.updated_at,
        "stage": DONE,
        "detail": None,
        "diff_mode": mark.diff_mode,
        "diff_etag": mark.diff_etag,
        "fetched_at": _now(),
    }
    _upsert_fetch(conn, mark.repo, mark.number, values)


def _upsert_fetch(conn: Connection, repo: str, number: int, values: dict[str, Any]) -> None:
    table = schema.github_pr_fetch
    key = (table.c.repo == repo, table.c.number == number)
    if conn.execute(select(table.c.id).where(*key)).first() is None:
        conn.execute(table.insert().values(repo=repo, number=number, **values))
    else:
        conn.execute(update(table).where(*key).values(**values))

"""PR records: one row per (repo, number), upserted by content hash.

A record whose canonical JSON hashes the same as the stored one is not written again, so
re-importing a file changes nothing. The record JSON keeps the original time offsets; the
``merged_at`` column is naive UTC for window queries.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, func, select
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import NotFoundError, StorageError
from prdigest.core.records import PullRequest, parse_record
from prdigest.store import schema
from prdigest.store.checkpoints import DoneMark, mark_done
from prdigest.store.engine import begin_write, describe, now, utc_naive

CHUNK = 500  # numbers per IN (...) query: stays under SQL variable limits


@dataclass(frozen=True)
class UpsertResult:
    new: int = 0
    updated: int = 0
    unchanged: int = 0

    def __add__(self, other: UpsertResult) -> UpsertResult:
        return UpsertResult(
            self.new + other.new, self.updated + other.updated, self.unchanged + other.unchanged
        )

    @property
    def total(self) -> int:
        return self.new + self.updated + self.unchanged


def content_hash(record: PullRequest) -> str:
    """SHA-256 of the record's canonical JSON: equal records, equal hashes."""
    canonical = json.dumps(record.to_json_dict(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _load(raw: str) -> PullRequest:
    return parse_record(json.loads(raw))


def _row_values(record: PullRequest, digest: str, stored_at: datetime) -> dict[str, Any]:
    return {
        "repo": record.repo,
        "number": record.number,
        "title": record.title,
        "author": record.author,
        "merged_at": utc_naive(record.merged_at),
        "updated_at": record.updated_at.isoformat() if record.updated_at else None,
        "head_sha": record.head_sha,
        "merge_commit_sha": record.merge_commit_sha,
        "source": record.source,
        "content_hash": digest,
        "record": json.dumps(record.to_json_dict(), ensure_ascii=False),
        "stored_at": stored_at,
    }


_COLUMNS = (
    "repo",
    "number",
    "title",
    "author",
    "merged_at",
    "updated_at",
    "head_sha",
    "merge_commit_sha",
    "source",
    "content_hash",
    "record",
    "stored_at",
)


class RecordRepository:
    """Read and write the ``pull_requests`` table."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def upsert(
        self, records: Iterable[PullRequest], *, marks: Sequence[DoneMark] = ()
    ) -> UpsertResult:
        """Insert new records, replace changed ones, leave identical ones untouched.

        ``marks`` (a source's checkpoints) are written in the same transaction, so a crash
        leaves both the records and their checkpoints, or neither.
        """
        batch = list(records)
        if not batch and not marks:
            return UpsertResult()
        try:
            with begin_write(self._engine) as conn:
                result = self._upsert(conn, batch)
                for mark in marks:
                    mark_done(conn, mark)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store PR records: {describe(exc)}") from exc
        return result

    def _upsert(self, conn: Connection, batch: list[PullRequest]) -> UpsertResult:
        """One query for the stored hashes, then one multi-row insert and one batched update."""
        table = schema.pull_requests
        stored_at = now()
        inserts: dict[tuple[str, int], dict[str, Any]] = {}
        updates: dict[tuple[str, int], dict[str, Any]] = {}
        new = updated = unchanged = 0
        known = self._known_hashes(conn, batch)
        for record in batch:
            digest = content_hash(record)
            key = (record.repo, record.number)
            if known.get(key) == digest:
                unchanged += 1
                continue
            values = _row_values(record, digest, stored_at)
            if key in inserts:  # the same PR again in one batch: the later one stands
                inserts[key] = values
                updated += 1
            elif key in known:
                updates[key] = {f"v_{name}": value for name, value in values.items()}
                updates[key].update(key_repo=record.repo, key_number=record.number)
                updated += 1
            else:
                inserts[key] = values
                new += 1
            known[key] = digest
        if inserts:
            conn.execute(table.insert(), list(inserts.values()))
        if updates:
            conn.execute(
                table.update()
                .where(
                    table.c.repo == bindparam("key_repo"),
                    table.c.number == bindparam("key_number"),
                )
                .values({name: bindparam(f"v_{name}") for name in _COLUMNS}),
                list(updates.values()),
            )
        return UpsertResult(new, updated, unchanged)

    @staticmethod
    def _known_hashes(conn: Connection, batch: list[PullRequest]) -> dict[tuple[str, int], str]:
        table = schema.pull_requests
        known: dict[tuple[str, int], str] = {}
        for repo in {r.repo for r in batch}:
            numbers = [r.number for r in batch if r.repo == repo]
            for start in range(0, len(numbers), CHUNK):
                rows = conn.execute(
                    select(table.c.number, table.c.content_hash).where(
                        table.c.repo == repo, table.c.number.in_(numbers[start : start + CHUNK])
                    )
                )
                known.update({(repo, n): h for n, h in rows})
        return known

    def get(self, repo: str, number: int) -> PullRequest:
        table = schema.pull_requests
        with self._engine.connect() as conn:
            row = conn.execute(
                select(table.c.record).where(table.c.repo == repo, table.c.number == number)
            ).first()
        if row is None:
            raise NotFoundError(f"{repo}#{number} is not in the store; import or sync it first")
        return _load(row[0])

    def find(self, repo: str, number: int) -> PullRequest | None:
        """The stored record, or None."""
        try:
            return self.get(repo, number)
        except NotFoundError:
            return None

    def in_window(self, repo: str, since: datetime, until: datetime) -> list[PullRequest]:
        """Records merged in [since, until), oldest merge first."""
        table = schema.pull_requests
        query = (
            select(table.c.record)
            .where(
                table.c.repo == repo,
                table.c.merged_at >= utc_naive(since),
                table.c.merged_at < utc_naive(until),
            )
            .order_by(table.c.merged_at, table.c.number)
        )
        with self._engine.connect() as conn:
            return [_load(raw) for (raw,) in conn.execute(query)]

    def stream(self, repo: str | None = None) -> Iterator[PullRequest]:
        """Every stored record (of one repo), by repo and number; streams from the database."""
        table = schema.pull_requests
        query = select(table.c.record).order_by(table.c.repo, table.c.number)
        if repo:
            query = query.where(table.c.repo == repo)
        with self._engine.connect() as conn:
            for (raw,) in conn.execution_options(stream_results=True).execute(query):
                yield _load(raw)

    def sources_of(self, repo: str, numbers: Iterable[int]) -> dict[int, str]:
        """number → ``source`` of the stored record, for those of ``numbers`` that are stored."""
        return dict(self._by_number(repo, numbers, schema.pull_requests.c.source))

    def repos(self) -> dict[str, int]:
        """Every repository with stored records, and how many it has."""
        table = schema.pull_requests
        with self._engine.connect() as conn:
            rows = conn.execute(
                select(table.c.repo, func.count()).group_by(table.c.repo).order_by(table.c.repo)
            )
            return {repo: count for repo, count in rows}

    def window_hashes(self, repo: str, since: datetime, until: datetime) -> list[tuple[int, str]]:
        """(number, content hash) of the records merged in [since, until), oldest merge first:
        what a digest needs to know of a window before it decides what to read."""
        table = schema.pull_requests
        query = (
            select(table.c.number, table.c.content_hash)
            .where(
                table.c.repo == repo,
                table.c.merged_at >= utc_naive(since),
                table.c.merged_at < utc_naive(until),
            )
            .order_by(table.c.merged_at, table.c.number)
        )
        with self._engine.connect() as conn:
            return [(number, digest) for number, digest in conn.execute(query)]

    def load(self, repo: str, numbers: Iterable[int]) -> dict[int, PullRequest]:
        """The stored records of ``numbers`` (those that are stored), one query per chunk."""
        rows = self._by_number(repo, numbers, schema.pull_requests.c.record)
        return {number: _load(raw) for number, raw in rows}

    def _by_number(
        self, repo: str, numbers: Iterable[int], column: Any
    ) -> Iterator[tuple[int, Any]]:
        """(number, ``column``) of the stored records of ``numbers``, one query per chunk."""
        table = schema.pull_requests
        wanted = sorted(set(numbers))
        with self._engine.connect() as conn:
            for start in range(0, len(wanted), CHUNK):
                chunk = wanted[start : start + CHUNK]
                query = select(table.c.number, column).where(
                    table.c.repo == repo, table.c.number.in_(chunk)
                )
                yield from ((number, value) for number, value in conn.execute(query))

    def stored_merge_commits(self, repo: str, shas: Sequence[str]) -> dict[str, int]:
        """merge commit sha → PR number, for those of ``shas`` that a stored record names."""
        table = schema.pull_requests
        found: dict[str, int] = {}
        with self._engine.connect() as conn:
            for start in range(0, len(shas), CHUNK):
                rows = conn.execute(
                    select(table.c.merge_commit_sha, table.c.number).where(
                        table.c.repo == repo,
                        table.c.merge_commit_sha.in_(shas[start : start + CHUNK]),
                    )
                )
                found.update({sha: number for sha, number in rows})
        return found

    def stored_versions(self, repo: str) -> dict[int, str | None]:
        """number → stored ``updated_at`` for a repo, so a sync can skip unchanged PRs."""
        table = schema.pull_requests
        with self._engine.connect() as conn:
            rows = conn.execute(
                select(table.c.number, table.c.updated_at).where(table.c.repo == repo)
            )
            return {number: updated for number, updated in rows}

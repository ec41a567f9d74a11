"""Produced digests and the delivery log (tables of migration 0004).

:class:`PublishTables` is mixed into :class:`~prdigest.store.Store`. A digest is stored as the
JSON of :class:`~prdigest.core.models.Digest`, keyed by (repo, window label, language); storing an
identical digest again changes nothing, not even its ``updated_at``, so everything derived from
it (site pages, feeds) stays byte-stable over re-runs.

The delivery log holds one row per (channel, repo, window label, language). A ``sent`` row means
the channel has the message and it is not posted again; a ``failed`` row is retried by the next
run. A run killed between the post and the log write leaves no row, so that message is posted
again: delivery is at least once, never silently dropped.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import Engine, and_, select, update
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import NotFoundError, StorageError
from prdigest.core.models import Digest
from prdigest.store import schema

DeliveryStatus = Literal["sent", "failed"]


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC)


def digest_hash(digest: Digest) -> str:
    """SHA-256 of the digest's canonical JSON: equal digests, equal hashes."""
    return hashlib.sha256(digest.model_dump_json().encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class StoredDigest:
    """What the store knows about a digest without loading it (for indexes and feeds)."""

    repo: str
    label: str
    lang: str
    tz: str
    since: datetime  # aware, UTC
    until: datetime  # aware, UTC
    content_hash: str
    total: int
    counts: dict[str, int]
    created_at: datetime  # aware, UTC
    updated_at: datetime  # aware, UTC
    changed: bool = False  # set by put_digest: this call wrote new content


@dataclass(frozen=True)
class DeliveryRecord:
    channel: str
    repo: str
    label: str
    lang: str
    digest_hash: str
    status: DeliveryStatus
    attempts: int
    last_error: str | None
    updated_at: datetime  # aware, UTC


class PublishTables:
    """Digest and delivery methods of :class:`~prdigest.store.Store`."""

    _engine: Engine

    # -- digests ---------------------------------------------------------------------------

    def put_digest(self, digest: Digest) -> StoredDigest:
        """Store a digest; an identical one already stored is left untouched."""
        table = schema.digests
        content = digest_hash(digest)
        now = _now()
        key = and_(
            table.c.repo == digest.repo,
            table.c.label == digest.window.label,
            table.c.lang == digest.lang,
        )
        values: dict[str, Any] = {
            "tz": digest.window.tz,
            "since": _naive_utc(digest.window.since),
            "until": _naive_utc(digest.window.until),
            "content_hash": content,
            "total": digest.total,
            "counts": json.dumps(digest.counts, sort_keys=True),
            "payload": digest.model_dump_json(),
            "updated_at": now,
        }
        try:
            with self._engine.begin() as conn:
                known = conn.execute(select(table.c.content_hash).where(key)).scalar()
                if known == content:
                    changed = False
                elif known is None:
                    conn.execute(
                        table.insert().values(
                            repo=digest.repo,
                            label=digest.window.label,
                            lang=digest.lang,
                            created_at=now,
                            **values,
                        )
                    )
                    changed = True
                else:
                    conn.execute(update(table).where(key).values(**values))
                    changed = True
        except SQLAlchemyError as exc:
            raise StorageError(
                f"cannot store the digest of {digest.repo} {digest.window.label}"
            ) from exc
        stored = self._digest_meta(digest.repo, digest.window.label, digest.lang)
        return StoredDigest(**{**stored.__dict__, "changed": changed})

    def _digest_meta(self, repo: str, label: str, lang: str) -> StoredDigest:
        found = self.list_digests(repo, label=label, lang=lang)
        if not found:
            raise NotFoundError(f"no stored digest of {repo} for {label} ({lang})")
        return found[0]

    def list_digests(
        self, repo: str | None = None, *, label: str | None = None, lang: str | None = None
    ) -> list[StoredDigest]:
        """Stored digests, newest window first, then by repository and language."""
        table = schema.digests
        columns = [c for c in table.c if c.name not in ("id", "payload")]
        query = select(*columns).order_by(
            table.c.until.desc(), table.c.label.desc(), table.c.repo, table.c.lang
        )
        if repo is not None:
            query = query.where(table.c.repo == repo)
        if label is not None:
            query = query.where(table.c.label == label)
        if lang is not None:
            query = query.where(table.c.lang == lang)
        with self._engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [
            StoredDigest(
                repo=row["repo"],
                label=row["label"],
                lang=row["lang"],
                tz=row["tz"],
                since=_aware(row["since"]),
                until=_aware(row["until"]),
                content_hash=row["content_hash"],
                total=row["total"],
                counts=json.loads(row["counts"]),
                created_at=_aware(row["created_at"]),
                updated_at=_aware(row["updated_at"]),
            )
            for row in rows
        ]

    def load_digest(self, repo: str, label: str, lang: str) -> Digest:
        table = schema.digests
        with self._engine.connect() as conn:
            raw = conn.execute(
                select(table.c.payload).where(
                    table.c.repo == repo, table.c.label == label, table.c.lang == lang
                )
            ).scalar()
        if raw is None:
            raise NotFoundError(f"no stored digest of {repo} for {label} ({lang})")
        return Digest.model_validate_json(raw)

    # -- deliveries ------------------------------------------------------------------------

    def get_delivery(self, channel: str, repo: str, label: str, lang: str) -> DeliveryRecord | None:
        table = schema.deliveries
        with self._engine.connect() as conn:
            row = (
                conn.execute(
                    select(table).where(
                        table.c.channel == channel,
                        table.c.repo == repo,
                        table.c.label == label,
                        table.c.lang == lang,
                    )
                )
                .mappings()
                .first()
            )
        return None if row is None else _delivery(row)

    def record_delivery(
        self,
        channel: str,
        stored: StoredDigest,
        *,
        ok: bool,
        error: str | None = None,
    ) -> DeliveryRecord:
        """Log one attempt: ``ok`` marks it sent, otherwise failed with its (secret-free) error."""
        table = schema.deliveries
        key = and_(
            table.c.channel == channel,
            table.c.repo == stored.repo,
            table.c.label == stored.label,
            table.c.lang == stored.lang,
        )
        now = _now()
        values: dict[str, Any] = {
            "digest_hash": stored.content_hash,
            "status": "sent" if ok else "failed",
            "last_error": None if ok else error,
            "updated_at": now,
        }
        try:
            with self._engine.begin() as conn:
                attempts = conn.execute(select(table.c.attempts).where(key)).scalar()
                if attempts is None:
                    conn.execute(
                        table.insert().values(
                            channel=channel,
                            repo=stored.repo,
                            label=stored.label,
                            lang=stored.lang,
                            attempts=1,
                            created_at=now,
                            **values,
                        )
                    )
                else:
                    conn.execute(update(table).where(key).values(attempts=attempts + 1, **values))
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot log the delivery to channel {channel!r}") from exc
        record = self.get_delivery(channel, stored.repo, stored.label, stored.lang)
        assert record is not None  # written just above
        return record

    def list_deliveries(
        self, *, channel: str | None = None, status: DeliveryStatus | None = None
    ) -> list[DeliveryRecord]:
        """Logged deliveries, oldest first."""
        table = schema.deliveries
        query = select(table).order_by(table.c.created_at, table.c.id)
        if channel is not None:
            query = query.where(table.c.channel == channel)
        if status is not None:
            query = query.where(table.c.status == status)
        with self._engine.connect() as conn:
            return [_delivery(row) for row in conn.execute(query).mappings().all()]


def _delivery(row: Any) -> DeliveryRecord:
    return DeliveryRecord(
        channel=row["channel"],
        repo=row["repo"],
        label=row["label"],
        lang=row["lang"],
        digest_hash=row["digest_hash"],
        status="sent" if row["status"] == "sent" else "failed",
        attempts=row["attempts"],
        last_error=row["last_error"],
        updated_at=_aware(row["updated_at"]),
    )

"""The delivery log: one row per (channel, repo, window label, language).

A ``sent`` row means the channel has the message and it is not posted again; a ``failed`` row
is retried by the next run. A run killed between the post and the log write leaves no row, so
that message is posted again: delivery is at least once, never silently dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Engine, and_, select, update
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import StorageError
from prdigest.store import schema
from prdigest.store.digests import StoredDigest
from prdigest.store.engine import aware as _aware
from prdigest.store.engine import begin_write, describe
from prdigest.store.engine import now as _now

DeliveryStatus = Literal["sent", "failed"]


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


class DeliveryRepository:
    """Read and write the ``deliveries`` table."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def get(self, channel: str, repo: str, label: str, lang: str) -> DeliveryRecord | None:
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

    def record(
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
            with begin_write(self._engine) as conn:
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
            raise StorageError(
                f"cannot log the delivery to channel {channel!r}: {describe(exc)}"
            ) from exc
        record = self.get(channel, stored.repo, stored.label, stored.lang)
        assert record is not None  # written just above
        return record

    def query(
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

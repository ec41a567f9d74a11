"""The delivery log, kept as an outbox: one row per (channel, repo, window label, language).

Before a message is posted its row is set to ``sending`` (committed), and after the service
answered to ``sent`` or ``failed``. So a run killed in between leaves ``sending``: the message
may or may not have arrived. The next run resends it or reports it as ``unknown`` by the
channel's delivery rule (:mod:`prdigest.publish.deliver`). ``sent`` and ``unknown`` rows are
not posted again (``publish --force`` does); ``failed`` rows are retried.
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

DeliveryStatus = Literal["sending", "sent", "failed", "unknown"]
_STATUSES: tuple[DeliveryStatus, ...] = ("sending", "sent", "failed", "unknown")


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

    def begin(self, channel: str, stored: StoredDigest) -> DeliveryRecord:
        """The outbox step: mark the delivery ``sending`` (one more attempt) before posting."""
        return self._write(channel, stored, "sending", None, count=True)

    def finish(
        self, channel: str, stored: StoredDigest, *, ok: bool, error: str | None = None
    ) -> DeliveryRecord:
        """After the service answered: ``sent``, or ``failed`` with its (secret-free) error."""
        return self._write(channel, stored, "sent" if ok else "failed", error, count=False)

    def mark_unknown(self, channel: str, stored: StoredDigest) -> DeliveryRecord:
        """A ``sending`` row left by a killed run, not resent (at-most-once)."""
        return self._write(channel, stored, "unknown", "a run stopped while sending", count=False)

    def record(
        self,
        channel: str,
        stored: StoredDigest,
        *,
        ok: bool,
        error: str | None = None,
    ) -> DeliveryRecord:
        """Log one whole attempt: ``ok`` marks it sent, otherwise failed with its error."""
        return self._write(channel, stored, "sent" if ok else "failed", error, count=True)

    def _write(
        self,
        channel: str,
        stored: StoredDigest,
        status: DeliveryStatus,
        error: str | None,
        *,
        count: bool,
    ) -> DeliveryRecord:
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
            "status": status,
            "last_error": error if status in ("failed", "unknown") else None,
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
                    more = 1 if count else 0
                    conn.execute(
                        update(table).where(key).values(attempts=attempts + more, **values)
                    )
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
        status=next((s for s in _STATUSES if s == row["status"]), "failed"),
        attempts=row["attempts"],
        last_error=row["last_error"],
        updated_at=_aware(row["updated_at"]),
    )

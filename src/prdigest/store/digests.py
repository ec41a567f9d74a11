"""Produced digests: the JSON of :class:`~prdigest.core.models.Digest`, one row per (repo,
window label, language).

Storing an identical digest again changes nothing, not even its ``updated_at``, so everything
derived from it (site pages, feeds) stays byte-stable over re-runs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, and_, select, update
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import NotFoundError, StorageError
from prdigest.core.models import Digest
from prdigest.core.names import repo_problem
from prdigest.store import schema
from prdigest.store.engine import aware as _aware
from prdigest.store.engine import begin_write
from prdigest.store.engine import now as _now
from prdigest.store.engine import utc_naive as _naive_utc


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


class DigestRepository:
    """Read and write the ``digests`` table."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def put(self, digest: Digest) -> StoredDigest:
        """Store a digest; an identical one already stored is left untouched."""
        problem = repo_problem(digest.repo)
        if problem is not None:  # its name would become site paths: never store it
            raise StorageError(f"refused to store a digest: {problem}")
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
            with begin_write(self._engine) as conn:
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
        stored = self._meta(digest.repo, digest.window.label, digest.lang)
        return StoredDigest(**{**stored.__dict__, "changed": changed})

    def _meta(self, repo: str, label: str, lang: str) -> StoredDigest:
        found = self.query(repo, label=label, lang=lang)
        if not found:
            raise NotFoundError(f"no stored digest of {repo} for {label} ({lang})")
        return found[0]

    def query(
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

    def load(self, repo: str, label: str, lang: str) -> Digest:
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

"""The store: PR records and what is derived from them, in SQLite (or PostgreSQL).

:func:`open_store` opens (and, when needed, creates and migrates) a database and returns a
:class:`Store`, which is only the owner of the engine and of one narrow repository per kind of
data. A stage receives the repository it needs, never the store:

* :attr:`Store.records` — PR records (:mod:`.records`), upserted by content hash;
* :attr:`Store.artefacts` — dossiers, assessments, entries, keyed by what they came from;
* :attr:`Store.usage` — what model calls cost;
* :attr:`Store.digests` — produced digests (the site and the channels read them);
* :attr:`Store.deliveries` — the delivery log;
* :attr:`Store.checkpoints` — the GitHub source's listing and fetch checkpoints;
* :attr:`Store.backfill` — which days of a backfill are done, and which worker claimed each.

Tables are declared in :mod:`.schema`, created by the alembic migrations in ``migrations/``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from sqlalchemy import Engine

from prdigest.store.artefacts import ArtefactRepository
from prdigest.store.backfill import BackfillRepository
from prdigest.store.checkpoints import GitHubCheckpoints
from prdigest.store.deliveries import DeliveryRepository
from prdigest.store.digests import DigestRepository, StoredDigest
from prdigest.store.engine import HEAD_REVISION, open_engine, safe_url
from prdigest.store.locks import run_lock
from prdigest.store.records import RecordRepository, UpsertResult, content_hash
from prdigest.store.usage import UsageRepository

__all__ = [
    "HEAD_REVISION",
    "Store",
    "StoredDigest",
    "UpsertResult",
    "content_hash",
    "open_store",
]


class Store:
    """The repositories of one database. Create with :func:`open_store`."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.records = RecordRepository(engine)
        self.artefacts = ArtefactRepository(engine)
        self.usage = UsageRepository(engine)
        self.digests = DigestRepository(engine)
        self.deliveries = DeliveryRepository(engine)
        self.checkpoints = GitHubCheckpoints(engine)
        self.backfill = BackfillRepository(engine)

    def __repr__(self) -> str:
        return f"Store({safe_url(str(self._engine.url))})"

    @property
    def location(self) -> str:
        """Where the store is, for messages: a SQLite file's path, else the URL sans password."""
        url = self._engine.url
        if url.get_backend_name() == "sqlite":
            return url.database or ":memory:"
        return safe_url(url.render_as_string(hide_password=False))

    def lock(self, key: str, *, what: str | None = None) -> AbstractContextManager[None]:
        """Hold the run lock ``key`` (a repository name, ``site:DIR``) for a ``with`` block;
        :class:`~prdigest.core.errors.RunLockedError` when another process holds it."""
        return run_lock(self._engine, key, what=what or key)

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(target: str | Path, *, create_dirs: bool = False) -> Store:
    """Open the database at a path or SQLAlchemy URL, creating and migrating it as needed.

    A SQLite file's directory is created only with ``create_dirs`` (the default store)."""
    return Store(open_engine(target, create_dirs=create_dirs))

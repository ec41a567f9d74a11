"""One run at a time per store and repository.

A command that writes a repository's data (``sync``, ``run``, ``digest``, each repository of
``run-all``) holds that repository's lock while it works; a second one does not wait: it stops
at once with :class:`~prdigest.core.errors.RunLockedError` (exit 11), "another run of R is in
progress (pid P on HOST, since T)". The site build holds a lock of its own.

* SQLite: an exclusive ``flock`` on a small file beside the database
  (``<db>.lock-<hash of the key>``), holding the holder's pid, host and start time. The kernel
  releases it when the process ends, however it ends (a SIGKILL included), so a lock is never
  left behind.
* PostgreSQL: a session advisory lock on a connection of its own, held for the run; the server
  releases it when that connection closes or dies. The holder is told by the connection's
  ``application_name`` (``prdigest pid=… host=… since=…``).
* An in-memory SQLite database is private to its process: no lock is needed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import RunLockedError, StorageError
from prdigest.store.engine import describe


def _holder_now() -> dict[str, object]:
    since = datetime.now(UTC).replace(microsecond=0).isoformat()
    return {"pid": os.getpid(), "host": socket.gethostname(), "since": since}


def _who(holder: dict[str, object] | None) -> str:
    if not holder:
        return "holder unknown"
    pid, host, since = (holder.get(k, "?") for k in ("pid", "host", "since"))
    return f"pid {pid} on {host}, since {since}"


def _key_hash(key: str) -> bytes:
    return hashlib.sha256(f"prdigest-run:{key}".encode()).digest()


_HELD: set[tuple[str, str]] = set()  # (store, key) this process holds: taking one again nests


@contextmanager
def run_lock(engine: Engine, key: str, *, what: str) -> Iterator[None]:
    """Hold the lock named ``key`` (a repository, or ``site:DIR``); ``what`` names it in the
    message a second holder gets. Taking a lock this process already holds is a no-op."""
    ident = (str(engine.url), key)
    if ident in _HELD:
        yield
        return
    with _acquire(engine, key, what):
        _HELD.add(ident)
        try:
            yield
        finally:
            _HELD.discard(ident)


@contextmanager
def _acquire(engine: Engine, key: str, what: str) -> Iterator[None]:
    if engine.dialect.name == "sqlite":
        database = engine.url.database
        if not database or database == ":memory:":
            yield
            return
        with _file_lock(f"{database}.lock-{_key_hash(key).hex()[:16]}", what):
            yield
    elif engine.dialect.name == "postgresql":
        with _advisory_lock(engine, key, what):
            yield
    else:  # pragma: no cover - only SQLite and PostgreSQL are supported stores
        yield


@contextmanager
def _file_lock(path: str, what: str) -> Iterator[None]:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StorageError(f"cannot open the lock file {path}: {exc.strerror}") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLockedError(what, _who(_read_holder(fd))) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(_holder_now()).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _read_holder(fd: int) -> dict[str, object] | None:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _pg_key(key: str) -> int:
    return int.from_bytes(_key_hash(key)[:8], "big", signed=True)


@contextmanager
def _advisory_lock(engine: Engine, key: str, what: str) -> Iterator[None]:
    lock_key = _pg_key(key)
    holder = _holder_now()
    name = "prdigest " + " ".join(f"{k}={v}" for k, v in holder.items())
    try:
        conn = engine.connect()
    except SQLAlchemyError as exc:
        raise StorageError(f"cannot take the run lock of {what}: {describe(exc)}") from exc
    try:
        conn.execute(text("SELECT set_config('application_name', :name, false)"), {"name": name})
        got = conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": lock_key}).scalar()
        conn.commit()
        if not got:
            raise RunLockedError(what, _who(_pg_holder(conn, lock_key)))
        try:
            yield
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": lock_key})
            conn.commit()
    except SQLAlchemyError as exc:
        raise StorageError(f"cannot take the run lock of {what}: {describe(exc)}") from exc
    finally:
        conn.close()


def _pg_holder(conn: object, lock_key: int) -> dict[str, object] | None:
    unsigned = lock_key & 0xFFFFFFFFFFFFFFFF
    row = conn.execute(  # type: ignore[attr-defined]
        text(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = :hi AND l.objid = :lo "
            "AND l.objsubid = 1"
        ),
        {"hi": unsigned >> 32, "lo": unsigned & 0xFFFFFFFF},
    ).first()
    if row is None or not str(row[0]).startswith("prdigest "):
        return None
    pairs = (part.split("=", 1) for part in str(row[0]).split()[1:] if "=" in part)
    return {key: value for key, value in pairs}

"""A kill at any point of schema creation leaves a store that the next command opens.

Reproduces issue 14: a SIGKILL after two or more tables of a new SQLite store existed made every
later command fail with ``OperationalError`` (table already exists), because Python's sqlite3
committed before each ``CREATE TABLE``. Now creation and migrations are one transaction.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from itertools import count
from pathlib import Path

from sqlalchemy import create_engine, inspect

from prdigest.store import HEAD_REVISION, open_store
from prdigest.store.schema import metadata

from kill_support import kill_server
from pg_support import PgServer
from publish_support import fixture_record_data, write_jsonl
from reliability_report import record


def assert_complete(db: str) -> None:
    with open_store(db) as store:
        assert len(list(store.records.stream())) == len(fixture_record_data())
    engine = create_engine(db if "://" in db else f"sqlite:///{db}")
    try:
        names = set(inspect(engine).get_table_names())
        assert {t.name for t in metadata.sorted_tables} <= names
        with engine.connect() as conn:
            version = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
        assert version == HEAD_REVISION
    finally:
        engine.dispose()


def kill_during_creation(make_db: Callable[[], str], tmp_path: Path) -> int:
    """Kill ``import`` after each schema statement in turn; the next import must work."""
    records = write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    tried = 0
    with kill_server(tmp_path / "jobs") as server:
        # the store is named by PRDIGEST_DB: `--db` takes only a file path
        first, counts = server.counts(["import", str(records)], env={"PRDIGEST_DB": make_db()})
        assert first.status == 0, first.stderr
        total = counts["ddl"]
        assert total >= len(metadata.sorted_tables)  # one statement per table, at least
        for point in range(1, total + 1):
            db = make_db()
            env = {"PRDIGEST_DB": db}
            killed = server.run(f"ddl:{point}", ["import", str(records)], env=env)
            assert killed.status == -signal.SIGKILL, killed.stderr
            again, _ = server.counts(["import", str(records)], env=env)
            assert again.status == 0, f"killed after DDL statement {point}: {again.stderr}"
            assert_complete(db)
            tried += 1
    return tried


def test_kill_at_every_schema_statement_sqlite(tmp_path: Path) -> None:
    names = count()
    tried = kill_during_creation(lambda: str(tmp_path / f"s{next(names)}.sqlite3"), tmp_path)
    record("import killed after each schema statement (SQLite)", tried, tried)
    assert tried >= len(metadata.sorted_tables)


def test_kill_at_every_schema_statement_postgresql(pg_server: PgServer, tmp_path: Path) -> None:
    tried = kill_during_creation(pg_server.create_database, tmp_path)
    record("import killed after each schema statement (PostgreSQL)", tried, tried)
    assert tried >= len(metadata.sorted_tables)


def test_missing_db_directory_is_an_error_not_a_new_tree(tmp_path: Path) -> None:
    target = tmp_path / "nonexistent" / "dir" / "x.db"
    done = subprocess.run(
        [sys.executable, "-m", "prdigest", "export", "--db", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 4
    assert "does not exist" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "nonexistent").exists()


def test_store_error_names_the_cause(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    done = subprocess.run(
        [sys.executable, "-m", "prdigest", "export", "--db", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 4
    line = done.stderr.strip().splitlines()[-1]
    assert "DatabaseError: file is not a database" in line, line

"""Two and four ``run-all`` processes at once on one store, and two ``sync`` from GitHub at once:
SQLite file and PostgreSQL database.

Reproduces issue 14: the second of two runs died with ``IntegrityError`` (exit 10) and still
built a site; a second ``sync`` died with ``OperationalError`` or ``IntegrityError``. Now each run
either does the work or stops with "another run of R is in progress" (exit 11); the store ends
complete, with one digest, and the chat message went out once.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prdigest.store import open_store

from fakegithub import FakeClock, FakeGitHub, window_records
from pg_support import PgServer
from publish_support import REPO, fixture_record_data, receiver, write_jsonl
from reliability_report import record

CONFIG = """{db_line}
[site]
dir = "public"

[[repos]]
name = "{repo}"
path = "prs.jsonl"

[channels.team]
type = "feishu"
webhook_env = "PRD_CONC_FEISHU_URL"
"""


def at_once(
    args: list[str], count: int, cwd: Path, env: dict[str, str]
) -> list[tuple[int, str, str]]:
    """``count`` processes of ``python -m prdigest ARGS`` started together; each one's exit code,
    stdout and stderr."""
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "prdigest", *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    results = []
    for run in runs:
        out, err = run.communicate(timeout=600)
        results.append((run.returncode, out, err))
    return results


def concurrent_runs(workdir: Path, db: str, count: int, hook_url: str) -> list[tuple[int, str]]:
    db_line = f'db = "{db}"' if "://" not in db else ""
    (workdir / "prdigest.toml").write_text(CONFIG.format(db_line=db_line, repo=REPO))
    env = {**os.environ, "PRD_CONC_FEISHU_URL": hook_url}
    if "://" in db:
        env["PRDIGEST_DB"] = db
    results = at_once(["run-all", "--date", "2026-06-10"], count, workdir, env)
    return [(code, err) for code, _, err in results]


def check(tmp_path: Path, make_db: object, backend: str) -> None:
    tried = survived = 0
    for count in (2, 4):
        workdir = tmp_path / f"{backend}{count}"
        workdir.mkdir()
        write_jsonl(workdir / "prs.jsonl", fixture_record_data())
        db = make_db(workdir)  # type: ignore[operator]
        with receiver() as hook:
            results = concurrent_runs(workdir, db, count, f"{hook.url}/hook")
            final = concurrent_runs(workdir, db, 1, f"{hook.url}/hook")
            posts = len(hook.requests)
        for code, err in results:
            tried += 1
            assert code in (0, 11), err
            assert "Traceback" not in err
            if code == 11:
                assert f"another run of {REPO} is in progress (pid " in err
            survived += 1
        assert any(code == 0 for code, _ in results), results
        assert final[0][0] == 0, final[0][1]
        target = db if "://" in db else str(workdir / db)
        with open_store(target) as store:
            assert len(list(store.records.stream(REPO))) == len(fixture_record_data())
            assert len(store.digests.query(REPO)) == 1
        assert posts == 1  # however many runs raced, the channel got the digest once
    record(f"concurrent runs on one store ({backend})", tried, survived)


@pytest.mark.slow
def test_concurrent_runs_on_one_sqlite_file(tmp_path: Path) -> None:
    check(tmp_path, lambda workdir: "state.sqlite3", "SQLite")


@pytest.mark.slow
def test_concurrent_runs_on_one_postgresql_database(pg_server: PgServer, tmp_path: Path) -> None:
    check(tmp_path, lambda workdir: pg_server.create_database(), "PostgreSQL")


SYNCED = window_records(12)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["SQLite", "PostgreSQL"])
def test_two_syncs_at_once_from_github(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = str(tmp_path / "s.sqlite3") if backend == "SQLite" else request.getfixturevalue("pg_url")
    with FakeGitHub(SYNCED, clock=FakeClock(1_781_000_000.0)) as github:
        env = {
            **os.environ,
            "GITHUB_TOKEN": github.token,
            "GITHUB_API_URL": github.url,
            "GITHUB_GRAPHQL_URL": github.graphql_url,
        }
        args = ["sync", "--repo", REPO, "--date", "2026-06-10", "--tz", "UTC", "--db", db]
        results = at_once(args, 2, tmp_path, env)
        [(last, _, summary)] = at_once(args, 1, tmp_path, env)
    for code, _, err in results:
        assert code in (0, 11), err
        assert "Traceback" not in err and "Error" not in err.replace("Error: another run", "")
    assert any(code == 0 for code, _, _ in results), results
    count = len(SYNCED)  # the run after them finds every PR stored (its summary is on stderr)
    assert last == 0 and f"{count} PRs listed, 0 stored, {count} unchanged" in summary, summary
    with open_store(db) as store:
        assert sorted(pr.number for pr in store.records.stream(REPO)) == sorted(
            r["number"] for r in SYNCED
        )
    record(f"concurrent runs on one store ({backend})", len(results), len(results))


def _open_new_store(path: str, start: Any, results: Any) -> None:
    from prdigest.core.errors import StorageError
    from prdigest.store.engine import open_engine

    start.wait()
    try:
        open_engine(path).dispose()
        results.put("ok")
    except StorageError as exc:
        results.put(str(exc))


@pytest.mark.slow
def test_processes_opening_one_new_sqlite_file_at_once(tmp_path: Path) -> None:
    """Four processes create one new store together, 40 times over. Without taking turns, about
    one round in 25 failed: switching a new file to WAL answers "database is locked" at once,
    whatever the busy timeout, when another process is switching it too."""
    context = multiprocessing.get_context("fork")  # a forked worker needs no second import
    failures = []
    for round_number in range(40):
        path = str(tmp_path / f"new{round_number}.sqlite3")
        start, results = context.Barrier(4), context.Queue()
        workers = [
            context.Process(target=_open_new_store, args=(path, start, results)) for _ in range(4)
        ]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=600) for _ in workers]
        for worker in workers:
            worker.join()
        failures += [outcome for outcome in outcomes if outcome != "ok"]
    assert failures == []

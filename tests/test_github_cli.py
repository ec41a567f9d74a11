"""``prdigest sync`` and ``prdigest run`` against the fake GitHub: output, messages, exit codes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from prdigest.store import open_store

from cli_support import run_args as run_cli
from fakegithub import REPO, FakeClock, FakeGitHub, window_records

WINDOW = ["--since", "2026-06-10T00:00:00Z", "--until", "2026-06-11T00:00:00Z"]
RECORDS = window_records(12)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    with FakeGitHub(RECORDS, clock=FakeClock(time.time())) as server:
        monkeypatch.setenv("GITHUB_TOKEN", server.token)
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("GITHUB_GRAPHQL_URL", server.graphql_url)
        yield server


def test_sync_prints_a_summary(fake, tmp_path, capsys):
    code, out, err = run_cli(
        ["sync", "--repo", REPO, *WINDOW, "--db", str(tmp_path / "d.db")], capsys
    )
    assert code == 0 and out == ""
    assert err.startswith(f"synced {REPO}: 12 PRs listed, 12 stored, 0 unchanged (complete); ")
    assert f"; {len(fake.seen)} requests; rate limit left: core " in err
    assert "graphql " in err


def test_run_syncs_then_writes_the_digest(fake, tmp_path, capsys):
    db = tmp_path / "d.db"
    code, out, err = run_cli(["run", "--repo", REPO, *WINDOW, "--db", str(db)], capsys)
    assert code == 0
    assert out.startswith(f"{REPO}\n\n")  # the text digest layout
    assert "12 PRs listed" in err
    code, markdown, err = run_cli(
        ["run", "--repo", REPO, *WINDOW, "--db", str(db), "--format", "markdown"], capsys
    )
    assert code == 0 and "0 stored, 12 unchanged" in err and "#" in markdown


def test_gh_token_is_accepted_too(fake, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.setenv("GH_TOKEN", fake.token)
    code, _, _ = run_cli(["sync", "--repo", REPO, *WINDOW, "--db", str(tmp_path / "d.db")], capsys)
    assert code == 0


@pytest.mark.parametrize(
    ("setup", "code", "message"),
    [
        ("no-token", 7, "Error: no GitHub token: set GITHUB_TOKEN (or GH_TOKEN)"),
        ("bad-token", 7, "Error: GitHub rejected the token (401 Bad credentials)"),
        ("no-access", 7, "Error: GitHub refused access to /graphql (403 Resource not accessible"),
        ("no-repo", 6, "Error: repository vllm-project/nothing not found, or the token cannot"),
        ("bad-repo", 2, "Error: --repo: expected owner/name"),
        ("far-limit", 8, "Error: GitHub rate limit exhausted (resume after "),
    ],
)
def test_failures_give_one_clear_line_and_an_exit_code(
    fake, tmp_path, capsys, monkeypatch, setup, code, message
):
    repo = REPO
    if setup == "no-token":
        monkeypatch.delenv("GITHUB_TOKEN")
    elif setup == "bad-token":
        monkeypatch.setenv("GITHUB_TOKEN", "ghp_wrong")
    elif setup == "no-access":
        fake.inject("graphql", "status", status=403)
    elif setup == "no-repo":
        repo = "vllm-project/nothing"
    elif setup == "bad-repo":
        repo = "not a repo"
    elif setup == "far-limit":
        fake.inject("graphql:list", "primary", reset_in=7200)
    got, out, err = run_cli(
        ["sync", "--repo", repo, *WINDOW, "--db", str(tmp_path / "d.db")], capsys
    )
    assert got == code
    assert out == ""
    assert err.splitlines() == [err.strip()]  # exactly one line
    assert err.startswith(message)
    assert "ghp_" not in err and fake.token not in err


def test_a_stop_after_the_listing_prints_the_summary_then_the_error(fake, tmp_path, capsys):
    fake.inject("diff", "primary", reset_in=7200, skip=5)
    code, _, err = run_cli(
        ["sync", "--repo", REPO, *WINDOW, "--db", str(tmp_path / "d.db"), "--max-wait", "60"],
        capsys,
    )
    summary, error = err.splitlines()
    assert code == 8
    assert summary.startswith(f"synced {REPO}: 12 PRs listed, 5 stored, 0 unchanged (incomplete)")
    assert error.startswith("Error: GitHub rate limit exhausted (resume after ")


@pytest.mark.slow
def test_killed_process_resumes_without_refetching(tmp_path, capsys):
    """A real ``kill -9`` of a sync in progress; the next run completes the window."""
    records = window_records(40)
    db = tmp_path / "kill.db"
    with FakeGitHub(records, clock=FakeClock(time.time())) as fake:
        # the 13th diff and later are held back: the sync stops after exactly 12 PRs, however
        # loaded the machine, and is killed there
        fake.inject("diff", "slow", delay=600.0, times=999, skip=12)
        env = {
            **os.environ,
            "GITHUB_TOKEN": fake.token,
            "GITHUB_API_URL": fake.url,
            "GITHUB_GRAPHQL_URL": fake.graphql_url,
        }
        process = subprocess.Popen(
            [sys.executable, "-m", "prdigest", "sync", "--repo", REPO, *WINDOW, "--db", str(db)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while _stored(db) < 12 and time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.05)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        kept_numbers = _stored_numbers(db)
        kept = len(kept_numbers)
        assert 12 <= kept < 40, "the kill did not land mid-way"
        fake.clear_faults()
        before = len(fake.seen)
        code, _, err = run_cli_env(["sync", "--repo", REPO, *WINDOW, "--db", str(db)], fake, capsys)
        again = {n for s in fake.seen[before:] if s.category != "graphql:list" for n in s.numbers}
    assert code == 0 and f"{40 - kept} stored, {kept} unchanged (complete)" in err
    store = open_store(db)
    numbers = [pr.number for pr in store.records.stream(REPO)]
    store.close()
    assert sorted(numbers) == sorted(r["number"] for r in records)  # none lost, none twice
    assert again and not again & kept_numbers  # nothing stored was fetched again


def run_cli_env(args: list[str], fake: FakeGitHub, capsys: Any) -> tuple[int, str, str]:
    saved = {k: os.environ.get(k) for k in ("GITHUB_TOKEN", "GITHUB_API_URL", "GITHUB_GRAPHQL_URL")}
    os.environ.update(
        GITHUB_TOKEN=fake.token, GITHUB_API_URL=fake.url, GITHUB_GRAPHQL_URL=fake.graphql_url
    )
    try:
        return run_cli(args, capsys)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _stored(db: Path) -> int:
    return len(_stored_numbers(db))


def _stored_numbers(db: Path) -> set[int]:
    if not db.exists():
        return set()
    try:
        with closing(sqlite3.connect(db, timeout=1)) as conn:
            return {n for (n,) in conn.execute("SELECT number FROM pull_requests")}
    except sqlite3.OperationalError:  # not migrated yet
        return set()

"""Backfill: every day once, resumable, split between workers by row claims (SQLite and
PostgreSQL), and the command end to end."""

from __future__ import annotations

import threading
from datetime import date, timedelta
from pathlib import Path

import pytest

from git_helpers import ScriptedRepo
from prdigest.cli import main
from prdigest.core.records import PullRequest
from prdigest.pipeline.backfill import BackfillOptions, DayDone, backfill
from prdigest.pipeline.registry import SourceSpec
from prdigest.store import Store, open_store
from prdigest.store.backfill import DONE, Job
from prdigest.write.template import TemplateWriter

from conftest import REPO, make_pr

TZ = "UTC"


@pytest.fixture
def store(any_store: Store) -> Store:
    return any_store


def _records(days: int, per_day: int = 3) -> list[PullRequest]:
    return [
        make_pr(
            100 + d * per_day + i,
            title=f"[Bugfix] Fix case {d}-{i}",
            merged_at=f"2026-03-{d + 1:02d}T{i + 1:02d}:00:00Z",
        )
        for d in range(days)
        for i in range(per_day)
    ]


def _options(worker: str, days: int = 6, **extra: object) -> BackfillOptions:
    return BackfillOptions(
        repo=REPO,
        since=date(2026, 3, 1),
        until=date(2026, 3, 1) + timedelta(days=days),
        tz=TZ,
        worker=worker,
        **extra,  # type: ignore[arg-type]
    )


def test_every_day_is_digested_and_a_rerun_has_nothing_left(store: Store) -> None:
    store.records.upsert(_records(5))  # the sixth day is empty
    seen: list[DayDone] = []
    report = backfill(store, _options("w1"), TemplateWriter(), {}, seen.append)
    assert report.days == [f"2026-03-0{d}" for d in range(1, 7)]
    assert report.progress is not None and report.progress.done == 6
    assert [d.prs for d in seen] == [3, 3, 3, 3, 3, 0]
    assert seen[-1].eta_s is not None and seen[0].progress.done == 1
    labels = {d.label for d in store.digests.query(REPO)}
    assert labels == {f"2026-03-0{d}" for d in range(1, 6)}  # the empty day stores no digest
    again = backfill(store, _options("w2"), TemplateWriter(), {})
    assert again.days == [] and again.progress is not None and again.progress.done == 6


def test_a_dead_workers_day_is_taken_again(store: Store) -> None:
    store.records.upsert(_records(2))
    job = Job(REPO, TZ, "zh")
    store.backfill.plan(job, ["2026-03-01", "2026-03-02"])
    stuck = store.backfill.claim(job, "dead", timedelta(hours=1))
    assert stuck is not None and stuck.day == "2026-03-01"
    other = backfill(store, _options("alive", days=2), TemplateWriter(), {})
    assert other.days == ["2026-03-02"]  # the live lease is respected
    same = backfill(store, _options("dead", days=2), TemplateWriter(), {})
    assert same.days == ["2026-03-01"]  # its worker, started again, takes it back at once
    stuck_again = store.backfill.plan(job, ["2026-03-03"])
    assert stuck_again == 1
    store.backfill.claim(job, "dead", timedelta(hours=1))
    late = backfill(store, _options("late", days=3, lease=timedelta(0)), TemplateWriter(), {})
    assert late.days == ["2026-03-03"]  # an expired lease frees the day


def _race(target: str, workers: int, days: int) -> list[list[str]]:
    results: list[list[str]] = [[] for _ in range(workers)]
    errors: list[BaseException] = []
    start = threading.Barrier(workers)

    def work(index: int) -> None:
        try:
            with open_store(target) as mine:
                start.wait()
                report = backfill(mine, _options(f"w{index}", days=days), TemplateWriter(), {})
                results[index] = report.days
        except BaseException as exc:  # reported below: a thread's failure fails the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    return results


def test_workers_split_the_days_without_duplicates(any_store: Store, tmp_path: Path) -> None:
    any_store.records.upsert(_records(12, per_day=2))
    target = str(any_store._engine.url.render_as_string(hide_password=False))
    results = _race(target, workers=4, days=12)
    every = [day for days in results for day in days]
    assert sorted(every) == [(date(2026, 3, 1) + timedelta(days=n)).isoformat() for n in range(12)]
    assert len(every) == len(set(every))  # zero duplicates
    job = Job(REPO, TZ, "zh")
    progress = any_store.backfill.progress(job)
    assert (progress.done, progress.failed, progress.claimed) == (12, 0, 0)
    with any_store._engine.connect() as conn:
        from sqlalchemy import select

        from prdigest.store import schema

        t = schema.backfill_days
        attempts = conn.execute(select(t.c.attempts).where(t.c.status == DONE)).scalars().all()
    assert set(attempts) == {1}  # no day was claimed twice


def test_backfill_command_syncs_each_day_from_a_clone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = ScriptedRepo(tmp_path / "clone")
    for day, number in ((1, 11), (1, 12), (3, 13)):
        repo.write(f"src/m{number}.py", f"def f{number}():\n    return {number}\n")
        repo.commit(f"Fix the loader {number} (#{number})", f"2026-03-0{day}T05:00:00+00:00")
    db = str(tmp_path / "b.sqlite3")
    argv = ["backfill", "-r", REPO, "--since", "2026-03-01", "--until", "2026-03-04",
            "--tz", TZ, "--git", str(repo.path), "--db", db, "--worker", "one"]  # fmt: skip
    try:
        main(argv)
    except SystemExit as exc:
        assert exc.code in (0, None)
    out, err = capsys.readouterr()
    assert f"backfill {REPO} 2026-03-01..2026-03-04 (UTC): 3/3 day(s) done, 3 by this worker" in out
    assert (
        "2026-03-01: 2 PR(s)" in err and "2026-03-02: 0 PR(s)" in err and "3/3 day(s) done" in err
    )
    with open_store(db) as store:
        assert {d.label for d in store.digests.query(REPO)} == {"2026-03-01", "2026-03-03"}
    main(argv)  # a second run finds every day done
    out, _ = capsys.readouterr()
    assert "3/3 day(s) done, 0 by this worker" in out


def test_backfill_source_spec_is_the_sync_one() -> None:
    spec = SourceSpec(repo=REPO, source="git", path=Path("."))
    assert _options("x", source=spec).source is spec

"""The streamed digest: batches, what a cached re-run reads, and the batched store beneath it."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import column, create_engine, insert, select, table
from sqlalchemy.sql.expression import TableClause

from prdigest.core.models import ANALYZER_VERSION, Digest, Dossier, Entry
from prdigest.core.records import PullRequest
from prdigest.core.window import day_window
from prdigest.pipeline import digest as stage
from prdigest.pipeline.digest import DigestOptions, build_digest, run_digest
from prdigest.render import render
from prdigest.store import Store, content_hash, open_store, schema
from prdigest.write import BatchResult, Lang, WriteRequest
from prdigest.write.template import TemplateWriter

from conftest import DAY_A, REPO, make_pr

OPTIONS = DigestOptions(repo=REPO, window=day_window(DAY_A), top=4)


class CountingWriter:
    """The template writer, counting what it is asked to write, per batch."""

    def __init__(self, fail_on_batch: int | None = None) -> None:
        self.batches: list[list[int]] = []
        self.fail_on_batch = fail_on_batch
        self.template = TemplateWriter()

    @property
    def key(self) -> str:
        return self.template.key

    def write_batch(self, requests: Sequence[WriteRequest], *, lang: Lang) -> BatchResult:
        self.batches.append([r.dossier.number for r in requests])
        if self.fail_on_batch is not None and len(self.batches) == self.fail_on_batch:
            raise RuntimeError("writer stopped")
        return self.template.write_batch(requests, lang=lang)


@pytest.fixture
def store(any_store: Store) -> Store:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_store


def _day_records(count: int) -> list[PullRequest]:
    return [
        make_pr(
            1000 + i,
            title=f"[Bugfix] Fix the scheduler path {i}",
            merged_at=f"2026-06-10T{(i % 12) + 1:02d}:{i % 60:02d}:00+08:00",
            files=[
                {
                    "path": f"vllm/v1/core/sched_{i}.py",
                    "status": "modified",
                    "additions": 2,
                    "deletions": 1,
                    "patch": f"@@ -1,2 +1,3 @@ def schedule_{i}(self):\n-    x = 1\n+    x = 2\n+    y = 3\n     return x",
                }
            ],
        )
        for i in range(count)
    ]


def test_small_batches_give_the_same_digest(
    loaded_store: Store, tmp_path: Path, records: list[PullRequest], monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = render(build_digest(loaded_store, OPTIONS, TemplateWriter()), "json")
    monkeypatch.setattr(stage, "BATCH", 3)
    monkeypatch.setattr(stage, "WRITE_BATCH", 2)
    with open_store(tmp_path / "small.sqlite3") as store:
        store.records.upsert(records)
        writer = CountingWriter()
        batched = render(build_digest(store, OPTIONS, writer), "json")
    assert batched == whole
    assert len(writer.batches) > 1 and max(len(b) for b in writer.batches) <= 2


def test_cached_rerun_reads_no_record_and_writes_nothing(
    loaded_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = render(build_digest(loaded_store, OPTIONS, TemplateWriter()), "json")

    def no_records(repo: str, numbers: object) -> dict[int, PullRequest]:
        raise AssertionError("a cached re-run must not read records")

    monkeypatch.setattr(loaded_store.records, "load", no_records)
    monkeypatch.setattr(
        loaded_store.artefacts,
        "dossiers_of",
        lambda *a: pytest.fail("a cached re-run must not read dossiers"),
    )
    writer = CountingWriter()
    again = run_digest(loaded_store, OPTIONS, writer)
    assert writer.batches == [] and again.written == 0
    assert render(again.digest, "json") == first


def test_a_stopped_run_keeps_the_batches_it_finished(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.records.upsert(_day_records(7))
    monkeypatch.setattr(stage, "BATCH", 3)
    monkeypatch.setattr(stage, "WRITE_BATCH", 3)
    with pytest.raises(RuntimeError, match="writer stopped"):
        build_digest(store, OPTIONS, CountingWriter(fail_on_batch=2))
    window = OPTIONS.window
    triaged = list(
        store.artefacts.window_triaged(
            REPO, window.since, window.until, ANALYZER_VERSION, _preset_key(), _triage()
        )
    )
    assert len(triaged) == 7  # every triage batch was stored before writing began
    rerun = CountingWriter()
    build_digest(store, OPTIONS, rerun)
    assert sum(len(b) for b in rerun.batches) == 4  # the first write batch (3) was kept


def _preset_key() -> str:
    from prdigest.core.presets import load_preset

    return load_preset(REPO).key


def _triage() -> str:
    from prdigest.triage import triage_version

    return triage_version()


def test_changed_record_is_triaged_again_alone(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    prs = _day_records(5)
    store.records.upsert(prs)
    build_digest(store, OPTIONS, TemplateWriter())
    store.records.upsert([prs[2].model_copy(update={"title": "[Perf] Faster path"})])
    loaded: list[list[int]] = []
    original = store.records.load

    def spy(repo: str, numbers: Sequence[int]) -> dict[int, PullRequest]:
        loaded.append(sorted(numbers))
        return original(repo, numbers)

    monkeypatch.setattr(store.records, "load", spy)
    digest = build_digest(store, OPTIONS, TemplateWriter())
    assert loaded[0] == [prs[2].number]  # triage read only the changed record
    titles = {i.pr.number: i.pr.title for i in digest.all_items()}
    assert titles[prs[2].number] == "[Perf] Faster path"


def test_put_all_replaces_in_one_batch(store: Store, records: list[PullRequest]) -> None:
    pr = records[0]
    store.records.upsert([pr])
    one = Entry(repo=pr.repo, number=pr.number, lang="zh", title="一", paragraph=None, writer="t")
    two = one.model_copy(update={"title": "二"})
    other = one.model_copy(update={"title": "三"})
    digest = content_hash(pr)
    store.artefacts.put_all("p", "a", entries=[(one, "k1", digest), (other, "k2", digest)])
    store.artefacts.put_all("p", "a", entries=[(one, "k1", digest), (two, "k1", digest)])
    assert store.artefacts.get_entry(pr.repo, pr.number, "k1") == two  # the later row wins
    assert store.artefacts.get_entry(pr.repo, pr.number, "k2") == other  # other keys stay
    window = day_window(pr.merged_at.date().isoformat(), "UTC")
    assert store.artefacts.window_entries(
        pr.repo, window.since, window.until, {pr.number: "k2"}
    ) == {pr.number: other.model_dump_json()}


def test_upsert_counts_and_stores_many_in_one_go(store: Store) -> None:
    prs = _day_records(30)
    first = store.records.upsert(prs)
    assert (first.new, first.updated, first.unchanged) == (30, 0, 0)
    changed = [p.model_copy(update={"title": p.title + "!"}) for p in prs[:10]]
    again = store.records.upsert([*changed, *prs[10:], changed[0]])
    assert (again.new, again.updated, again.unchanged) == (0, 10, 21)
    assert store.records.get(REPO, prs[0].number).title.endswith("!")
    window = OPTIONS.window
    assert [n for n, _ in store.records.window_hashes(REPO, window.since, window.until)] == sorted(
        (p.number for p in prs), key=lambda n: (prs[n - 1000].merged_at, n)
    )
    sha = "ab" * 20
    store.records.upsert([make_pr(77, merge_commit_sha=sha)])
    assert store.records.stored_merge_commits(REPO, [sha, "cd" * 20]) == {sha: 77}


def test_migration_0006_fills_merge_commits_of_stored_records(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    config = Config()
    config.set_main_option(
        "script_location", str(resources.files("prdigest.store").joinpath("migrations"))
    )
    pr = make_pr(5, merge_commit_sha="f" * 40)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0005")
        row = {
            "repo": pr.repo,
            "number": pr.number,
            "title": pr.title,
            "merged_at": pr.merged_at.replace(tzinfo=None),
            "source": "jsonl",
            "content_hash": content_hash(pr),
            "record": json.dumps(pr.to_json_dict()),
            "stored_at": pr.merged_at.replace(tzinfo=None),
        }
        conn.execute(insert(_old_columns()), row)
    engine.dispose()
    with open_store(tmp_path / "old.sqlite3") as store:
        assert store.records.stored_merge_commits(REPO, ["f" * 40]) == {"f" * 40: 5}
    engine = create_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    with engine.connect() as conn:
        heads = conn.execute(select(schema.assessments.c.head)).all()
    engine.dispose()
    assert heads == []


def _old_columns() -> TableClause:
    """The pull_requests columns a 0005 store had (no merge_commit_sha)."""
    names = ["repo", "number", "title", "merged_at", "source", "content_hash", "record"]
    return table("pull_requests", *(column(n) for n in [*names, "stored_at"]))


def _live(kind: type, numbers: range = range(1000, 1012)) -> set[int]:
    """Which of ``numbers`` (the PRs of ``_day_records(12)``; other tests' fixtures hold their
    own) have a ``kind`` object (dossier, record) still alive after a collection."""
    gc.collect()
    return {o.number for o in gc.get_objects() if isinstance(o, kind) and o.number in numbers}


def test_no_dossier_or_record_outlives_its_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a batch is what is read between two progress reports (each triage or write batch ends
    # with one): when the store is read, only that batch's dossiers and records may be alive,
    # and none at all when a batch has ended
    monkeypatch.setattr(stage, "BATCH", 3)
    monkeypatch.setattr(stage, "WRITE_BATCH", 3)
    batch: set[int] = set()
    strays: list[set[int]] = []  # per read or report: the PRs of other batches still held

    def alive() -> set[int]:
        return _live(Dossier) | _live(PullRequest)

    def spying(read: Callable[..., Any]) -> Callable[..., Any]:
        def spy(repo: str, numbers: Sequence[int], *rest: str) -> Any:
            batch.update(numbers)
            strays.append(alive() - batch)
            return read(repo, numbers, *rest)

        return spy

    def report(done: int, total: int) -> None:
        strays.append(alive())
        batch.clear()

    with open_store(tmp_path / "loop.sqlite3") as store:
        store.records.upsert(_day_records(12))
        monkeypatch.setattr(store.records, "load", spying(store.records.load))
        monkeypatch.setattr(store.artefacts, "dossiers_of", spying(store.artefacts.dossiers_of))
        run = run_digest(store, OPTIONS, TemplateWriter(), progress=report)
        assert run.digest.total == 12 and run.written == 12
    # 4 triage and 4 write batches, two reads each; a report after each and 3 more
    assert len(strays) == 16 + 8 + 3
    assert strays == [set()] * len(strays)


def test_the_records_held_per_pr_have_no_instance_dict(loaded_store: Store) -> None:
    # a digest holds a head, a verdict with its reasons, an entry and an item per PR of its
    # window: slotted records (docs/scale.md), with a model's JSON
    digest = build_digest(loaded_store, OPTIONS, TemplateWriter())
    items = digest.all_items()
    held = [o for i in items for o in (i, i.pr, i.assessment, i.entry, *i.assessment.reasons)]
    assert len(items) > 5 and not [o for o in held if hasattr(o, "__dict__")]
    assert Digest.model_validate_json(digest.model_dump_json()) == digest
    verdict = json.loads(items[0].assessment.model_dump_json())  # the JSON a model gave
    assert list(verdict) == [
        "repo",
        "number",
        "level",
        "score",
        "reasons",
        "audience",
        "area",
        "triage_version",
    ]
    assert verdict["reasons"] and all(
        list(r) == ["code", "detail", "weight"] for r in verdict["reasons"]
    )

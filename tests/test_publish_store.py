"""Migration 0004 and the store's digest and delivery tables."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from prdigest.core.models import Digest
from prdigest.store import HEAD_REVISION, open_store, schema
from prdigest.store.digests import digest_hash

from publish_support import REPO, fixture_store, make_digest


def test_head_revision_is_alembics_head() -> None:
    config = Config()
    config.set_main_option(
        "script_location", str(resources.files("prdigest.store").joinpath("migrations"))
    )
    assert ScriptDirectory.from_config(config).get_heads() == [HEAD_REVISION]


def test_migrated_tables_match_the_schema(tmp_path: Path) -> None:
    open_store(tmp_path / "db.sqlite3").close()
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    inspector = inspect(engine)
    for table in (schema.digests, schema.deliveries):
        columns = {c["name"] for c in inspector.get_columns(table.name)}
        assert columns == {c.name for c in table.columns}
        indexes = {i["name"] for i in inspector.get_indexes(table.name)}
        assert indexes == {i.name for i in table.indexes}
    engine.dispose()


def test_put_digest_is_idempotent_and_round_trips(tmp_path: Path) -> None:
    with fixture_store(tmp_path / "db.sqlite3") as store:
        digest = make_digest(store, "2026-06-10")
        first = store.digests.put(digest)
        assert first.changed and first.total == digest.total
        assert first.counts == digest.counts and first.content_hash == digest_hash(digest)
        second = store.digests.put(digest)
        assert not second.changed and second.updated_at == first.updated_at
        loaded = store.digests.load(REPO, "2026-06-10", "zh")
        assert isinstance(loaded, Digest) and loaded == digest
        smaller = make_digest(store, "2026-06-10", top=2)
        third = store.digests.put(smaller)
        assert third.changed and third.content_hash != first.content_hash
        assert third.created_at == first.created_at
        assert [m.label for m in store.digests.query()] == ["2026-06-10"]


def test_list_digests_newest_first(tmp_path: Path) -> None:
    with fixture_store(tmp_path / "db.sqlite3") as store:
        for day in ("2026-06-10", "2026-06-11", "2026-06-09"):
            store.digests.put(make_digest(store, day))
        assert [m.label for m in store.digests.query(REPO)] == [
            "2026-06-11",
            "2026-06-10",
            "2026-06-09",
        ]
        assert store.digests.query("other/repo") == []


def test_delivery_log_counts_attempts(tmp_path: Path) -> None:
    with fixture_store(tmp_path / "db.sqlite3") as store:
        stored = store.digests.put(make_digest(store, "2026-06-10"))
        assert store.deliveries.get("team", REPO, "2026-06-10", "zh") is None
        failed = store.deliveries.record("team", stored, ok=False, error="HTTP 500")
        assert (failed.status, failed.attempts, failed.last_error) == ("failed", 1, "HTTP 500")
        assert [r.channel for r in store.deliveries.query(status="failed")] == ["team"]
        sent = store.deliveries.record("team", stored, ok=True)
        assert (sent.status, sent.attempts, sent.last_error) == ("sent", 2, None)
        assert store.deliveries.query(status="failed") == []

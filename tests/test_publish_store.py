"""Migrations 0004 and 0005 and the store's digest and delivery tables."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from prdigest.core.models import Digest
from prdigest.core.presets import load_preset
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


def _as_stored_before_0005(digest: Digest, names: dict[str, tuple[str, str]]) -> str:
    """The JSON a 0004 store held for ``digest``: area names (zh, en) instead of area ids."""
    data = json.loads(digest.model_dump_json())
    data.pop("areas")

    def old_item(item: dict[str, Any]) -> None:
        area = item["pr"]["area"]
        zh, en = names[area] if area else (None, None)
        item["pr"].update(area=zh, area_en=en)
        focused = item["assessment"]["audience"] is not None
        item["assessment"].update(
            area=zh,
            area_en=en,
            audience="读者" if focused else None,
            audience_en="readers" if focused else None,
        )

    for item in data["selected"]:
        old_item(item)
    for group in data["others"]:
        group["area"] = group.pop("name")
        for item in group["items"]:
            old_item(item)
    return json.dumps(data, ensure_ascii=False)


def test_migration_0005_turns_stored_area_names_into_ids(tmp_path: Path) -> None:
    from alembic import command
    from sqlalchemy import insert

    with fixture_store(tmp_path / "new.sqlite3") as store:
        digest = make_digest(store, "2026-06-10")
    preset = load_preset(REPO)
    names = {a.id: (a.text("zh").name, a.text("en").name) for a in preset.area}
    old_payload = _as_stored_before_0005(digest, names)
    engine = create_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    config = Config()
    config.set_main_option(
        "script_location", str(resources.files("prdigest.store").joinpath("migrations"))
    )
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0004")
        conn.execute(
            insert(schema.digests).values(
                repo=REPO,
                label=digest.window.label,
                lang="zh",
                tz=digest.window.tz,
                since=digest.window.since.replace(tzinfo=None),
                until=digest.window.until.replace(tzinfo=None),
                content_hash="old",
                total=digest.total,
                counts="{}",
                payload=old_payload,
                created_at=digest.window.until.replace(tzinfo=None),
                updated_at=digest.window.until.replace(tzinfo=None),
            )
        )
    engine.dispose()
    with open_store(tmp_path / "old.sqlite3") as store:  # migrates to the head
        migrated = store.digests.load(REPO, digest.window.label, "zh")
    by_number = {i.pr.number: i for i in migrated.all_items()}
    for item in digest.all_items():
        old = by_number[item.pr.number]
        zh = names[item.pr.area][0] if item.pr.area else None
        assert migrated.area_name(old.pr.area) == zh
        assert (old.assessment.audience is None) == (item.assessment.audience is None)
    assert [g.name for g in migrated.others] == [g.name for g in digest.others]

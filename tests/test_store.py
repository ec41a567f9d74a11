"""The store: migrations, idempotent upserts, windows, versioned artefacts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from prdigest.analyze import analyze
from prdigest.core.errors import NotFoundError, StorageError
from prdigest.core.models import ANALYZER_VERSION
from prdigest.core.presets import Preset
from prdigest.core.records import PullRequest
from prdigest.store import HEAD_REVISION, Store, content_hash, open_store
from prdigest.store.schema import metadata
from prdigest.triage import assess


@pytest.fixture
def store(any_store: Store) -> Store:
    """Every test here runs on SQLite and on PostgreSQL."""
    return any_store


def test_head_revision_constant_matches_alembic() -> None:
    config = Config()
    config.set_main_option(
        "script_location",
        str(Path(__import__("prdigest.store").store.__file__).parent / "migrations"),
    )
    assert ScriptDirectory.from_config(config).get_current_head() == HEAD_REVISION


def test_migrated_database_matches_schema_metadata(tmp_path: Path) -> None:
    open_store(tmp_path / "db.sqlite3").close()
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    inspector = inspect(engine)
    for table in metadata.sorted_tables:
        columns = {c["name"] for c in inspector.get_columns(table.name)}
        assert columns == {c.name for c in table.columns}, table.name
    engine.dispose()


def test_reimport_changes_nothing(store: Store, records: list[PullRequest]) -> None:
    first = store.records.upsert(records)
    assert (first.new, first.updated, first.unchanged) == (len(records), 0, 0)
    second = store.records.upsert(records)
    assert (second.new, second.updated, second.unchanged) == (0, 0, len(records))
    assert [r.number for r in store.records.stream()] == sorted(r.number for r in records)


def test_changed_record_is_updated_in_place(store: Store, records: list[PullRequest]) -> None:
    store.records.upsert(records[:2])
    changed = records[0].model_copy(update={"title": records[0].title + " (edited)"})
    result = store.records.upsert([changed])
    assert (result.new, result.updated) == (0, 1)
    assert store.records.get(changed.repo, changed.number).title.endswith("(edited)")
    assert len(list(store.records.stream())) == 2


def test_window_is_half_open(store: Store, records: list[PullRequest]) -> None:
    store.records.upsert(records)
    target = records[0]
    exact = store.records.in_window(
        target.repo, target.merged_at, target.merged_at.replace(year=2100)
    )
    assert target.number in [r.number for r in exact]
    before = store.records.in_window(
        target.repo, datetime(2000, 1, 1, tzinfo=UTC), target.merged_at
    )
    assert target.number not in [r.number for r in before]


def test_get_missing_pr_is_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError, match="owner/repo#7 is not in the store"):
        store.records.get("owner/repo", 7)


def test_dossier_served_only_for_matching_versions(
    store: Store, records: list[PullRequest], vllm_preset: Preset
) -> None:
    pr = records[0]
    store.records.upsert([pr])
    dossier = analyze(pr, vllm_preset)
    digest = content_hash(pr)
    store.artefacts.put_dossier(dossier, digest, vllm_preset.key)
    assert (
        store.artefacts.get_dossier(pr.repo, pr.number, digest, ANALYZER_VERSION, vllm_preset.key)
        == dossier
    )
    assert (
        store.artefacts.get_dossier(
            pr.repo, pr.number, "other-hash", ANALYZER_VERSION, vllm_preset.key
        )
        is None
    )
    assert (
        store.artefacts.get_dossier(pr.repo, pr.number, digest, "analyze/0", vllm_preset.key)
        is None
    )
    assessment = assess(dossier)
    store.artefacts.put_assessment(assessment, digest, ANALYZER_VERSION, vllm_preset.key)
    assert (
        store.artefacts.get_assessment(
            pr.repo, pr.number, digest, ANALYZER_VERSION, vllm_preset.key, assessment.triage_version
        )
        == assessment
    )


def test_unopenable_location_is_a_storage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StorageError):
        open_store(blocker / "sub" / "db.sqlite3")


def test_repr_hides_password() -> None:
    store = Store(create_engine("sqlite:///:memory:"))
    assert "sqlite" in repr(store)
    from prdigest.store.engine import safe_url as _safe_url

    assert "s3cret" not in _safe_url("postgresql://user:s3cret@host/db")

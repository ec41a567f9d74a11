"""Migration 0002 and the GitHub checkpoint tables."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import resources

from alembic.config import Config
from sqlalchemy import inspect

from prdigest.store import open_store, schema


def test_migrated_tables_match_the_metadata(tmp_path):
    store = open_store(tmp_path / "s.sqlite3")
    inspector = inspect(store._engine)
    for table in schema.metadata.sorted_tables:
        columns = {c["name"]: c for c in inspector.get_columns(table.name)}
        assert set(columns) == {c.name for c in table.columns}, table.name
        for column in table.columns:
            assert columns[column.name]["nullable"] == column.nullable, (table.name, column.name)
        uniques = {tuple(u["column_names"]) for u in inspector.get_unique_constraints(table.name)}
        expected = {
            tuple(c.columns.keys())
            for c in table.constraints
            if c.__class__.__name__ == "UniqueConstraint"
        }
        assert uniques == expected, table.name
    store.close()


def test_a_0001_database_is_upgraded_in_place(tmp_path):
    from alembic import command
    from sqlalchemy import create_engine

    path = tmp_path / "old.sqlite3"
    engine = create_engine(f"sqlite:///{path}")
    config = Config()
    config.set_main_option(
        "script_location", str(resources.files("prdigest.store").joinpath("migrations"))
    )
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0001")
    assert "github_pr_fetch" not in inspect(engine).get_table_names()
    engine.dispose()
    store = open_store(path)
    assert {"github_windows", "github_window_prs", "github_pr_fetch"} <= set(
        inspect(store._engine).get_table_names()
    )
    store.close()


def test_listing_and_fetch_state_round_trip(tmp_path):
    store = open_store(tmp_path / "s.sqlite3")
    state = store.checkpoints
    since, until = datetime(2026, 6, 10, tzinfo=UTC), datetime(2026, 6, 11, tzinfo=UTC)
    window_id = state.record_listing("o/r", since, until, [(1, "2026-06-10T01:00:00Z")])
    again = state.record_listing("o/r", since, until, [(1, "x"), (2, "y")])
    assert again == window_id
    window = state.window("o/r", since, until)
    assert window is not None and window.numbers == (1, 2) and not window.complete
    state.save_details("o/r", [(2, "2026-06-10T02:00:00Z", {"number": 2, "title": "t"})])
    (fetch,) = state.fetch_states("o/r", [2, 3]).values()
    assert fetch.stage == "detail" and fetch.detail == {"number": 2, "title": "t"}
    state.mark_window_complete(window_id)
    assert state.window("o/r", since, until).complete  # type: ignore[union-attr]
    store.close()

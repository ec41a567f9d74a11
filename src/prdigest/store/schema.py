"""Table definitions of the store (SQLAlchemy Core).

The alembic migrations under ``migrations/versions`` create exactly these tables; a test
checks that a migrated database matches this metadata, so the two cannot drift.

* ``pull_requests``: one row per (repo, number); ``record`` is the ``prdigest.pr/v1`` JSON and
  ``content_hash`` its SHA-256, so an unchanged re-import writes nothing.
* ``dossiers`` / ``assessments``: derived artefacts with the versions they were derived from
  (``pr_hash``, ``analyzer``, ``preset``, ``triage``); a stale row is simply recomputed.
* ``entries``: written entries keyed by everything that shapes them (``entry_key``), so a change
  of writer, model, prompt or language writes only what it must.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

pull_requests = Table(
    "pull_requests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repo", String(200), nullable=False),
    Column("number", Integer, nullable=False),
    Column("title", Text, nullable=False),
    Column("author", String(100)),
    Column("merged_at", DateTime(), nullable=False, index=True),  # naive UTC
    Column("updated_at", String(40)),
    Column("head_sha", String(64)),
    Column("source", String(20), nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("record", Text, nullable=False),
    Column("stored_at", DateTime(), nullable=False),
    UniqueConstraint("repo", "number", name="uq_pull_requests_repo_number"),
)


def _artefact_table(name: str, *versions: str) -> Table:
    """A derived-artefact table: one payload per PR with the versions it was derived from."""
    return Table(
        name,
        metadata,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("repo", String(200), nullable=False),
        Column("number", Integer, nullable=False),
        Column("pr_hash", String(64), nullable=False),
        Column("analyzer", String(40), nullable=False),
        Column("preset", String(240), nullable=False),
        *(Column(version, String(40), nullable=False) for version in versions),
        Column("payload", Text, nullable=False),
        UniqueConstraint("repo", "number", name=f"uq_{name}_repo_number"),
    )


dossiers = _artefact_table("dossiers")
assessments = _artefact_table("assessments", "triage")

entries = Table(
    "entries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repo", String(200), nullable=False),
    Column("number", Integer, nullable=False),
    Column("entry_key", String(64), nullable=False),
    Column("pr_hash", String(64), nullable=False),
    Column("writer", String(200), nullable=False),
    Column("payload", Text, nullable=False),
    Column("created_at", DateTime(), nullable=False),
    UniqueConstraint("repo", "number", "entry_key", name="uq_entries_key"),
)

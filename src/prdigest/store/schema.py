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

dossiers = Table(
    "dossiers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repo", String(200), nullable=False),
    Column("number", Integer, nullable=False),
    Column("pr_hash", String(64), nullable=False),
    Column("analyzer", String(40), nullable=False),
    Column("preset", String(240), nullable=False),
    Column("payload", Text, nullable=False),
    UniqueConstraint("repo", "number", name="uq_dossiers_repo_number"),
)

assessments = Table(
    "assessments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repo", String(200), nullable=False),
    Column("number", Integer, nullable=False),
    Column("pr_hash", String(64), nullable=False),
    Column("analyzer", String(40), nullable=False),
    Column("preset", String(240), nullable=False),
    Column("triage", String(40), nullable=False),
    Column("payload", Text, nullable=False),
    UniqueConstraint("repo", "number", name="uq_assessments_repo_number"),
)

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

# -- publish (migration 0004) ----------------------------------------------------------------
#
# * ``digests``: each produced digest as the JSON of :class:`~prdigest.models.Digest`, one row per
#   (repo, window label, language); ``content_hash`` changes only when the digest does, and
#   ``updated_at`` with it, so the site and feeds stay byte-stable over unchanged re-runs.
# * ``deliveries``: one row per (channel, repo, window label, language): ``sent`` rows are never
#   posted again, ``failed`` rows are retried on the next run with their attempt count and the
#   last error (already free of secrets).

digests = Table(
    "digests",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repo", String(200), nullable=False),
    Column("label", String(80), nullable=False),
    Column("lang", String(8), nullable=False),
    Column("tz", String(64), nullable=False),
    Column("since", DateTime(), nullable=False),  # naive UTC
    Column("until", DateTime(), nullable=False, index=True),  # naive UTC
    Column("content_hash", String(64), nullable=False),
    Column("total", Integer, nullable=False),
    Column("counts", Text, nullable=False),  # JSON: level -> count, for the index page
    Column("payload", Text, nullable=False),
    Column("created_at", DateTime(), nullable=False),
    Column("updated_at", DateTime(), nullable=False),
    UniqueConstraint("repo", "label", "lang", name="uq_digests_window"),
)

deliveries = Table(
    "deliveries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("channel", String(100), nullable=False),
    Column("repo", String(200), nullable=False),
    Column("label", String(80), nullable=False),
    Column("lang", String(8), nullable=False),
    Column("digest_hash", String(64), nullable=False),
    Column("status", String(16), nullable=False, index=True),  # sent | failed
    Column("attempts", Integer, nullable=False),
    Column("last_error", Text),
    Column("created_at", DateTime(), nullable=False),
    Column("updated_at", DateTime(), nullable=False),
    UniqueConstraint("channel", "repo", "label", "lang", name="uq_deliveries_target"),
)

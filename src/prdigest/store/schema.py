"""Table definitions of the store (SQLAlchemy Core).

The alembic migrations under ``migrations/versions`` create exactly these tables; a test
checks that a migrated database matches this metadata, so the two cannot drift.

* ``pull_requests``: one row per (repo, number); ``record`` is the ``prdigest.pr/v1`` JSON and
  ``content_hash`` its SHA-256, so an unchanged re-import writes nothing.
* ``dossiers`` / ``assessments``: derived artefacts with the versions they were derived from
  (``pr_hash``, ``analyzer``, ``preset``, ``triage``); a stale row is simply recomputed. An
  assessment also keeps its PR's head (the fields a digest shows), so a cached digest reads
  no record and no dossier.
* ``entries``: written entries keyed by everything that shapes them (``entry_key``), so a change
  of writer, model, prompt or language writes only what it must.
* ``github_*``: the checkpoints of the GitHub source (see the comment above those tables).
* ``llm_usage``: tokens and calls of each LLM write (``number`` is NULL for a batched titles
  request), grouped by ``run_id``, so cost can be summed per run, repo or writer.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
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
    Column("merge_commit_sha", String(64)),  # migration 0006: what sync --git skips
    Column("source", String(20), nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("record", Text, nullable=False),
    Column("stored_at", DateTime(), nullable=False),
    UniqueConstraint("repo", "number", name="uq_pull_requests_repo_number"),
    Index("ix_pull_requests_merge_commit_sha", "repo", "merge_commit_sha"),
)


def _artefact_table(name: str, *versions: str, extra: tuple[Column[str], ...] = ()) -> Table:
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
        *extra,
        UniqueConstraint("repo", "number", name=f"uq_{name}_repo_number"),
    )


dossiers = _artefact_table("dossiers")
# ``head`` (migration 0006): the PRHead JSON a digest shows beside the verdict
assessments = _artefact_table("assessments", "triage", extra=(Column("head", Text),))

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

# -- GitHub sync state (migration 0002) ------------------------------------------------------
#
# * ``github_windows``: each window a sync listed, with ``complete`` set once every listed PR
#   was stored; ``github_window_prs`` the PR numbers (and listed ``updatedAt``) of that listing.
# * ``github_pr_fetch``: per PR, how far the last fetch got. ``stage='detail'`` keeps the fully
#   paginated GraphQL data (``detail``) of a PR whose patch text is still missing, so a resumed
#   run does not ask for it again; ``stage='done'`` is written in the same transaction as the
#   record. ``diff_etag`` revalidates the ``.diff`` request (a 304 reuses the stored patches).

github_windows = Table(
    "github_windows",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repo", String(200), nullable=False),
    Column("since", DateTime(), nullable=False),  # naive UTC
    Column("until", DateTime(), nullable=False),  # naive UTC, exclusive
    Column("pr_count", Integer, nullable=False),
    Column("complete", Boolean, nullable=False),
    Column("listed_at", DateTime(), nullable=False),
    Column("completed_at", DateTime()),
    UniqueConstraint("repo", "since", "until", name="uq_github_windows_span"),
)

github_window_prs = Table(
    "github_window_prs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("window_id", Integer, nullable=False),
    Column("number", Integer, nullable=False),
    Column("updated_at", String(40), nullable=False),
    UniqueConstraint("window_id", "number", name="uq_github_window_prs"),
)

github_pr_fetch = Table(
    "github_pr_fetch",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repo", String(200), nullable=False),
    Column("number", Integer, nullable=False),
    Column("updated_at", String(40), nullable=False),  # as GitHub gave it
    Column("stage", String(10), nullable=False),  # "detail" | "done"
    Column("detail", Text),  # GraphQL JSON while stage == "detail"
    Column("diff_mode", String(10)),  # "diff" | "files"
    Column("diff_etag", String(200)),
    Column("fetched_at", DateTime(), nullable=False),
    UniqueConstraint("repo", "number", name="uq_github_pr_fetch_repo_number"),
)

llm_usage = Table(
    "llm_usage",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(32), nullable=False, index=True),
    Column("repo", String(200), nullable=False, index=True),
    Column("number", Integer),
    Column("purpose", String(20), nullable=False),
    Column("writer", String(300), nullable=False),
    Column("entry_key", String(64)),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("calls", Integer, nullable=False),
    Column("outcome", String(20), nullable=False),
    Column("estimated", Boolean, nullable=False),
    Column("created_at", DateTime(), nullable=False),
)

# -- publish (migration 0004) ----------------------------------------------------------------
#
# * ``digests``: each produced digest as the JSON of :class:`~prdigest.core.models.Digest`, one
#   row per (repo, window label, language); ``content_hash`` changes only when the digest does, and
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


# -- backfill (migration 0007) ---------------------------------------------------------------
#
# ``backfill_days``: one row per (repo, local day, time zone, language) of a backfill. A worker
# claims a ``todo`` row (PostgreSQL: ``SELECT … FOR UPDATE SKIP LOCKED``; SQLite: a conditional
# update), marks it ``done`` (or ``failed``) with its PR count and time; a ``claimed`` row whose
# lease ran out is claimed again, so a killed worker's day is not lost.

backfill_days = Table(
    "backfill_days",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("repo", String(200), nullable=False),
    Column("day", String(10), nullable=False),  # YYYY-MM-DD, local to tz
    Column("tz", String(64), nullable=False),
    Column("lang", String(8), nullable=False),
    Column("status", String(10), nullable=False),  # todo | claimed | done | failed
    Column("worker", String(200)),
    Column("attempts", Integer, nullable=False),
    Column("prs", Integer),
    Column("seconds", Float),
    Column("error", Text),
    Column("claimed_at", DateTime()),
    Column("done_at", DateTime()),
    UniqueConstraint("repo", "day", "tz", "lang", name="uq_backfill_days"),
    Index("ix_backfill_days_status", "repo", "status"),
)

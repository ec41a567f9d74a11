"""Scale: the merge commit of each record, and the head of each assessment.

* ``pull_requests.merge_commit_sha`` (indexed with the repo) lets ``sync --git`` tell which
  commits of a window are already stored before it reads their diffs; existing rows get it from
  their record JSON here.
* ``assessments.head`` keeps the few PR fields a digest shows for a PR next to its verdict, so a
  cached re-run builds the digest from assessments alone, without parsing records or dossiers.
  Existing rows have none: they are recomputed (from their cached dossier) on the next run.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

BATCH = 500


def upgrade() -> None:
    op.add_column("pull_requests", sa.Column("merge_commit_sha", sa.String(64)))
    op.create_index(
        "ix_pull_requests_merge_commit_sha", "pull_requests", ["repo", "merge_commit_sha"]
    )
    op.add_column("assessments", sa.Column("head", sa.Text))
    conn = op.get_bind()
    table = sa.table(
        "pull_requests",
        sa.column("id", sa.Integer),
        sa.column("record", sa.Text),
        sa.column("merge_commit_sha", sa.String),
    )
    last = 0
    while True:
        rows = conn.execute(
            sa.select(table.c.id, table.c.record)
            .where(table.c.id > last)
            .order_by(table.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        last = rows[-1][0]
        updates = [
            {"row": row_id, "sha": sha}
            for row_id, raw in rows
            if (sha := json.loads(raw).get("merge_commit_sha"))
        ]
        if updates:
            conn.execute(
                table.update()
                .where(table.c.id == sa.bindparam("row"))
                .values(merge_commit_sha=sa.bindparam("sha")),
                updates,
            )


def downgrade() -> None:
    op.drop_column("assessments", "head")
    op.drop_index("ix_pull_requests_merge_commit_sha", "pull_requests")
    op.drop_column("pull_requests", "merge_commit_sha")

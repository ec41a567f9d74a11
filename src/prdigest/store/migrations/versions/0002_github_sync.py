"""GitHub sync state: listed windows, their PRs, per-PR fetch checkpoints and ETags.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "github_windows",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("since", sa.DateTime(), nullable=False),
        sa.Column("until", sa.DateTime(), nullable=False),
        sa.Column("pr_count", sa.Integer, nullable=False),
        sa.Column("complete", sa.Boolean, nullable=False),
        sa.Column("listed_at", sa.DateTime(), nullable=False),
        sa.Column("completed_at", sa.DateTime()),
        sa.UniqueConstraint("repo", "since", "until", name="uq_github_windows_span"),
    )
    op.create_table(
        "github_window_prs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("window_id", sa.Integer, nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("window_id", "number", name="uq_github_window_prs"),
    )
    op.create_table(
        "github_pr_fetch",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.Column("stage", sa.String(10), nullable=False),
        sa.Column("detail", sa.Text),
        sa.Column("diff_mode", sa.String(10)),
        sa.Column("diff_etag", sa.String(200)),
        sa.Column("fetched_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("repo", "number", name="uq_github_pr_fetch_repo_number"),
    )


def downgrade() -> None:
    for name in ("github_pr_fetch", "github_window_prs", "github_windows"):
        op.drop_table(name)

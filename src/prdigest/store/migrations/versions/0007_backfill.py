"""Backfill: one row per (repository, day, language) of a backfill, claimed by one worker.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "backfill_days",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("tz", sa.String(64), nullable=False),
        sa.Column("lang", sa.String(8), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("worker", sa.String(200)),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("prs", sa.Integer),
        sa.Column("seconds", sa.Float),
        sa.Column("error", sa.Text),
        sa.Column("claimed_at", sa.DateTime()),
        sa.Column("done_at", sa.DateTime()),
        sa.UniqueConstraint("repo", "day", "tz", "lang", name="uq_backfill_days"),
    )
    op.create_index("ix_backfill_days_status", "backfill_days", ["repo", "status"])


def downgrade() -> None:
    op.drop_index("ix_backfill_days_status", "backfill_days")
    op.drop_table("backfill_days")

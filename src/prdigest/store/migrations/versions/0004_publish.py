"""Publish: produced digests and the delivery log.

Revision ID: 0004
Revises: 0003 (re-chained after the migrations of the other sources when merged)
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "digests",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("label", sa.String(80), nullable=False),
        sa.Column("lang", sa.String(8), nullable=False),
        sa.Column("tz", sa.String(64), nullable=False),
        sa.Column("since", sa.DateTime(), nullable=False),
        sa.Column("until", sa.DateTime(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("counts", sa.Text, nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("repo", "label", "lang", name="uq_digests_window"),
    )
    op.create_index("ix_digests_until", "digests", ["until"])
    op.create_table(
        "deliveries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("channel", sa.String(100), nullable=False),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("label", sa.String(80), nullable=False),
        sa.Column("lang", sa.String(8), nullable=False),
        sa.Column("digest_hash", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.Text),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("channel", "repo", "label", "lang", name="uq_deliveries_target"),
    )
    op.create_index("ix_deliveries_status", "deliveries", ["status"])


def downgrade() -> None:
    op.drop_index("ix_deliveries_status", "deliveries")
    op.drop_table("deliveries")
    op.drop_index("ix_digests_until", "digests")
    op.drop_table("digests")

"""LLM usage: tokens and calls per written entry (and per batched titles request).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "llm_usage",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(32), nullable=False),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("number", sa.Integer),
        sa.Column("purpose", sa.String(20), nullable=False),
        sa.Column("writer", sa.String(300), nullable=False),
        sa.Column("entry_key", sa.String(64)),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("calls", sa.Integer, nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("estimated", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_llm_usage_run_id", "llm_usage", ["run_id"])
    op.create_index("ix_llm_usage_repo", "llm_usage", ["repo"])


def downgrade() -> None:
    op.drop_index("ix_llm_usage_repo", "llm_usage")
    op.drop_index("ix_llm_usage_run_id", "llm_usage")
    op.drop_table("llm_usage")

"""Initial tables: pull requests and derived artefacts.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pull_requests",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("author", sa.String(100)),
        sa.Column("merged_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.String(40)),
        sa.Column("head_sha", sa.String(64)),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        sa.Column("stored_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("repo", "number", name="uq_pull_requests_repo_number"),
    )
    op.create_index("ix_pull_requests_merged_at", "pull_requests", ["merged_at"])
    for name in ("dossiers", "assessments"):
        extra = (
            [sa.Column("triage", sa.String(40), nullable=False)] if name == "assessments" else []
        )
        op.create_table(
            name,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("repo", sa.String(200), nullable=False),
            sa.Column("number", sa.Integer, nullable=False),
            sa.Column("pr_hash", sa.String(64), nullable=False),
            sa.Column("analyzer", sa.String(40), nullable=False),
            sa.Column("preset", sa.String(240), nullable=False),
            *extra,
            sa.Column("payload", sa.Text, nullable=False),
            sa.UniqueConstraint("repo", "number", name=f"uq_{name}_repo_number"),
        )
    op.create_table(
        "entries",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("repo", sa.String(200), nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("entry_key", sa.String(64), nullable=False),
        sa.Column("pr_hash", sa.String(64), nullable=False),
        sa.Column("writer", sa.String(200), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("repo", "number", "entry_key", name="uq_entries_key"),
    )


def downgrade() -> None:
    for name in ("entries", "assessments", "dossiers", "pull_requests"):
        op.drop_table(name)

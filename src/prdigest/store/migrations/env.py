"""Alembic environment: migrations always run on a connection handed in by the store."""

from __future__ import annotations

from alembic import context

from prdigest.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reached when alembic is run by hand
    raise RuntimeError("run migrations through prdigest.store.open_store()")

context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()

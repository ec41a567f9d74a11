"""Alembic migrations of the store; run by :func:`prdigest.store.open_store`."""

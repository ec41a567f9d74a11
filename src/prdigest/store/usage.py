"""What model calls cost: tokens and calls of each LLM write, grouped by run (no prompt or
reply text, no key), so cost can be summed per run, repository or writer."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Engine, func, select
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import StorageError
from prdigest.core.models import UsageRecord
from prdigest.store import schema
from prdigest.store.engine import begin_write, describe, now


class UsageRepository:
    """Read and write the ``llm_usage`` table."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def put(self, run_id: str, repo: str, writer: str, usage: Iterable[UsageRecord]) -> None:
        """Record what one run's model calls cost."""
        created = now()
        rows = [
            {
                "run_id": run_id,
                "repo": repo,
                "number": u.number,
                "purpose": u.purpose,
                "writer": writer,
                "entry_key": u.entry_key,
                "prompt_tokens": u.prompt_tokens,
                "completion_tokens": u.completion_tokens,
                "calls": u.calls,
                "outcome": u.outcome,
                "estimated": u.estimated,
                "created_at": created,
            }
            for u in usage
        ]
        if not rows:
            return
        try:
            with begin_write(self._engine) as conn:
                conn.execute(schema.llm_usage.insert(), rows)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store LLM usage of {repo}: {describe(exc)}") from exc

    def totals(self, repo: str | None = None) -> dict[str, int]:
        """Prompt tokens, completion tokens, calls and runs recorded (for one repo)."""
        table = schema.llm_usage
        query = select(
            func.coalesce(func.sum(table.c.prompt_tokens), 0),
            func.coalesce(func.sum(table.c.completion_tokens), 0),
            func.coalesce(func.sum(table.c.calls), 0),
            func.count(func.distinct(table.c.run_id)),
        )
        if repo:
            query = query.where(table.c.repo == repo)
        with self._engine.connect() as conn:
            prompt, completion, calls, runs = conn.execute(query).one()
        return {
            "prompt_tokens": int(prompt),
            "completion_tokens": int(completion),
            "calls": int(calls),
            "runs": int(runs),
        }

"""The store: PR records and derived artefacts in SQLite (or PostgreSQL) via SQLAlchemy 2.

``open_store(path_or_url)`` opens (and, when needed, migrates) a database and returns a
:class:`Store`. Records are upserted by (repo, number); a record whose content hash is
unchanged is not written again, so re-importing a file changes nothing. Derived artefacts are
stored with the versions they were derived from and served only when those still match.

Timestamps go in as naive UTC ``DateTime`` so that window queries compare correctly on every
backend; the record JSON keeps the original offsets.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, delete, event, func, inspect, select, text
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import NotFoundError, StorageError
from prdigest.core.models import Assessment, Dossier, Entry
from prdigest.core.records import PullRequest, parse_record
from prdigest.store import schema
from prdigest.store.checkpoints import GitHubSyncState
from prdigest.store.publish import PublishTables

if TYPE_CHECKING:
    from prdigest.write import UsageRecord

HEAD_REVISION = "0004"  # newest migration; a test keeps it equal to alembic's head


@dataclass(frozen=True)
class UpsertResult:
    new: int = 0
    updated: int = 0
    unchanged: int = 0

    def __add__(self, other: UpsertResult) -> UpsertResult:
        return UpsertResult(
            self.new + other.new, self.updated + other.updated, self.unchanged + other.unchanged
        )


def content_hash(record: PullRequest) -> str:
    """SHA-256 of the record's canonical JSON: equal records, equal hashes."""
    canonical = json.dumps(record.to_json_dict(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _utc_naive(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)


def _url_for(target: str | Path) -> str:
    value = str(target)
    if "://" in value:
        return value
    return f"sqlite:///{Path(value).expanduser()}"


def _enable_sqlite_pragmas(engine: Engine) -> None:
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cursor = dbapi_conn.cursor()
        # WAL keeps readers going while a sync writes; NORMAL is durable enough with WAL.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.close()


def _current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _migrate(engine: Engine) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option(
        "script_location", str(resources.files("prdigest.store").joinpath("migrations"))
    )
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")


def open_store(target: str | Path) -> Store:
    """Open the database at a path or SQLAlchemy URL, creating and migrating it as needed."""
    url = _url_for(target)
    if url.startswith("sqlite:///"):
        db_path = Path(url.removeprefix("sqlite:///"))
        if str(db_path) != ":memory:":
            try:
                db_path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(f"cannot create {db_path.parent}: {exc.strerror}") from exc
    try:
        engine = create_engine(url)
        _enable_sqlite_pragmas(engine)
        if _current_revision(engine) != HEAD_REVISION:
            _migrate(engine)
    except SQLAlchemyError as exc:
        raise StorageError(f"cannot open store {_safe_url(url)}: {exc.__class__.__name__}") from exc
    return Store(engine)


def _safe_url(url: str) -> str:
    """The URL without a password, for messages."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:  # an unparsable URL is shown only by its scheme
        return url.split("://", 1)[0] + "://…"


class Store(PublishTables):
    """PR records and derived artefacts. Create with :func:`open_store`."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def __repr__(self) -> str:
        return f"Store({_safe_url(str(self._engine.url))})"

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- records -------------------------------------------------------------------------

    def upsert_prs(
        self,
        records: Iterable[PullRequest],
        *,
        also: Callable[[Connection], None] | None = None,
    ) -> UpsertResult:
        """Insert new records, replace changed ones, leave identical ones untouched.

        ``also`` runs in the same transaction, so a source's checkpoint is written together
        with the records it describes (a crash leaves both or neither).
        """
        batch = list(records)
        if not batch and also is None:
            return UpsertResult()
        table = schema.pull_requests
        now = _utc_naive(datetime.now(UTC))
        new = updated = unchanged = 0
        try:
            with self._engine.begin() as conn:
                known = self._known_hashes(conn, batch)
                for record in batch:
                    digest = content_hash(record)
                    key = (record.repo, record.number)
                    if known.get(key) == digest:
                        unchanged += 1
                        continue
                    values = self._row_values(record, digest, now)
                    if key in known:
                        conn.execute(
                            table.update()
                            .where(table.c.repo == record.repo, table.c.number == record.number)
                            .values(**values)
                        )
                        updated += 1
                    else:
                        conn.execute(table.insert().values(**values))
                        new += 1
                    known[key] = digest
                if also is not None:
                    also(conn)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store PR records: {exc.__class__.__name__}") from exc
        return UpsertResult(new, updated, unchanged)

    @staticmethod
    def _known_hashes(conn: Any, batch: list[PullRequest]) -> dict[tuple[str, int], str]:
        table = schema.pull_requests
        known: dict[tuple[str, int], str] = {}
        for repo in {r.repo for r in batch}:
            numbers = [r.number for r in batch if r.repo == repo]
            for start in range(0, len(numbers), 500):  # stay under SQL variable limits
                rows = conn.execute(
                    select(table.c.number, table.c.content_hash).where(
                        table.c.repo == repo, table.c.number.in_(numbers[start : start + 500])
                    )
                )
                known.update({(repo, n): h for n, h in rows})
        return known

    @staticmethod
    def _row_values(record: PullRequest, digest: str, now: datetime) -> dict[str, Any]:
        return {
            "repo": record.repo,
            "number": record.number,
            "title": record.title,
            "author": record.author,
            "merged_at": _utc_naive(record.merged_at),
            "updated_at": record.updated_at.isoformat() if record.updated_at else None,
            "head_sha": record.head_sha,
            "source": record.source,
            "content_hash": digest,
            "record": json.dumps(record.to_json_dict(), ensure_ascii=False),
            "stored_at": now,
        }

    def get_pr(self, repo: str, number: int) -> PullRequest:
        table = schema.pull_requests
        with self._engine.connect() as conn:
            row = conn.execute(
                select(table.c.record).where(table.c.repo == repo, table.c.number == number)
            ).first()
        if row is None:
            raise NotFoundError(f"{repo}#{number} is not in the store; import or sync it first")
        return self._load(row[0])

    def prs_in_window(self, repo: str, since: datetime, until: datetime) -> list[PullRequest]:
        """Records merged in [since, until), oldest merge first."""
        table = schema.pull_requests
        query = (
            select(table.c.record)
            .where(
                table.c.repo == repo,
                table.c.merged_at >= _utc_naive(since),
                table.c.merged_at < _utc_naive(until),
            )
            .order_by(table.c.merged_at, table.c.number)
        )
        with self._engine.connect() as conn:
            return [self._load(raw) for (raw,) in conn.execute(query)]

    def iter_prs(self, repo: str | None = None) -> Iterator[PullRequest]:
        """Every stored record (of one repo), by repo and number; streams from the database."""
        table = schema.pull_requests
        query = select(table.c.record).order_by(table.c.repo, table.c.number)
        if repo:
            query = query.where(table.c.repo == repo)
        with self._engine.connect() as conn:
            for (raw,) in conn.execution_options(stream_results=True).execute(query):
                yield self._load(raw)

    def sources_of(self, repo: str, numbers: Iterable[int]) -> dict[int, str]:
        """number → ``source`` of the stored record, for those of ``numbers`` that are stored.

        A sync from a poorer source (git) asks this so it never replaces a richer record.
        """
        table = schema.pull_requests
        wanted = sorted(set(numbers))
        found: dict[int, str] = {}
        with self._engine.connect() as conn:
            for start in range(0, len(wanted), 500):  # stay under SQL variable limits
                rows = conn.execute(
                    select(table.c.number, table.c.source).where(
                        table.c.repo == repo, table.c.number.in_(wanted[start : start + 500])
                    )
                )
                found.update({number: source for number, source in rows})
        return found

    def stored_versions(self, repo: str) -> dict[int, str | None]:
        """number → stored ``updated_at`` for a repo, so a sync can skip unchanged PRs."""
        table = schema.pull_requests
        with self._engine.connect() as conn:
            rows = conn.execute(
                select(table.c.number, table.c.updated_at).where(table.c.repo == repo)
            )
            return {number: updated for number, updated in rows}

    def github_state(self) -> GitHubSyncState:
        """Checkpoints of the GitHub source (windows listed, per-PR fetch stage, ETags)."""
        return GitHubSyncState(self._engine)

    @staticmethod
    def _load(raw: str) -> PullRequest:
        return parse_record(json.loads(raw))

    # -- derived artefacts ----------------------------------------------------------------

    def get_dossier(
        self, repo: str, number: int, pr_hash: str, analyzer: str, preset: str
    ) -> Dossier | None:
        row = self._get_artefact(
            schema.dossiers, repo, number, pr_hash=pr_hash, analyzer=analyzer, preset=preset
        )
        return None if row is None else Dossier.model_validate_json(row)

    def put_dossier(self, dossier: Dossier, pr_hash: str, preset: str) -> None:
        self._put_artefact(
            schema.dossiers,
            dossier.repo,
            dossier.number,
            {"pr_hash": pr_hash, "analyzer": dossier.analyzer_version, "preset": preset},
            dossier.model_dump_json(),
        )

    def get_assessment(
        self, repo: str, number: int, pr_hash: str, analyzer: str, preset: str, triage: str
    ) -> Assessment | None:
        row = self._get_artefact(
            schema.assessments,
            repo,
            number,
            pr_hash=pr_hash,
            analyzer=analyzer,
            preset=preset,
            triage=triage,
        )
        return None if row is None else Assessment.model_validate_json(row)

    def put_assessment(
        self, assessment: Assessment, pr_hash: str, analyzer: str, preset: str
    ) -> None:
        self._put_artefact(
            schema.assessments,
            assessment.repo,
            assessment.number,
            {
                "pr_hash": pr_hash,
                "analyzer": analyzer,
                "preset": preset,
                "triage": assessment.triage_version,
            },
            assessment.model_dump_json(),
        )

    def get_entry(self, repo: str, number: int, entry_key: str) -> Entry | None:
        table = schema.entries
        with self._engine.connect() as conn:
            raw = conn.execute(
                select(table.c.payload).where(
                    table.c.repo == repo, table.c.number == number, table.c.entry_key == entry_key
                )
            ).scalar()
        return None if raw is None else Entry.model_validate_json(raw)

    def put_entry(self, entry: Entry, entry_key: str, pr_hash: str) -> None:
        table = schema.entries
        values = {
            "repo": entry.repo,
            "number": entry.number,
            "entry_key": entry_key,
            "pr_hash": pr_hash,
            "writer": entry.writer,
            "payload": entry.model_dump_json(),
            "created_at": _utc_naive(datetime.now(UTC)),
        }
        try:
            with self._engine.begin() as conn:
                conn.execute(
                    delete(table).where(
                        table.c.repo == entry.repo,
                        table.c.number == entry.number,
                        table.c.entry_key == entry_key,
                    )
                )
                conn.execute(table.insert().values(**values))
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store entry of {entry.repo}#{entry.number}") from exc

    # -- LLM usage ------------------------------------------------------------------------------

    def put_llm_usage(
        self, run_id: str, repo: str, writer: str, usage: Iterable[UsageRecord]
    ) -> None:
        """Record what one run's model calls cost (no prompt or reply text, no key)."""
        now = _utc_naive(datetime.now(UTC))
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
                "created_at": now,
            }
            for u in usage
        ]
        if not rows:
            return
        try:
            with self._engine.begin() as conn:
                conn.execute(schema.llm_usage.insert(), rows)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store LLM usage of {repo}") from exc

    def llm_usage_totals(self, repo: str | None = None) -> dict[str, int]:
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

    def _get_artefact(self, table: Any, repo: str, number: int, **versions: str) -> str | None:
        conditions = [table.c.repo == repo, table.c.number == number]
        conditions += [table.c[name] == value for name, value in versions.items()]
        with self._engine.connect() as conn:
            return conn.execute(select(table.c.payload).where(*conditions)).scalar()

    def _put_artefact(
        self, table: Any, repo: str, number: int, versions: dict[str, str], payload: str
    ) -> None:
        try:
            with self._engine.begin() as conn:
                conn.execute(delete(table).where(table.c.repo == repo, table.c.number == number))
                conn.execute(
                    table.insert().values(repo=repo, number=number, payload=payload, **versions)
                )
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store {table.name} row of {repo}#{number}") from exc

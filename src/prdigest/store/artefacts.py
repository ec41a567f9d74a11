"""Derived artefacts: dossiers, assessments and entries, each stored with what it came from.

A dossier is keyed by the record's content hash, the analyzer version and the preset key; an
assessment by those and the triage version (and keeps its PR's head); an entry by a key over all
of that plus the writer, the language and its locale content. A stale row is simply recomputed
and replaced. Writes are batched (one delete and one multi-row insert per table in one
transaction); a window is read in one query per table, joined with its records' hashes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, delete, select, tuple_
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import StorageError
from prdigest.core.models import Assessment, Dossier, Entry
from prdigest.store import schema
from prdigest.store.engine import begin_write, describe, now, utc_naive

CHUNK = 500  # numbers per IN (...) query: stays under SQL variable limits


class ArtefactRepository:
    """Read and write the ``dossiers``, ``assessments`` and ``entries`` tables."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def put_all(
        self,
        preset: str,
        analyzer: str,
        *,
        dossiers: Sequence[tuple[Dossier, str]] = (),
        assessments: Sequence[tuple[Assessment, str]] = (),
        entries: Sequence[tuple[Entry, str, str]] = (),
        heads: Mapping[int, str] | None = None,
    ) -> None:
        """Store new dossiers and assessments (each with its PR hash; an assessment with its
        PR's head JSON from ``heads``, by number) and entries (each with its key and PR hash),
        replacing what they supersede: one transaction, one delete and one multi-row insert
        per table."""
        if not (dossiers or assessments or entries):
            return
        heads = heads or {}
        dossier_rows = [
            {
                "repo": d.repo,
                "number": d.number,
                "pr_hash": pr_hash,
                "analyzer": analyzer,
                "preset": preset,
                "payload": d.model_dump_json(),
            }
            for d, pr_hash in dossiers
        ]
        assessment_rows = [
            {
                "repo": a.repo,
                "number": a.number,
                "pr_hash": pr_hash,
                "analyzer": analyzer,
                "preset": preset,
                "triage": a.triage_version,
                "payload": a.model_dump_json(),
                "head": heads.get(a.number),
            }
            for a, pr_hash in assessments
        ]
        created = now()
        entry_rows = [
            {
                "repo": e.repo,
                "number": e.number,
                "entry_key": key,
                "pr_hash": pr_hash,
                "writer": e.writer,
                "payload": e.model_dump_json(),
                "created_at": created,
            }
            for e, key, pr_hash in entries
        ]
        try:
            with begin_write(self._engine) as conn:
                self._replace_rows(conn, schema.dossiers, dossier_rows)
                self._replace_rows(conn, schema.assessments, assessment_rows)
                self._replace_rows(conn, schema.entries, entry_rows, by_key=True)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store derived artefacts: {describe(exc)}") from exc

    @staticmethod
    def _replace_rows(
        conn: Connection, table: Any, rows: list[dict[str, Any]], *, by_key: bool = False
    ) -> None:
        """Delete the rows these replace (same PR, and same entry key for entries), then insert
        them all; the last of several rows for one PR (and key) wins."""
        unique: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in rows:
            key = (
                (row["repo"], row["number"], row["entry_key"])
                if by_key
                else (row["repo"], row["number"])
            )
            unique[key] = row
        if not unique:
            return
        for repo in {key[0] for key in unique}:
            keys = [key[1:] for key in unique if key[0] == repo]
            for start in range(0, len(keys), CHUNK):
                chunk = keys[start : start + CHUNK]
                if by_key:
                    match = tuple_(table.c.number, table.c.entry_key).in_(chunk)
                else:
                    match = table.c.number.in_([number for (number,) in chunk])
                conn.execute(delete(table).where(table.c.repo == repo, match))
        conn.execute(table.insert(), list(unique.values()))

    def window_triaged(
        self, repo: str, since: datetime, until: datetime, analyzer: str, preset: str, triage: str
    ) -> Iterator[tuple[int, str, str]]:
        """(number, assessment JSON, head JSON) of every PR merged in [since, until) whose
        assessment is current (same record hash and versions) and has its head: one query."""
        a, p = schema.assessments, schema.pull_requests
        query = (
            select(a.c.number, a.c.payload, a.c.head)
            .join(p, (p.c.repo == a.c.repo) & (p.c.number == a.c.number))
            .where(
                p.c.repo == repo,
                p.c.merged_at >= utc_naive(since),
                p.c.merged_at < utc_naive(until),
                a.c.pr_hash == p.c.content_hash,
                a.c.analyzer == analyzer,
                a.c.preset == preset,
                a.c.triage == triage,
                a.c.head.is_not(None),
            )
        )
        with self._engine.connect() as conn:
            rows = conn.execution_options(stream_results=True).execute(query)
            yield from ((number, payload, head) for number, payload, head in rows)

    def window_entries(
        self, repo: str, since: datetime, until: datetime, wanted: Mapping[int, str]
    ) -> dict[int, str]:
        """number → entry JSON for the PRs merged in [since, until) whose stored entry has the
        key ``wanted`` names for it: one query for the window."""
        e, p = schema.entries, schema.pull_requests
        query = (
            select(e.c.number, e.c.entry_key, e.c.payload)
            .join(p, (p.c.repo == e.c.repo) & (p.c.number == e.c.number))
            .where(
                p.c.repo == repo,
                p.c.merged_at >= utc_naive(since),
                p.c.merged_at < utc_naive(until),
            )
        )
        found: dict[int, str] = {}
        with self._engine.connect() as conn:
            for number, key, payload in conn.execution_options(stream_results=True).execute(query):
                if wanted.get(number) == key:
                    found[number] = payload
        return found

    def dossiers_of(
        self, repo: str, numbers: Sequence[int], analyzer: str, preset: str
    ) -> dict[int, tuple[str, str]]:
        """number → (PR hash, dossier JSON) of the stored dossiers of ``numbers`` made with
        these versions; one query per chunk of numbers."""
        d = schema.dossiers
        wanted = sorted(set(numbers))
        found: dict[int, tuple[str, str]] = {}
        with self._engine.connect() as conn:
            for start in range(0, len(wanted), CHUNK):
                rows = conn.execute(
                    select(d.c.number, d.c.pr_hash, d.c.payload).where(
                        d.c.repo == repo,
                        d.c.number.in_(wanted[start : start + CHUNK]),
                        d.c.analyzer == analyzer,
                        d.c.preset == preset,
                    )
                )
                found.update({n: (h, raw) for n, h, raw in rows})
        return found

    def get_dossier(
        self, repo: str, number: int, pr_hash: str, analyzer: str, preset: str
    ) -> Dossier | None:
        row = self._get(
            schema.dossiers, repo, number, pr_hash=pr_hash, analyzer=analyzer, preset=preset
        )
        return None if row is None else Dossier.model_validate_json(row)

    def put_dossier(self, dossier: Dossier, pr_hash: str, preset: str) -> None:
        self.put_all(preset, dossier.analyzer_version, dossiers=[(dossier, pr_hash)])

    def get_assessment(
        self, repo: str, number: int, pr_hash: str, analyzer: str, preset: str, triage: str
    ) -> Assessment | None:
        row = self._get(
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
        self.put_all(preset, analyzer, assessments=[(assessment, pr_hash)])

    def get_entry(self, repo: str, number: int, entry_key: str) -> Entry | None:
        table = schema.entries
        with self._engine.connect() as conn:
            raw = conn.execute(
                select(table.c.payload).where(
                    table.c.repo == repo, table.c.number == number, table.c.entry_key == entry_key
                )
            ).scalar()
        return None if raw is None else Entry.model_validate_json(raw)

    def latest_entries(self, repo: str, number: int, limit: int = 3) -> list[Entry]:
        """The newest stored entries of one PR, by any writer (``explain`` shows why a model
        entry fell back)."""
        table = schema.entries
        query = (
            select(table.c.payload)
            .where(table.c.repo == repo, table.c.number == number)
            .order_by(table.c.created_at.desc(), table.c.id.desc())
            .limit(limit)
        )
        with self._engine.connect() as conn:
            rows = conn.execute(query).scalars().all()
        return [Entry.model_validate_json(raw) for raw in rows]

    def put_entry(self, entry: Entry, entry_key: str, pr_hash: str) -> None:
        self.put_all("", "", entries=[(entry, entry_key, pr_hash)])

    def _get(self, table: Any, repo: str, number: int, **versions: str) -> str | None:
        conditions = [table.c.repo == repo, table.c.number == number]
        conditions += [table.c[name] == value for name, value in versions.items()]
        with self._engine.connect() as conn:
            return conn.execute(select(table.c.payload).where(*conditions)).scalar()

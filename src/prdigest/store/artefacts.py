"""Derived artefacts: dossiers, assessments and entries, each stored with what it came from.

A dossier is keyed by the record's content hash, the analyzer version and the preset key; an
assessment by those and the triage version; an entry by a key over all of that plus the writer,
the language and its locale content. A stale row is simply recomputed and replaced.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, delete, select
from sqlalchemy.exc import SQLAlchemyError

from prdigest.core.errors import StorageError
from prdigest.core.models import Assessment, Dossier, Entry
from prdigest.store import schema
from prdigest.store.engine import now

CHUNK = 500  # numbers per IN (...) query: stays under SQL variable limits


@dataclass(frozen=True)
class Cached:
    """The stored artefacts of a window's PRs, parsed only when asked for and still current."""

    dossiers: dict[int, tuple[str, str]] = field(default_factory=dict)  # number → (hash, json)
    assessments: dict[int, tuple[str, str]] = field(default_factory=dict)
    entries: dict[tuple[int, str], str] = field(default_factory=dict)  # (number, key) → json

    def dossier(self, number: int, pr_hash: str) -> Dossier | None:
        found = self.dossiers.get(number)
        if found is None or found[0] != pr_hash:
            return None
        return Dossier.model_validate_json(found[1])

    def assessment(self, number: int, pr_hash: str) -> Assessment | None:
        found = self.assessments.get(number)
        if found is None or found[0] != pr_hash:
            return None
        return Assessment.model_validate_json(found[1])

    def entry(self, number: int, entry_key: str) -> Entry | None:
        raw = self.entries.get((number, entry_key))
        return None if raw is None else Entry.model_validate_json(raw)


class ArtefactRepository:
    """Read and write the ``dossiers``, ``assessments`` and ``entries`` tables."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def cached(
        self, repo: str, numbers: Sequence[int], analyzer: str, preset: str, triage: str
    ) -> Cached:
        """Every stored artefact of these PRs made with these versions: one query per table."""
        dossiers: dict[int, tuple[str, str]] = {}
        assessments: dict[int, tuple[str, str]] = {}
        entries: dict[tuple[int, str], str] = {}
        d, a, e = schema.dossiers, schema.assessments, schema.entries
        wanted = sorted(set(numbers))
        with self._engine.connect() as conn:
            for start in range(0, len(wanted), CHUNK):
                chunk = wanted[start : start + CHUNK]
                rows = conn.execute(
                    select(d.c.number, d.c.pr_hash, d.c.payload).where(
                        d.c.repo == repo,
                        d.c.number.in_(chunk),
                        d.c.analyzer == analyzer,
                        d.c.preset == preset,
                    )
                )
                dossiers.update({n: (h, raw) for n, h, raw in rows})
                rows = conn.execute(
                    select(a.c.number, a.c.pr_hash, a.c.payload).where(
                        a.c.repo == repo,
                        a.c.number.in_(chunk),
                        a.c.analyzer == analyzer,
                        a.c.preset == preset,
                        a.c.triage == triage,
                    )
                )
                assessments.update({n: (h, raw) for n, h, raw in rows})
                rows = conn.execute(
                    select(e.c.number, e.c.entry_key, e.c.payload).where(
                        e.c.repo == repo, e.c.number.in_(chunk)
                    )
                )
                entries.update({(n, key): raw for n, key, raw in rows})
        return Cached(dossiers, assessments, entries)

    def put_all(
        self,
        preset: str,
        analyzer: str,
        *,
        dossiers: Sequence[tuple[Dossier, str]] = (),
        assessments: Sequence[tuple[Assessment, str]] = (),
        entries: Sequence[tuple[Entry, str, str]] = (),
    ) -> None:
        """Store new dossiers and assessments (each with its PR hash) and entries (each with
        its key and PR hash), replacing what they supersede, in one transaction."""
        if not (dossiers or assessments or entries):
            return
        try:
            with self._engine.begin() as conn:
                for dossier, pr_hash in dossiers:
                    versions = {"pr_hash": pr_hash, "analyzer": analyzer, "preset": preset}
                    self._replace(
                        conn,
                        schema.dossiers,
                        dossier.repo,
                        dossier.number,
                        versions,
                        dossier.model_dump_json(),
                    )
                for assessment, pr_hash in assessments:
                    versions = {
                        "pr_hash": pr_hash,
                        "analyzer": analyzer,
                        "preset": preset,
                        "triage": assessment.triage_version,
                    }
                    self._replace(
                        conn,
                        schema.assessments,
                        assessment.repo,
                        assessment.number,
                        versions,
                        assessment.model_dump_json(),
                    )
                for entry, key, pr_hash in entries:
                    self._replace_entry(conn, entry, key, pr_hash)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store derived artefacts: {type(exc).__name__}") from exc

    @staticmethod
    def _replace(
        conn: Connection, table: Any, repo: str, number: int, versions: dict[str, str], payload: str
    ) -> None:
        conn.execute(delete(table).where(table.c.repo == repo, table.c.number == number))
        conn.execute(table.insert().values(repo=repo, number=number, payload=payload, **versions))

    @staticmethod
    def _replace_entry(conn: Connection, entry: Entry, entry_key: str, pr_hash: str) -> None:
        table = schema.entries
        conn.execute(
            delete(table).where(
                table.c.repo == entry.repo,
                table.c.number == entry.number,
                table.c.entry_key == entry_key,
            )
        )
        conn.execute(
            table.insert().values(
                repo=entry.repo,
                number=entry.number,
                entry_key=entry_key,
                pr_hash=pr_hash,
                writer=entry.writer,
                payload=entry.model_dump_json(),
                created_at=now(),
            )
        )

    def get_dossier(
        self, repo: str, number: int, pr_hash: str, analyzer: str, preset: str
    ) -> Dossier | None:
        row = self._get(
            schema.dossiers, repo, number, pr_hash=pr_hash, analyzer=analyzer, preset=preset
        )
        return None if row is None else Dossier.model_validate_json(row)

    def put_dossier(self, dossier: Dossier, pr_hash: str, preset: str) -> None:
        self._put(
            schema.dossiers,
            dossier.repo,
            dossier.number,
            {"pr_hash": pr_hash, "analyzer": dossier.analyzer_version, "preset": preset},
            dossier.model_dump_json(),
        )

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
        self._put(
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
        try:
            with self._engine.begin() as conn:
                self._replace_entry(conn, entry, entry_key, pr_hash)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store entry of {entry.repo}#{entry.number}") from exc

    def _get(self, table: Any, repo: str, number: int, **versions: str) -> str | None:
        conditions = [table.c.repo == repo, table.c.number == number]
        conditions += [table.c[name] == value for name, value in versions.items()]
        with self._engine.connect() as conn:
            return conn.execute(select(table.c.payload).where(*conditions)).scalar()

    def _put(
        self, table: Any, repo: str, number: int, versions: dict[str, str], payload: str
    ) -> None:
        try:
            with self._engine.begin() as conn:
                self._replace(conn, table, repo, number, versions, payload)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot store {table.name} row of {repo}#{number}") from exc

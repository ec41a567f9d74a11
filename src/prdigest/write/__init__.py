"""Write: turn dossiers and their assessments into :class:`~prdigest.core.models.Entry` objects.

One protocol for every writer: :meth:`Writer.write_batch` takes every entry of a digest that is
not cached yet and returns a :class:`BatchResult`. The template writer (:mod:`.template`) is
deterministic, needs no network and is the default; it writes the batch one entry at a time.
The LLM writer (:mod:`.llm`) batches titles into one request and runs paragraph requests
concurrently. A result says which entries may be cached (a fallback caused by a network fault
or a spent budget must be retried next run) and what the calls cost.

Every writer has a ``key`` naming everything that shapes its output, so stored entries are
reused exactly when nothing that matters changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from prdigest.core.models import AreaText, Assessment, Dossier, Entry, UsageRecord
from prdigest.core.records import PullRequest

Lang = str  # a language code of :data:`prdigest.core.locale.LOCALES`

__all__ = ["BatchResult", "Lang", "UsageRecord", "WriteRequest", "Writer"]


@dataclass(frozen=True)
class WriteRequest:
    """One entry to write: the PR record (for grounding), its dossier and verdict, and the
    primary area's name and readers in the entry's language (from the preset)."""

    pr: PullRequest
    dossier: Dossier
    assessment: Assessment
    paragraph: bool
    entry_key: str = ""
    area: AreaText | None = None

    @property
    def area_name(self) -> str | None:
        return self.area.name if self.area else None

    @property
    def audience(self) -> str | None:
        """The readers to name, when triage found the PR is mostly for one area's readers."""
        if self.area is None or self.assessment.audience is None:
            return None
        return self.area.audience or None


@dataclass(frozen=True)
class BatchResult:
    """Entries by PR number, which of them may be cached, their cost, and notes for the user."""

    entries: Mapping[int, Entry]
    cacheable: frozenset[int]
    usage: tuple[UsageRecord, ...] = ()
    notes: tuple[str, ...] = ()


class Writer(Protocol):
    @property
    def key(self) -> str:
        """Identifies the writer and its version (and model/prompt, for model writers)."""
        ...

    def write_batch(self, requests: Sequence[WriteRequest], *, lang: Lang) -> BatchResult:
        """Entries for every request; never raises for one PR's failure (falls back instead)."""
        ...

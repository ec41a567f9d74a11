"""Write: turn a dossier and its assessment into an :class:`~prdigest.core.models.Entry`.

The template writer (:mod:`.template`) is deterministic, needs no network and is the default.
Every writer has a ``key`` naming everything that shapes its output, so stored entries are
reused exactly when nothing that matters changed.

A writer that talks to a model (:mod:`.llm`) also implements :class:`BatchWriter`: the digest
stage hands it every entry that is not cached yet in one call, so it can batch titles into one
request and run paragraph requests concurrently. Its :class:`BatchResult` says which entries may
be cached (a fallback caused by a network fault or a spent budget must be retried next run) and
what the calls cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from prdigest.core.models import Assessment, Dossier, Entry
from prdigest.core.records import PullRequest

Lang = Literal["zh", "en"]


class Writer(Protocol):
    @property
    def key(self) -> str:
        """Identifies the writer and its version (and model/prompt, for model writers)."""
        ...

    def write(
        self, dossier: Dossier, assessment: Assessment, *, lang: Lang, paragraph: bool
    ) -> Entry:
        """An entry with a title, and a paragraph when ``paragraph`` is true."""
        ...


@dataclass(frozen=True)
class WriteRequest:
    """One entry to write: the PR record (for grounding), its dossier and verdict."""

    pr: PullRequest
    dossier: Dossier
    assessment: Assessment
    paragraph: bool
    entry_key: str


@dataclass(frozen=True)
class UsageRecord:
    """What one logical write cost; ``number`` is ``None`` for the batched titles request."""

    number: int | None
    purpose: Literal["paragraph", "titles"]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    outcome: str = "verified"  # verified | repaired | fallback | error | budget
    estimated: bool = False  # the server sent no usage; tokens were estimated
    entry_key: str | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class BatchResult:
    """Entries by PR number, which of them may be cached, their cost, and notes for the user."""

    entries: Mapping[int, Entry]
    cacheable: frozenset[int]
    usage: tuple[UsageRecord, ...] = ()
    notes: tuple[str, ...] = ()


@runtime_checkable
class BatchWriter(Writer, Protocol):
    def write_batch(self, requests: Sequence[WriteRequest], *, lang: Lang) -> BatchResult:
        """Entries for every request; never raises for one PR's failure (falls back instead)."""
        ...

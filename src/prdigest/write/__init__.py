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

__all__ = [
    "BatchResult",
    "Lang",
    "Neighbour",
    "UsageRecord",
    "WriteRequest",
    "Writer",
    "require_full",
    "same_day",
]


@dataclass(frozen=True)
class Neighbour:
    """Another PR of the same window: its number and title, and the files or symbols both PRs
    touch (empty when they share none)."""

    number: int
    title: str
    shared: tuple[str, ...] = ()


MAX_SHARED = 4


def same_day(dossiers: Sequence[Dossier]) -> dict[int, tuple[Neighbour, ...]]:
    """For each PR of a window, every other PR with what the two touch in common (files first,
    then source symbols); PRs that share something come first."""
    touched: dict[int, tuple[set[str], set[str]]] = {
        d.number: ({f.path for f in d.files}, {s.name for s in d.symbols if not s.in_test})
        for d in dossiers
    }
    out: dict[int, tuple[Neighbour, ...]] = {}
    for d in dossiers:
        files, symbols = touched[d.number]
        found: list[Neighbour] = []
        for other in dossiers:
            if other.number == d.number:
                continue
            o_files, o_symbols = touched[other.number]
            shared = sorted(files & o_files) + sorted((symbols & o_symbols) - {"__init__"})
            found.append(Neighbour(other.number, other.title, tuple(shared[:MAX_SHARED])))
        found.sort(key=lambda n: (not n.shared, n.number))
        out[d.number] = tuple(found)
    return out


def require_full(dossier: Dossier, paragraph: bool) -> None:
    """A paragraph is written from a full dossier only: a triage-depth one lacks the facts it
    cites (see :mod:`prdigest.analyze`); asking for one is a bug of the caller."""
    if paragraph and dossier.depth != "full":
        raise ValueError(
            f"{dossier.ref}: a paragraph needs a full dossier, not a {dossier.depth}-depth one"
        )


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
    neighbours: tuple[Neighbour, ...] = ()  # the other PRs of the window (see :func:`same_day`)
    # another set of phrase variants (template writer): a digest asks for one when an entry
    # would repeat a sentence of an entry before it
    variant: int = 0

    def __post_init__(self) -> None:
        require_full(self.dossier, self.paragraph)

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

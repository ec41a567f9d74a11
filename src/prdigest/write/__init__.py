"""Write: turn a dossier and its assessment into an :class:`~prdigest.models.Entry`.

The template writer (:mod:`.template`) is deterministic, needs no network and is the default.
Every writer has a ``key`` naming everything that shapes its output, so stored entries are
reused exactly when nothing that matters changed.
"""

from __future__ import annotations

from typing import Literal, Protocol

from ..models import Assessment, Dossier, Entry

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

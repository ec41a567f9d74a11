"""The template writer: a deterministic entry built only from dossier facts (DESIGN §1).

A paragraph follows the order of DESIGN §1 — verdict and audience, two to four focus points
anchored on real code names, evidence from the discussion, follow-ups — and is assembled from
the phrasebook, the ``[template]`` part of the language's locale file. Variants are picked by a
stable hash of the PR number, so a re-run prints the same text while neighbouring entries do
not all read alike. Nothing is invented: every backticked name and every @login comes from a
fact of the dossier.

Parts: :mod:`.title`, :mod:`.paragraph` (verdict, shape, assembly and length), :mod:`.focus`,
:mod:`.discussion`, :mod:`.followups`, and :mod:`.phrases` (phrase lookup and cited names).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from prdigest.core.locale import locale
from prdigest.core.models import AreaText, Assessment, Dossier, Entry, Level
from prdigest.write import BatchResult, WriteRequest, require_full
from prdigest.write.template.paragraph import paragraph_for
from prdigest.write.template.phrases import space_cjk
from prdigest.write.template.title import title_for

TEMPLATE_VERSION = "template/16"

__all__ = ["TEMPLATE_VERSION", "TemplateWriter", "repeated", "sentences", "space_cjk", "title_for"]

_SENTENCE_END = re.compile(r"(?<=[。！？!?])")
MIN_SENTENCE = 12  # characters: a shorter sentence ("需要留意。") may repeat


@functools.cache
def _verdict_sentences(lang: str) -> frozenset[str]:
    """Each level's verdict phrase said alone, as a sentence of ``lang``."""
    words = locale(lang)
    return frozenset(words.levels[level].phrase + words.writing.stop for level in Level)


def sentences(paragraph: str | None, lang: str) -> set[str]:
    """The sentences of a paragraph that a digest should not say twice: all but a short one and
    a verdict phrase said alone (the level's own words, the same for every PR of the level)."""
    verdicts = _verdict_sentences(lang)
    parts = (s.strip() for s in _SENTENCE_END.split(paragraph or ""))
    return {s for s in parts if len(s) >= MIN_SENTENCE and s not in verdicts}


def repeated(paragraph: str | None, said: set[str], lang: str) -> set[str]:
    """The sentences of ``paragraph`` that ``said`` (the entries before it) already has: two
    PRs of one area and level open alike when their numbers pick the same variants."""
    return sentences(paragraph, lang) & said


@dataclass(frozen=True)
class TemplateWriter:
    """Deterministic writer; the default (no network, no model)."""

    @property
    def key(self) -> str:
        return TEMPLATE_VERSION

    def write_batch(self, requests: Sequence[WriteRequest], *, lang: str) -> BatchResult:
        entries = {
            r.dossier.number: self.write(
                r.dossier,
                r.assessment,
                lang=lang,
                paragraph=r.paragraph,
                area=r.area,
                variant=r.variant,
            )
            for r in requests
        }
        return BatchResult(entries=entries, cacheable=frozenset(entries))

    def write(
        self,
        dossier: Dossier,
        assessment: Assessment,
        *,
        lang: str,
        paragraph: bool,
        area: AreaText | None = None,
        variant: int = 0,
    ) -> Entry:
        """One entry; ``area`` is the primary area's name and readers in ``lang``; ``variant``
        another choice of phrase variants (see :func:`repeated`)."""
        require_full(dossier, paragraph)
        title = title_for(dossier, lang)
        if not paragraph or assessment.level is Level.LIST_ONLY:
            return Entry(
                repo=dossier.repo,
                number=dossier.number,
                lang=lang,
                title=title,
                paragraph=None,
                writer="template",
            )
        text, cited = paragraph_for(dossier, assessment, lang, area, variant)
        refs = tuple(r for r in cited.refs.values() if r.path)
        return Entry(
            repo=dossier.repo,
            number=dossier.number,
            lang=lang,
            title=title,
            paragraph=text,
            writer="template",
            cites=tuple(cited.ids),
            code_refs=refs,
        )

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

TEMPLATE_VERSION = "template/67"

__all__ = [
    "TEMPLATE_VERSION",
    "TemplateWriter",
    "repeated",
    "repeats",
    "says_all",
    "sentences",
    "space_cjk",
    "title_for",
]

_SENTENCE_END = re.compile(r"(?<=[。！？!?])")
_CLAUSE_END = re.compile(r"(?<=[；;])")
MIN_SENTENCE = 12  # characters: a shorter sentence ("需要留意。") may repeat
# what differs between two firings of one phrase: quoted PR text, code names, numbers
_SAID = r"「[^」]*」|“[^”]*”|\"[^\"]*\"|`[^`]*`"
_FILLED = re.compile(_SAID + r"|\d+(?:[.,]\d+)*")


@functools.cache
def _verdict_sentences(lang: str) -> frozenset[str]:
    """Each level's verdict phrase said alone, as a sentence of ``lang``."""
    words = locale(lang)
    return frozenset(words.levels[level].phrase + words.writing.stop for level in Level)


@functools.cache
def _followup_leads(lang: str) -> tuple[str, ...]:
    leads = locale(lang).template["followup"]["lead"]
    return tuple(leads) if isinstance(leads, list) else (leads,)


def _clauses(sentence: str, lang: str) -> list[str]:
    """A follow-up sentence ("后续建议：A；B。") as its clauses without the lead: each clause is
    a phrase of its own, whichever lead opened it."""
    lead = next((x for x in _followup_leads(lang) if sentence.startswith(x)), None)
    if lead is None:
        return [sentence]
    return [c.strip() for c in _CLAUSE_END.split(sentence[len(lead) :]) if c.strip()]


def sentences(paragraph: str | None, lang: str) -> set[str]:
    """The phrases of a paragraph that a digest should not say twice, each as its wording with
    the quoted text, code names and numbers it was filled with masked (two PRs whose bodies
    are quoted by the same words repeat the words); all but a short sentence and a verdict
    phrase said alone (the level's own words, the same for every PR of the level)."""
    verdicts = _verdict_sentences(lang)
    found = set()
    for sentence in (s.strip() for s in _SENTENCE_END.split(paragraph or "")):
        if len(sentence) < MIN_SENTENCE or sentence in verdicts:
            continue
        for clause in _clauses(sentence, lang):
            if len(clause) >= MIN_SENTENCE:  # a clause ends with "；" or the sentence's stop
                found.add(_FILLED.sub("…", clause).rstrip("。！？!?；;."))
    return found


def repeated(paragraph: str | None, said: set[str], lang: str) -> set[str]:
    """The phrases of ``paragraph`` that ``said`` (the entries before it) already has: two
    PRs of one area and level open alike when their numbers pick the same variants."""
    return sentences(paragraph, lang) & said


def says_all(paragraph: str | None, other: str | None) -> bool:
    """Whether ``paragraph`` says every code name and quote ``other`` says: a rewording that
    keeps its content (another variant whose length made a quote go does not)."""
    return set(re.findall(_SAID, other or "")) <= set(re.findall(_SAID, paragraph or ""))


def repeats(paragraphs: Sequence[str | None], lang: str) -> list[str]:
    """The phrases that ``paragraphs`` (one digest's, in order) say again, once per repeat."""
    said: set[str] = set()
    again: list[str] = []
    for paragraph in paragraphs:
        own = sentences(paragraph, lang)
        again += sorted(own & said)
        said |= own
    return again


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

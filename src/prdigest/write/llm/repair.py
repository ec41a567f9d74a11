"""Drafts from a model reply, their findings, and the fixes prdigest makes without a call.

Importable on their own (the batch engine verifies imported replies with the same functions):

* :func:`parse_draft` — the title, paragraph and cites of a reply's JSON object;
* :func:`check_draft` — the verifier's problems of a draft (:mod:`.verify`);
* :func:`fix_draft` — deterministic fixes, tried before any repair request: the verdict phrase
  and readers written by prdigest when the draft lacks them, a sentence that carries an
  unsupported name, figure or claim dropped (never the opening one), a paragraph over the length
  bound trimmed at a sentence end. The language rule cannot be fixed here: it is reported as
  such, and only a repair request can meet it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from prdigest.core.locale import locale
from prdigest.core.models import Assessment
from prdigest.write.llm.prompt import opener
from prdigest.write.llm.verify import (
    Grounds,
    Problem,
    paragraph_bounds,
    verdict_of,
    verify_entry,
)

# problems a dropped sentence removes (their first argument is the offending text)
DROPPABLE = frozenset(
    {
        "unknown_name",
        "unknown_path",
        "unknown_login",
        "unknown_figure",
        "unsupported_claim",
        "invented_review",
    }
)


@dataclass(frozen=True)
class Draft:
    title: str
    paragraph: str | None
    cites: tuple[str, ...]


def parse_draft(data: dict[str, Any] | None, paragraph: bool) -> Draft | None:
    """The draft in a reply's JSON object; ``None`` when it lacks the asked-for strings."""
    if not data or not isinstance(data.get("title"), str):
        return None
    text = data.get("paragraph")
    if paragraph and not isinstance(text, str):
        return None
    cites = data.get("cites")
    ids = tuple(str(c) for c in cites) if isinstance(cites, list) else ()
    return Draft(data["title"].strip(), text.strip() if isinstance(text, str) else None, ids)


def check_draft(
    draft: Draft, grounds: Grounds, assessment: Assessment, lang: str, verdict: str
) -> list[Problem]:
    return verify_entry(draft.title, draft.paragraph, grounds, assessment, lang, verdict)


def sentences(text: str) -> list[str]:
    """The sentences of a paragraph, their end punctuation kept (Chinese or Latin)."""
    if re.search(r"[。；！？]", text):
        parts = re.findall(r"[^。；！？]+[。；！？]*", text)
    else:
        parts = re.findall(r".+?(?:[.!?](?=\s|$)|$)", text)
    return [p for p in (x.strip() for x in parts) if p]


def _join(parts: Sequence[str], lang: str) -> str:
    return locale(lang).writing.join.join(parts)


@dataclass(frozen=True)
class Fixed:
    draft: Draft
    fixes: tuple[str, ...]  # what prdigest changed, as messages in the entry's language


def fix_draft(
    draft: Draft,
    problems: Sequence[Problem],
    assessment: Assessment,
    lang: str,
    verdict: str,
    audience: str | None,
) -> Fixed | None:
    """The draft with every problem fixed that prdigest can fix itself, or ``None`` when a
    problem remains that only the model can fix (the caller re-checks the result)."""
    if draft.paragraph is None or any(p.field == "title" for p in problems):
        return None
    words = locale(lang).verify
    text = draft.paragraph
    fixes: list[str] = []
    codes = {p.code for p in problems}
    if not codes <= DROPPABLE | {"verdict", "length"}:
        return None  # language, form, borrowed or thin content: the model has to rewrite
    if "verdict" in codes:
        if verdict_of(text) is not None:
            return None  # the draft states another verdict: not ours to rewrite
        text = _join([opener(verdict, audience, lang), text], lang)
        fixes.append(str(words["fixed_verdict"]))
    bad = [p.args[0] for p in problems if p.code in DROPPABLE and p.args]
    if bad:
        parts = sentences(text)
        kept = [parts[0]] + [s for s in parts[1:] if not any(b in s for b in bad)]
        if any(b in parts[0] for b in bad) or len(kept) == len(parts):
            return None
        fixes.append(str(words["fixed_dropped"]).format(len(parts) - len(kept)))
        text = _join(kept, lang)
    low, high = paragraph_bounds(assessment.level, lang)
    if len(text) > high:
        parts = sentences(text)
        while len(parts) > 1 and len(_join(parts, lang)) > high:
            parts.pop()
        text = _join(parts, lang)
        if len(text) > high:
            return None
        fixes.append(str(words["fixed_length"]).format(len(text)))
    if len(text) < low:
        return None
    return Fixed(replace(draft, paragraph=text), tuple(fixes))


def same_answer(a: str, b: str) -> bool:
    """Whether two replies say the same (whitespace aside): a repeated answer ends repairs."""
    return " ".join(a.split()) == " ".join(b.split())

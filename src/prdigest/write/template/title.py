"""Titles: the verb of the change, the subject, and the claimed figure when the body states one.

A template cannot translate an English PR title, so a Chinese title is the Chinese verb of the
change (from the title's own leading verb when the phrasebook knows it, else from the kind),
then the rest of the title in English, then the claimed figure. A ``Component:`` prefix stays
in front. A language whose locale does not translate titles keeps the PR's own subject.
"""

from __future__ import annotations

import re

from prdigest.core.models import ClaimFact, Dossier, Kind
from prdigest.write.template.phrases import Phrases

TITLE_SUBJECT_LIMIT = 80

_COMPONENT = re.compile(r"^(?P<component>[A-Za-z][\w./+ -]{0,28}?):\s+(?P<rest>\S.*)$")
_LEAD_WORD = re.compile(r"^(?P<word>[A-Za-z]+)\b\s*")


def title_for(dossier: Dossier, lang: str) -> str:
    """Chinese (or English) verb of the change, the subject, and the claimed figure if any."""
    p = Phrases(lang, dossier.number)
    subject = dossier.subject.strip().rstrip(".")
    if dossier.kind is Kind.REVERT and dossier.reverts:
        inner = re.sub(r'^revert\s*"?|"\s*$', "", subject, flags=re.I).strip()
        inner = re.sub(r"^\s*(?:\[[^\]]{1,40}\]\s*)+", "", inner)
        inner = re.sub(r"\s*\(#\d+\)\s*\"?$", "", inner)
        subject = _clip_words(inner, TITLE_SUBJECT_LIMIT)
        title = f"{p.get('kind_verb', 'revert')} #{dossier.reverts}: {subject}"
        return p.finish(title)
    if not p.w.translate_titles:  # the PR's own title already says it best
        return subject + _title_figure(dossier, p)
    component = ""
    match = _COMPONENT.match(subject)
    if match and " " not in match["component"].strip():
        component, subject = match["component"], match["rest"]
    verb, rest = _verb_and_rest(subject, dossier.kind, p)
    joiner = "" if verb.endswith(p.w.colon) else " "
    title = f"{verb}{joiner}{_clip_words(rest, TITLE_SUBJECT_LIMIT)}"
    if component:
        title = f"{component}{p.w.colon}{title}"
    title += _title_figure(dossier, p)
    return p.finish(title)


def _verb_and_rest(subject: str, kind: Kind, p: Phrases) -> tuple[str, str]:
    match = _LEAD_WORD.match(subject)
    if match:
        verb = p.book.get("lead_verb", {}).get(match["word"].lower())
        rest = subject[match.end() :].strip()
        if verb and rest:
            return verb, rest
    verb = p.get("kind_verb", kind.value)
    if not verb.endswith(p.w.colon.strip()):
        verb += p.w.colon  # the subject keeps its own English verb: "修复：Clamp …"
    return verb, subject


def _clip_words(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:-") + "…"


RELATIVE = re.compile(r"^[+\-~]|[x×]$|\d[-~～–]\d")  # +4.6%, -5~9%, 3.8x: a change, not a level
STRONG_METRIC = frozenset(
    {
        "throughput",
        "latency",
        "itl",
        "ttft",
        "tpot",
        "e2e",
        "end-to-end",
        "speedup",
        "speed-up",
        "faster",
        "goodput",
        "qps",
        "tok/s",
        "吞吐",
        "延迟",
        "加速",
        "memory",
        "显存",
    }
)


def _figure_size(figure: str) -> float:
    numbers = re.findall(r"\d+(?:\.\d+)?", figure.replace(",", ""))
    return max((float(n) for n in numbers), default=0.0)


def title_claim(dossier: Dossier) -> tuple[ClaimFact, bool] | None:
    """The claim a title may carry, and whether it is the best of a table ("up to").

    Only a relative figure (signed or ranged percentage, or a multiplier) of a performance
    metric, on a perf or feature PR: a fix's repro numbers are no promise of an effect.
    """
    if dossier.kind not in (Kind.PERF, Kind.FEATURE):
        return None
    strong = [
        c
        for c in dossier.claims
        if (c.metric or "").lower() in STRONG_METRIC and RELATIVE.search(c.figure)
    ]
    if not strong:
        return None
    prose = [c for c in strong if not c.in_table]
    if prose:  # the author's own summary sentence beats any single table row
        return prose[0], False
    best = max(strong, key=lambda c: _figure_size(c.figure))
    return best, len(strong) > 1


def _title_figure(dossier: Dossier, p: Phrases) -> str:
    found = title_claim(dossier)
    if found is None:
        return ""
    claim, up_to = found
    prefix = p.word("followup", "up_to") if up_to else ""
    return f"{p.w.comma}{p.metric(claim.metric)} {prefix}{claim.figure}"

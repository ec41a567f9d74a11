"""Prompt building for the LLM writer, from the ``[llm]`` part of the language's locale file.

The instructions live in the data file, not in code; this module only fills placeholders.
:data:`PROMPT_VERSION` names the prompt's structure; a change of its words changes the
locale's content key, which every stored entry's key includes, so entries are rewritten. PR
text only ever enters as a value inside the PR-data block, which is fenced by a marker derived
from a hash of the block (a PR cannot close a fence whose text depends on its own content) and
declared as data, not instructions.

What the model is told is fixed by the program: the verdict phrase (from triage's level), the
audience, the facts with their ids. It writes; it does not judge (DESIGN §1).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from prdigest.core.locale import locale
from prdigest.core.models import Assessment, Dossier, Level
from prdigest.core.records import PullRequest
from prdigest.write import Neighbour
from prdigest.write.llm import budget as b

Message = dict[str, str]

PROMPT_VERSION = "entry-v6"
FENCE_PREFIX = "<<<PR-DATA-"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
# Shares of the per-PR budget left after the instructions, applied only when not all fits.
SHARES = {"facts": 0.35, "body": 0.15, "discussion": 0.15, "diff": 0.35}
LEFTOVER_ORDER = ("facts", "body", "diff", "discussion")
MIN_DATA_TOKENS = 600
# Budget by level: a must-read PR gets the whole prompt room, the others a slice of it.
LEVEL_SHARES = {
    Level.MUST_READ: 1.0,
    Level.WORTH_READING: 0.45,
    Level.SKIM: 0.4,
    Level.SKIP: 0.25,
    Level.LIST_ONLY: 0.25,
}
MIN_LEVEL_BUDGET = 1_500
MAX_NEIGHBOURS = 5
# Of a PR's budget, at most this much for test hunks (the new tests are facts already).
TEST_SHARE = 0.15
# Hunks for a short entry (one detail in 60–200 characters): the most salient ones only; the
# names of the changed lines not shown still come in the diff's names index.
SHORT_DIFF_TOKENS = 1_000


def level_budget(room: int, level: Level) -> int:
    """Prompt tokens for a PR of ``level`` out of ``room`` (the configured budget within the
    server's context)."""
    return min(room, max(MIN_LEVEL_BUDGET, int(room * LEVEL_SHARES[level])))


def prompt_spec(lang: str) -> dict[str, str]:
    return locale(lang).llm


def prompt_version() -> str:
    return PROMPT_VERSION


def fill(template: str, **values: str) -> str:
    """Replace ``{name}`` placeholders by value; other braces (JSON examples) stay as they are."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template).strip()


def verdict_phrase(assessment: Assessment, lang: str, area_name: str | None = None) -> str:
    """The phrase the paragraph must open with, for the level triage computed; a worth-reading
    PR for one area's readers names the area (``area_name``, in ``lang``)."""
    text = locale(lang).levels[assessment.level]
    if assessment.level is Level.WORTH_READING and area_name and assessment.audience:
        return (text.phrase_in_area or text.phrase).format(area=area_name)
    return text.phrase


def fence_for(data: str) -> tuple[str, str]:
    """A fence marker for ``data`` and the data with any look-alike marker defused."""
    safe = data.replace(FENCE_PREFIX, "<<< PR-DATA-")
    return f"{FENCE_PREFIX}{hashlib.sha256(safe.encode()).hexdigest()[:10]}>>>", safe


@functools.cache
def _glossary(lang: str) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """One pattern for every English term of the glossary, and each term's line."""
    glossary = locale(lang).glossary
    lines: dict[str, str] = {}
    for section in ("term", "metric"):
        for english, chinese in glossary.get(section, {}).items():
            lines.setdefault(english, f"{english} → {chinese}")
    if not lines:
        return None, lines
    terms = sorted(lines, key=len, reverse=True)
    pattern = re.compile(r"(?<![a-z])(" + "|".join(map(re.escape, terms)) + r")(?![a-z])")
    return pattern, lines


def glossary_lines(text: str, lang: str) -> str:
    """The glossary entries whose English term occurs in ``text`` (keeps the prompt short)."""
    pattern, lines = _glossary(lang)
    if pattern is None:
        return ""
    found = set(pattern.findall(text.lower()))
    return "\n".join(line for term, line in lines.items() if term in found)


def reviews_line(d: Dossier) -> str:
    """Whether reviews are unknown (the record has no review data), absent, or how many."""
    if not d.coverage.discussion:
        return "reviews: unknown (the record has no review data; say nothing about review)"
    people = [r for r in d.reviewers if not r.is_bot]
    if not people and not d.threads and not d.remarks:
        return "reviews: none (nobody reviewed or commented; say nothing about review)"
    return (
        f"reviews: {len(people)} reviewer(s), {len(d.threads)} thread(s), "
        f"{len(d.remarks)} remark(s)"
    )


def overview(pr: PullRequest, d: Dossier) -> str:
    areas = ", ".join(a.id for a in d.areas) or "-"
    checks = ""
    if d.checks:
        failed = f", failed: {', '.join(d.checks.failed)}" if d.checks.failed else ""
        checks = f"\nchecks: {d.checks.succeeded}/{d.checks.total} passed{failed}"
    return (
        f"PR #{d.number}: {pr.title}\n"
        f"author @{d.author or '?'} · +{d.additions}/−{d.deletions} · {d.changed_files} files · "
        f"kind {d.kind.value} · areas {areas} · diff coverage {d.coverage.label}{checks}\n"
        f"{reviews_line(d)}"
    )


def same_day_block(neighbours: Sequence[Neighbour]) -> str:
    """Other PRs of the window that touch the same files or symbols: number, title, what."""
    lines = [
        f"#{n.number} {n.title} (both touch: {', '.join(n.shared)})" for n in neighbours if n.shared
    ][:MAX_NEIGHBOURS]
    return "\n".join(lines)


@dataclass(frozen=True)
class EntryPrompt:
    """Messages for one PR and what went into them (for budgets and benchmarks)."""

    messages: tuple[Message, ...]
    tokens: int  # estimated prompt tokens
    fact_ids: frozenset[str]  # facts listed in the prompt
    key_ids: frozenset[str]  # key facts of the dossier
    hunks_shown: int
    hunks_total: int
    verdict: str
    item: str = ""  # the PR's block of a pack request: its verdict, length and fenced data
    glossary: str = ""  # the glossary lines of its PR

    @property
    def system_tokens(self) -> int:
        return b.estimate_tokens(self.messages[0]["content"])


def deep_level(level: Level) -> bool:
    """Whether an entry of ``level`` gets the close-read paragraph (else a short one)."""
    return level in (Level.MUST_READ, Level.WORTH_READING)


def system_message(
    lang: str, style: str, level: Level = Level.MUST_READ, *, pack: bool = False
) -> str:
    """The instructions: in full for a close-read paragraph; for a short one only what a
    short entry needs (the same rules on sources and untrusted data, in fewer words). A pack
    request asks for one JSON item per PR."""
    spec = prompt_spec(lang)
    key = "system" if deep_level(level) else "system_short"
    return fill(spec[key], style=style, output=spec["output_pack" if pack else "output_one"])


@dataclass(frozen=True)
class Readers:
    """The primary area's name and the readers to name, in the prompt's language."""

    area: str | None = None
    audience: str | None = None


def _user(
    lang: str, d: Dossier, a: Assessment, data: str, gloss: str, who: Readers, key: str = "user"
) -> str:
    """The user message of one PR (``key`` ``user``), or its block of a pack (``pack_item``)."""
    spec = prompt_spec(lang)
    deep = deep_level(a.level)
    audience = who.audience
    fence, safe = fence_for(data)
    return fill(
        spec[key],
        repo=d.repo,
        number=str(d.number),
        verdict=verdict_phrase(a, lang, who.area),
        audience=fill(spec["audience"], audience=audience) if audience else "",
        length=spec["length_deep" if deep else "length_short"],
        glossary=gloss or spec["no_glossary"],
        notation=spec["notation"],
        fence=fence,
        data=safe,
    )


def allocate(room: int, needs: dict[str, int]) -> dict[str, int]:
    """Tokens per block: everything when it all fits, else each block its share, then the
    unused remainder to the blocks that still need it, facts first."""
    if sum(needs.values()) <= room:
        return dict(needs)
    grant = {k: min(need, int(room * SHARES[k])) for k, need in needs.items()}
    left = room - sum(grant.values())
    for k in LEFTOVER_ORDER:
        extra = max(0, min(left, needs[k] - grant[k]))
        grant[k] += extra
        left -= extra
    return grant


def entry_prompt(
    pr: PullRequest,
    d: Dossier,
    a: Assessment,
    *,
    lang: str,
    style: str,
    budget_tokens: int,
    readers: Readers | None = None,
    neighbours: Sequence[Neighbour] = (),
) -> EntryPrompt:
    """System and user messages for one PR, the PR data cut to fit ``budget_tokens``: the
    overview (with whether reviews are known), the dossier's facts, other PRs of the day on the
    same code, every body section, the discussion, then the most salient hunks."""
    system = system_message(lang, style, a.level)
    sections = b.body_sections(pr, d)
    in_description = b.described(d, sections)
    lines = [x for x in b.fact_lines(d) if x.id not in in_description]
    talk = b.discussion_items(pr, d)
    gloss = glossary_lines(" ".join([pr.title, pr.body or "", *(x.text for x in lines)]), lang)
    head = overview(pr, d)
    nearby = same_day_block(neighbours)
    if nearby:
        head += "\n\n## same day: other PRs of the window on the same code\n" + nearby
    who = readers or Readers()
    skeleton = _user(lang, d, a, head, gloss, who)
    room = max(MIN_DATA_TOKENS, budget_tokens - b.estimate_tokens(system + skeleton) - 80)
    ranked = b.rank_hunks(pr, d)  # once: the diff's need and its slice
    needs = {
        "facts": b.facts_tokens(lines),
        "body": sum(b.estimate_tokens(t) + 4 for _, t in sections),
        "discussion": sum(b.estimate_tokens(t) + 1 for t in talk),
        "diff": sum(h.tokens for h in ranked) + 60,
    }
    if not deep_level(a.level):
        needs["diff"] = min(needs["diff"], SHORT_DIFF_TOKENS)
    grant = allocate(room, needs)
    facts, _ = b.pack_facts(lines, grant["facts"])
    talk_text, _ = b.fit_items(talk, grant["discussion"])
    facts_text = b.render_facts(facts)
    listed = {f.path for f in d.files if f.id in {x.id for x in facts}}
    diff = b.diff_slice(
        pr,
        d,
        grant["diff"],
        known=facts_text,
        listed=listed,
        test_tokens=int(budget_tokens * TEST_SHARE),
        ranked=ranked,
    )
    whole = diff.shown == diff.total and not diff.names_only and not diff.clipped
    blocks = [
        head,
        "## facts (cite by id)\n" + facts_text,
        "## description\n" + (b.fit_sections(sections, grant["body"]) or "(empty)"),
        # no discussion block when there is none: the overview's reviews line says so
        *(["## discussion\n" + talk_text] if talk_text else []),
        ("## diff" if whole else "## diff (chosen by relevance, not complete)")
        + "\n"
        + (diff.text or "(no diff)"),
    ]
    data = "\n\n".join(blocks)
    user = _user(lang, d, a, data, gloss, who)
    return EntryPrompt(
        messages=({"role": "system", "content": system}, {"role": "user", "content": user}),
        tokens=b.estimate_tokens(system) + b.estimate_tokens(user),
        fact_ids=frozenset(x.id for x in facts) | in_description,
        key_ids=b.key_fact_ids(d),
        hunks_shown=diff.shown,
        hunks_total=diff.total,
        verdict=verdict_phrase(a, lang, who.area),
        item=_user(lang, d, a, data, gloss, who, key="pack_item"),
        glossary=gloss,
    )


def pack_messages(
    repo: str, entries: Sequence[EntryPrompt], lang: str, style: str, level: Level
) -> tuple[Message, ...]:
    """One request for several PRs' entries: the instructions once (for ``level``, with
    ``style``; the length, the same for every entry of a pack), then each PR's block: its
    verdict and readers, and its data exactly as its own request would carry it."""
    spec = prompt_spec(lang)
    lines = dict.fromkeys(x for e in entries for x in e.glossary.splitlines() if x)
    user = fill(
        spec["pack_user"],
        repo=repo,
        count=str(len(entries)),
        length=spec["length_deep" if deep_level(level) else "length_short"],
        glossary="\n".join(lines) or spec["no_glossary"],
        notation=spec["notation"],
        items="\n\n".join(e.item for e in entries),
    )
    system = system_message(lang, style, level, pack=True)
    return ({"role": "system", "content": system}, {"role": "user", "content": user})


def repair_messages(
    d: Dossier, answer: str, problems: Sequence[str], verdict: str, lang: str
) -> tuple[Message, ...]:
    """A repair request: only the failed answer and the verifier's findings (no PR data, no
    style examples), so it costs a fraction of the first attempt and fits any context."""
    spec = prompt_spec(lang)
    user = fill(
        spec["repair"],
        repo=d.repo,
        number=str(d.number),
        answer=answer,
        problems="\n".join(f"- {p}" for p in problems),
        verdict=verdict,
    )
    return (
        {"role": "system", "content": fill(spec["repair_system"])},
        {"role": "user", "content": user},
    )


def opener(verdict: str, audience: str | None, lang: str) -> str:
    """The opening sentence prdigest writes itself when a draft lacks the verdict phrase."""
    spec = prompt_spec(lang)
    if audience:
        return fill(spec["opener_audience"], verdict=verdict, audience=audience)
    return fill(spec["opener"], verdict=verdict)


def title_line(pr: PullRequest, d: Dossier) -> str:
    files = ", ".join(f.path.rsplit("/", 1)[-1] for f in d.files[:4])
    more = f" (+{len(d.files) - 4} more)" if len(d.files) > 4 else ""
    claim = f" | claim: {d.claims[0].metric or ''} {d.claims[0].figure}" if d.claims else ""
    return f"#{d.number} {pr.title} | kind {d.kind.value} | files: {files}{more}{claim}"


def titles_messages(
    repo: str, items: Sequence[tuple[PullRequest, Dossier]], lang: str
) -> tuple[Message, ...]:
    spec = prompt_spec(lang)
    lines = [title_line(pr, d) for pr, d in items]
    data = "\n".join(lines)
    fence, safe = fence_for(data)
    gloss = glossary_lines(data, lang)
    user = fill(
        spec["titles_user"],
        repo=repo,
        glossary=gloss or spec["no_glossary"],
        fence=fence,
        data=safe,
    )
    return (
        {"role": "system", "content": fill(spec["titles_system"])},
        {"role": "user", "content": user},
    )


def titles_repair_messages(
    repo: str, failed: Sequence[tuple[str, str, Sequence[str]]], lang: str
) -> tuple[Message, ...]:
    """A titles repair: for each failed PR only its list line, the draft and the findings."""
    spec = prompt_spec(lang)
    lines = [
        f"{line}\n  draft: {draft}\n" + "\n".join(f"  - {p}" for p in problems)
        for line, draft, problems in failed
    ]
    fence, safe = fence_for("\n".join(lines))
    text = fill(spec["titles_repair"], problems=f"{fence}\n{safe}\n{fence}")
    return (
        {"role": "system", "content": fill(spec["titles_system"])},
        {"role": "user", "content": f"{repo}\n{text}"},
    )

"""The why of a PR, deterministically: the body's root cause or purpose reduced to its claim,
the before → after figures it reports, the design ideas the diff shows, and the user-facing
change it states; for a body that gives no reason, where the paragraph has room, what its
purpose section says the change does (:func:`summary_sentence`).

Nothing here paraphrases: a body sentence is quoted as reduced by ``analyze.body.reduce_claim``
(code names and figures verbatim), a design idea is said only where a design fact of its
pattern exists, and its words come from the locale's ``[template.design]`` table.
"""

from __future__ import annotations

import re

from prdigest.analyze.body import SEVERE, prose_sentences, reduce_claim
from prdigest.analyze.design import GUARDED, REMOVED_SIDE
from prdigest.core.models import DesignFact, Dossier, RationaleFact, SectionFact
from prdigest.write.template.phrases import Cited, Phrases

# design patterns worth a sentence, most telling first (ids of analyze.design.PATTERNS)
DESIGN_ORDER = (
    "fail_closed",
    "refusal_removed",
    "guarded_code",
    "state_enum",
    "extension_point",
    "lock",
    "event",
    "host_sync_removed",
    "thread_pool",
    "stream",
    "async",
    "version_gate",
    "soft_fail",
    "run_superseded",
    "run_group",
    "secret",
)
# a pattern said instead of another: a group that cancels the run in progress needs no word on
# how its runs wait
SAID_INSTEAD = {"run_group": "run_superseded"}
QUOTE_LIMIT = 90  # a quoted claim longer than this is cut at a word …
QUOTE_WHOLE = 110  # … unless it ends within this: a cut a few words short of the end says less
_CAUSE = re.compile(
    r"\bbecause\b|\bdue to\b|\broot[- ]?caus|\bcaused by\b|\bthe reason\b|\bsince\b|"
    r"\bas a result of\b|根因|原因是|由于",
    re.I,
)
_CODE_SPAN = re.compile(r"`([^`\n]{1,80})`")
_MENTION = re.compile(r"@(?=[A-Za-z_])")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def known_names(d: Dossier) -> set[str]:
    """Code names the diff shows (definitions, salient identifiers, edits, tests, files)."""
    names = {s.name for s in d.symbols} | {x.name for x in d.salient} | {t.name for t in d.tests}
    names |= {f.path.rsplit("/", 1)[-1] for f in d.files}
    names |= {e.before for e in d.edits} | {e.after for e in d.edits}
    return names


def body_quote(text: str, d: Dossier, cited: Cited) -> str:
    """A reduced body sentence for a quote: a code span stays code only when the diff shows that
    name (so every code name of an entry is real code); other spans lose their backticks."""
    known = known_names(d)

    def span(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        bare = name.removesuffix("()")
        if bare in known or bare.rsplit(".", 1)[-1] in known or _IDENT.fullmatch(bare):
            return cited.name(name)
        return name

    return _MENTION.sub("", _CODE_SPAN.sub(span, text))


_MEASUREMENT = re.compile(r"^[^.:]{0,40}:\s*[-+~]?\d[\d.,]*\s*%?\S*$|^\W*\d")


def _in_results(r: RationaleFact, d: Dossier) -> bool:
    """A sentence of a test, result or benchmark section: a report, not the PR's reason."""
    line = r.provenance.line or 0
    before = [s for s in d.sections if (s.provenance.line or 0) <= line]
    section = max(before, key=lambda s: s.provenance.line or 0, default=None)
    results = ("test_plan", "test_result", "benchmark", "user_facing")
    return section is not None and section.name in results


_DANGLING = re.compile(  # a last word that wants more, or a clause cut at its comma
    r"(?:\b(?:by|with|to|of|for|and|or|the|a|an|via|from|in|on|that|which|as|than|by \w+ing)"
    r"|[,;])$",
    re.I,
)
_NOT_THE_PR = r"\b(?!\s+(?:pull request|pr|patch|change|commit)\b)"  # "this PR" is no pointer
_ANAPHOR = re.compile(  # a pointer back in the first three words ("Fix this by …" is fine)
    rf"^(?:\S+\s+){{0,2}}(?:that|these|those|such|it|them){_NOT_THE_PR}|"
    rf"^(?!fix(?:es)? this\b)(?:\S+\s+){{0,2}}this{_NOT_THE_PR}",
    re.I,
)


def _fragment(claim: str) -> bool:
    """A purpose sentence that cannot stand alone in a quote: under five words, ending on a
    word that wants more ("… by calling"; a claim already cut short ends in "…"), or pointing
    back early ("splits that ownership"; "This PR …" is the PR itself)."""
    cut = claim.endswith("…")
    if len(claim.split()) < 5 or (not cut and _DANGLING.search(claim)):
        return True
    return bool(_ANAPHOR.search(claim))


_FILE_NAME = re.compile(
    r"[\w./-]*?([\w-]+\.(?:py|pyi|cpp|cc|cu|h|hpp|c|rs|go|ts|js|yaml|yml|sh|toml|json|md))\b"
)


def _names_untouched_file(text: str, d: Dossier) -> bool:
    """Whether a sentence names a file of the repository the diff does not change (a Python
    module, or a path under one of the PR's top directories): it tells of code elsewhere, or
    of an earlier version of the PR, not of this change. Another project's file (CANN's
    ``log.h``) may well be the cause a fix answers."""
    paths = [f.path for f in d.files] + [f.previous_path for f in d.files if f.previous_path]
    changed = {path.rsplit("/", 1)[-1] for path in paths}
    tops = {path.split("/", 1)[0] for path in paths if "/" in path}
    for match in _FILE_NAME.finditer(text):
        name, whole = match.group(1), match.group(0)
        ours = name.endswith(".py") or whole.split("/", 1)[0] in tops
        if ours and name not in changed:
            return True
    return False


# a sentence that says what the PR changes ("Overrides `apply_top_k_top_p` …", "Feature:
# adds …"): when the code it names is not in the diff, it describes another version of it
_SAYS_A_CHANGE = re.compile(
    r"^(?:[^:]{0,50}:\s*)?(?:this (?:pr|pull request|change|patch)\s+)?(?:adds?|overrides?|"
    r"updates?|introduces?|implements?|removes?|replaces?|moves?|refactors?|uses?|supports?|"
    r"enables?|fix(?:es)?|changes?|makes?|switch(?:es)?|rewrites?|patch(?:es)?)\b",
    re.I,
)


def best_rationale(d: Dossier) -> RationaleFact | None:
    """The sentence that says most about why: a root cause, else a symptom that names a severe
    effect, else the motivation — never a measurement, a line of the test results or the title
    said again. Of the sentences of one kind, one that names code comes first (it says where)."""
    found: list[tuple[int, int, RationaleFact]] = []
    for rank, kind in enumerate(("root_cause", "symptom", "motivation")):
        for r in d.rationale:
            if r.kind != kind or not r.claim or len(r.claim) < 20:
                continue
            if _MEASUREMENT.search(r.claim) or _in_results(r, d):
                continue
            if _names_untouched_file(r.claim, d) or (
                r.code_unseen and _SAYS_A_CHANGE.match(r.claim)
            ):
                continue  # what it says was changed is not in this diff
            if _title_words(r.claim, d.title):
                continue  # the title again (a body that repeats it): the headline says it
            spans = len(set(_CODE_SPAN.findall(r.claim)))
            if kind == "symptom" and not SEVERE.search(r.claim):
                continue
            if kind == "motivation" and (_fragment(r.claim) or _RELAYED.search(r.claim)):
                continue
            if not r.claim.endswith("…") and _DANGLING.search(r.claim):
                continue  # "Regression coverage was added for": the rest is a list it lost
            found.append((rank, -min(spans, 2), r))
    return min(found, key=lambda x: x[:2])[2] if found else None


# a version gate is the design of a PR about versions; elsewhere it is a compatibility line
_ABOUT_VERSIONS = re.compile(r"\bversion|\bcompat|\bupstream|main2main|\bv?\d+\.\d+\.\d+", re.I)


def design_ideas(d: Dossier, limit: int = 2) -> list[DesignFact]:
    """One design fact per pattern worth saying, most telling first (a version gate only in a
    PR whose title is about versions)."""
    chosen: list[DesignFact] = []
    for pattern in DESIGN_ORDER:
        if pattern == "version_gate" and not _ABOUT_VERSIONS.search(d.title):
            continue
        if any(x.pattern == SAID_INSTEAD.get(pattern) for x in chosen):
            continue
        facts = [x for x in d.design if x.pattern == pattern and x.net]
        if facts:  # one whose condition is known says most
            chosen.append(min(facts, key=lambda x: not x.guard))
        if len(chosen) == limit:
            break
    return chosen


def _said_as(r: RationaleFact) -> str:
    """How a sentence is introduced: as a root cause only when it gives one ("because", "due
    to", "caused by" …); a sentence that says what something caused is a symptom; else a note."""
    if r.kind == "root_cause":
        if _CAUSE.search(r.claim):
            return "root_cause"
        return "symptom" if SEVERE.search(r.claim) else "note"
    if r.kind == "motivation" and not r.claim[:1].islower():
        return "note"  # "按描述，这个 PR「…」" needs the PR's own verb ("adds …", "fixes …")
    return r.kind


MAX_SPAN_END = 130  # a cut inside a code name may run on to its end within this


def _clip(text: str, limit: int, whole: int = QUOTE_WHOLE) -> str:
    if len(text) <= max(limit, whole):
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:-")
    opened = cut.rfind("`") if cut.count("`") % 2 else -1
    if opened < 0 and text[len(cut) :].lstrip().startswith("`"):
        opened = text.index("`", len(cut))  # the cut word is a code name
    if opened >= 0:  # keep a code name the cut falls in or before whole if it ends soon
        end = text.find("`", opened + 1)
        cut = text[: end + 1] if 0 <= end < MAX_SPAN_END else text[:opened].rstrip()
    return text if len(cut) >= len(text) else cut + "…"


def _design_key(fact: DesignFact) -> str:
    if fact.pattern == "event":
        return "event_test" if fact.in_test else "event"
    if fact.guard:
        return f"{fact.pattern}_guard" + ("_in" if fact.scope else "")
    return fact.pattern + ("_in" if fact.scope else "")


def design_text(fact: DesignFact, p: Phrases, cited: Cited) -> str:
    """The design idea of ``fact`` in words; a raise is said with the condition it sits under,
    the function it sits in and its exception class (a removed one is linked to its file: its
    line is gone)."""
    line = None if fact.pattern in REMOVED_SIDE else fact.line
    if fact.pattern == "guarded_code":
        guard = cited.name(fact.guard, fact.path, line)
        if not fact.scope:
            return p.get("design", "guarded_code", guard=guard)
        scope = cited.name(fact.scope, fact.path, None)
        return p.get("design", "guarded_code_in", guard=guard, scope=scope)
    if fact.pattern not in GUARDED:
        return p.get("design", _design_key(fact), label=cited.name(fact.label, fact.path, line))
    said = fact.label.removeprefix("raise ") if fact.guard else fact.label
    error = cited.name(said, fact.path, line)
    guard = cited.name(fact.guard, fact.path, line) if fact.guard else ""
    if not fact.scope:
        return p.get("design", _design_key(fact), error=error, guard=guard)
    scope = cited.name(fact.scope, fact.path, None)  # where the condition holds
    return p.get("design", _design_key(fact), error=error, guard=guard, scope=scope)


# a first sentence that points elsewhere, thanks people, plans the merge or is a command line
# says nothing of the change itself
_ELSEWHERE = re.compile(
    r"https?://|#\d|\b(?:same (?:as|to)|it is planned|thanks?\b|cherry[- ]pick|follow(?:s|ing)\b|"
    r"part of|refer to|see (?:also|the)|co-?authored|collaborat|the same\b|todo\b|"
    r"should be merged)|^\W*(?:vllm|python\d?|pytest|pip|uv|export|bash|git)\s|\s--[a-z]",
    re.I,
)
_WORD = re.compile(r"[a-z0-9_]+")
# a purpose that only relays another PR ("syncs the same changes to main") says nothing of this one
_RELAYED = re.compile(
    r"\b(?:the same|these|those) (?:changes?|fix(?:es)?|commits?|modifications?)\b"
    r"|\bcherry[- ]pick",
    re.I,
)


def _title_words(claim: str, subject: str) -> bool:
    """Whether a sentence says mostly what the title says (its words are the title's)."""
    words, title = set(_WORD.findall(claim.lower())), set(_WORD.findall(subject.lower()))
    return not words or len(words & title) >= 0.6 * len(words)


def summary_sentence(d: Dossier) -> tuple[SectionFact, str] | None:
    """For a PR whose body gives no reason: the first sentence of its purpose section that says
    what the change does beyond its title — at least six words, standing alone, pointing to no
    other PR or link — reduced to its claim."""
    for section in d.sections:
        if section.name != "purpose" or section.empty:
            continue
        for _line, sentence in prose_sentences(section.text):
            claim = reduce_claim(sentence)
            if len(claim.split()) < 6 or _ELSEWHERE.search(sentence) or _fragment(claim):
                continue
            if _MEASUREMENT.search(claim) or _title_words(claim, d.subject):
                continue
            if _names_untouched_file(claim, d):
                continue
            return section, claim
    return None


def quoted_rationale(d: Dossier) -> RationaleFact | None:
    """The reason the paragraph quotes: :func:`best_rationale`, unless it points back to a
    sentence it leaves out and says little on its own ("That causes two issues", "This is
    related to [vLLM PR #37728](…)") while the purpose section says what the change does in a
    sentence that stands alone (:func:`summary_sentence`), which then speaks instead. "This
    caused a symbol clash …" still tells the effect, and stays."""
    rationale = best_rationale(d)
    if rationale is None or not _ANAPHOR.search(rationale.claim):
        return rationale
    words = len(rationale.claim.split())
    empty = words < MIN_POINTER_WORDS or _LINK.search(rationale.claim)
    return None if empty and summary_sentence(d) else rationale


MIN_POINTER_WORDS = 6  # a sentence pointing back in fewer words says nothing of its own
_LINK = re.compile(r"https?://|#\d|\]\(")  # a pointer to another PR, issue or page


def summary_part(d: Dossier, p: Phrases, cited: Cited) -> str | None:
    """What the body says the change does, quoted (:func:`summary_sentence`), for a PR whose
    body gives no reason that stands alone (:func:`quoted_rationale`); said only where the
    paragraph has room for it."""
    if quoted_rationale(d) is not None:
        return None
    found = summary_sentence(d)
    if found is None:
        return None
    section, text = found
    cited.fact(section.id)
    return p.get("why_body", "note", claim=body_quote(_clip(text, QUOTE_LIMIT), d, cited))


_LEADING_NUMBER = re.compile(r"^\s*(\d[\d,]*(?:\.\d+)?)")  # ``1,012 tok/s``


def _comparison_key(before: str, after: str) -> str:
    """The comparison phrase that says which way the figure went, when both sides are
    numbers ("由 221 升至 233": a reader need not work out that it grew)."""
    a, b = _LEADING_NUMBER.match(before), _LEADING_NUMBER.match(after)
    if a is None or b is None:
        return "comparison"
    old, new = float(a[1].replace(",", "")), float(b[1].replace(",", ""))
    if old == new:
        return "comparison"
    return "comparison_up" if new > old else "comparison_down"


def why_parts(d: Dossier, p: Phrases, cited: Cited) -> list[str]:
    """Sentences (without the final stop) that say why, in the order a reader wants them."""
    parts: list[str] = []
    rationale = quoted_rationale(d)
    if rationale is not None:
        cited.fact(rationale.id)
        claim = body_quote(_clip(rationale.claim, QUOTE_LIMIT), d, cited)
        parts.append(p.get("why_body", _said_as(rationale), claim=claim))
    comparison = next(iter(d.comparisons), None)
    if comparison is not None:
        cited.fact(comparison.id)
        parts.append(
            p.get(
                "why_body",
                _comparison_key(comparison.before, comparison.after),
                metric=p.metric(comparison.metric),
                before=comparison.before,
                after=comparison.after,
            )
        )
    ideas = design_ideas(d)
    if ideas:
        texts = []
        for fact in ideas:
            cited.fact(fact.id)
            texts.append(design_text(fact, p, cited))
        parts.append(p.get("why_body", "design", ideas=p.word("design", "sep").join(texts)))
    breaking = any(s.kind.value == "breaking_change" for s in d.signals)
    if d.user_facing and not breaking:
        if d.user_facing == "Yes":
            parts.append(p.get("why_body", "user_facing_plain"))
        else:
            parts.append(
                p.get("why_body", "user_facing", change=body_quote(d.user_facing, d, cited))
            )
    return parts


def render_why(parts: list[str], p: Phrases) -> str:
    return p.w.join.join(part + p.stop for part in parts)

"""Titles: what the change does, in the entry's language, with its effect when the PR states one.

A language whose locale translates titles (Chinese) gets a headline built from the PR title's
own words: the lead verb (from the phrasebook, else the kind's verb), the subject's noun phrase
word by word through the glossary (``[glossary.title]``: recurring terms and their written
form; code names, versions and product names kept as written), prepositional phrases moved
before the word they qualify ("X for Y" → "Y 的 X"), and the effect: a relative figure of a
performance metric the body claims, or — for a fix — the symptom the body names (crash, hang,
leak, OOM, wrong output …). A title that would stay mostly English, or whose rendering shows
the grammar did not carry over (:func:`half_translated`: a dangling particle, quotes around
translated words, an English adverb, gerund, participle, auxiliary, relative word or numeral
left standing, a postpositive "only" come out as 仅 at the end), is written as
``【修复】English subject`` instead of a half translation; the PR's own title is shown by the
markdown and html formats, so nothing is lost. Never two prefixes.

A language whose locale does not translate titles keeps the PR's own subject.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.analyze.body import SEVERE
from prdigest.core.models import ClaimFact, Dossier, Kind
from prdigest.write.template.phrases import Phrases
from prdigest.write.template.why import best_rationale

TITLE_SUBJECT_LIMIT = 80
MAX_UNKNOWN_SHARE = 0.34  # more untranslated words than this: the English subject, labelled

_COMPONENT = re.compile(r"^(?P<component>[A-Za-z][\w./+ -]{0,28}?):\s+(?P<rest>\S.*)$")
_TOKEN = re.compile(
    r"</?[A-Za-z][^<>]{0,80}>|`[^`]+`|'[^'\n]{1,60}'|\"[^\"\n]{1,60}\"|(?<![\w/])/[A-Za-z][\w-]*|"
    r"[A-Za-z_][\w.]*(?:=(?:\[[^\]\s]{0,40}\]|[\w.-]+)|\[[^\]\s]{1,60}\])|"
    r"[A-Za-z0-9_@-][\w.+#/'@-]*[\w+#]|[A-Za-z0-9]|"
    r"[^\sA-Za-z0-9]"
)
_CODE_LIKE = re.compile(r"^[`'\"@_<-]|_|\w\.\w|/|\d|^[A-Z][a-z]+[A-Z]|^[A-Z]{2,}s?$|[a-z][A-Z]")
_KEPT = re.compile(r"^[`'\"@</]|[=\[]|^[A-Z][A-Z0-9]{3,}$")  # code, quotes, commands, literals
PARTICIPLES = frozenset(
    {
        "aborted", "finished", "cancelled", "canceled", "preempted", "failed", "dropped",
        "skipped", "evicted", "selected", "required", "disabled", "enabled", "removed", "added",
    }
)  # fmt: skip
_WORD = re.compile(r"^[A-Za-z][A-Za-z'-]*$")
MOVE_VERBS = frozenset(
    {
        "bump", "upgrade", "update", "move", "migrate", "rename", "set", "change", "switch",
        "moves", "port", "relocate", "clamp", "cap", "truncate", "round",
        "convert", "pin", "revert", "increase", "reduce", "extend", "raise", "lower", "restore",
        "downgrade", "limit", "adjust", "align", "adapt", "apply", "pass", "updates",
        "bumps", "sets", "changes", "modify", "modifies", "decrease", "shrink", "grow",
    }
)  # fmt: skip
# symptom words of a body sentence → the key of [template.symptom]
SYMPTOMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("crash", re.compile(r"\bcrash\w*|\bsegfault|\bcore dump", re.I)),
    ("hang", re.compile(r"\bhang\w*|\bstuck\b|\bdeadlock\w*", re.I)),
    ("leak", re.compile(r"\bleak\w*", re.I)),
    ("oom", re.compile(r"\bOOM\b|\bout of memory\b", re.I)),
    ("wrong_output", re.compile(r"\bgarbled\b|\b(?:wrong|incorrect) (?:output|result)", re.I)),
    (
        "slowdown",
        re.compile(
            r"\bperformance regression|\b(?:TPOT|TTFT|ITL|latency|throughput) regression|"
            r"\bdegrad\w+|\bslow(?:er|down)\b",
            re.I,
        ),
    ),
)  # fmt: skip


@dataclass(frozen=True)
class _Rendered:
    text: str
    known: int  # words the glossary or the code-name rule accounted for
    unknown: int  # English words left as they are


# a revert's subject that is the reverted PR's title (quoted, or after "Revert"), said as such
# even when the body names no PR number
_REVERTED_TITLE = re.compile(r'^(?:revert\b|["“])', re.I)


def title_for(dossier: Dossier, lang: str) -> str:
    """The entry's title in ``lang`` (see the module doc)."""
    p = Phrases(lang, dossier.number)
    subject = dossier.subject.strip().rstrip(".")
    if dossier.kind is Kind.REVERT and (dossier.reverts or _REVERTED_TITLE.match(subject)):
        inner = re.sub(r'^(?:revert\s*)?["“]?|["”]\s*$', "", subject, flags=re.I).strip()
        inner = re.sub(r"^\s*(?:\[[^\]]{1,40}\]\s*)+", "", inner)
        inner = re.sub(r"\s*\(#\d+\)\s*\"?$", "", inner)
        subject = _clip_words(inner, TITLE_SUBJECT_LIMIT)
        # a PR that would revert itself has a typo in its body: no number then
        number = f" #{dossier.reverts}" if dossier.reverts not in (None, dossier.number) else ""
        return p.finish(f"{p.get('kind_verb', 'revert')}{number}: {subject}")
    if not p.w.translate_titles:  # the PR's own title already says it best
        return subject + _title_figure(dossier, p)
    component = ""
    match = _COMPONENT.match(subject)
    group = _LEADING_GROUP.match(subject)
    if group:
        component, subject = group["component"].strip(), subject[group.end() :]
    elif match and match["component"].strip().lower() in _CONVENTIONAL_TYPES:
        subject = match["rest"]  # "fix: …" is the kind, said by the title's verb or label
    elif match and (
        " " not in match["component"].strip()
        or (_verb_first(match["rest"], p) and not _verb_first(match["component"], p))
    ):
        # "w4a8 dispatch_ffn_combine: support x_active_mask": what changed comes after the colon
        component, subject = match["component"], match["rest"]
    translated = _sync_title(subject, dossier.kind, p)
    if translated is None:
        translated = translate_subject(subject, dossier.kind, p)
    if translated is None:  # mostly English: label it, do not half translate
        # "【新增】Fix …" contradicts itself; a category (【CI】, 【文档】) does not
        says_fix = subject.split(" ", 1)[0].lower() in _FIX_WORDS and dossier.kind in _ACTIONS
        label = p.get("kind_label", Kind.FIX.value if says_fix else dossier.kind.value)
        head = f"{component}{p.w.colon}" if component else ""
        return p.finish(f"【{label}】{head}{_clip_words(subject, TITLE_SUBJECT_LIMIT)}")
    effect = _title_figure(dossier, p)
    if not effect and _one_fix(translated, p):
        effect = _title_symptom(dossier, p, subject)
    title = f"{component}{p.w.colon}{translated}" if component else translated
    return p.finish(title + effect)


def _verb_first(text: str, p: Phrases) -> bool:
    """Whether a clause opens with a verb the phrasebook translates ("support …", "fix …")."""
    first = text.split(" ", 1)[0].lower()
    return first in p.book.get("lead_verb", {})


# what a sync target may hold: dates (0519), versions (v0.24.0), commits (1f486d9), "commit:"
_SYNC_TARGET = re.compile(
    r"(?:\d{4}|v?\d+(?:\.\d+)+(?:rc\d+|\.post\d+)?|[0-9a-f]{7,40}|commit:?)", re.I
)


def _sync_title(subject: str, kind: Kind, p: Phrases) -> str | None:
    """A title for an upstream-sync PR the phrasebook names by one word (``sync_words``):
    "main2main 0519" → 同步 vLLM 上游至 0519; "main2main upgrade vLLM to v0.21.0" says its
    own verb. None for any other subject, or a target holding other words."""
    book = p.book.get("title", {})
    words = [re.escape(w) for w in book.get("sync_words", ())]
    match = re.match(rf"^(?:{'|'.join(words)})\b[\s:：-]*(.*)$", subject, re.I) if words else None
    if match is None:
        return None
    rest = re.sub(r"\s*\([^()]{1,60}\)\s*$", "", match.group(1)).strip()  # an aside at the end
    if _verb_first(rest, p):
        return translate_subject(rest, kind, p)
    tokens = rest.split()
    if tokens and tokens[0].lower() == "vllm":
        tokens = tokens[1:]
    continued = bool(tokens) and tokens[-1].lower() == "continuation"
    tokens = tokens[:-1] if continued else tokens
    if not all(_SYNC_TARGET.fullmatch(t) for t in tokens):
        return None
    target = " ".join(tokens)
    text = str(book["sync"]).format(target=target) if target else str(book["sync_plain"])
    return text + (str(book["continued"]) if continued else "")


def _clauses(subject: str, verbs: dict[str, str]) -> list[str]:
    """Clauses of a subject: split at ";" always, at "and" or "," only before a verb."""
    out: list[str] = []
    for piece in re.split(r"\s*[;；]\s*", subject):
        start = 0
        for match in re.finditer(r"\s*,?\s+and\s+|\s*,\s+", piece):
            rest = piece[match.end() :]
            following = re.match(r"[A-Za-z-]+(?![\w.])", rest)  # a word
            bare_verb = " " not in piece[start : match.start()].strip()  # "Verify and support X"
            noun = not bare_verb and _noun_first(rest)
            if following and following.group(0).lower() in verbs and not noun:
                out.append(piece[start : match.start()])
                start = match.end()
        out.append(piece[start:])
    return [c.strip() for c in out if c.strip()]


_LEADING_MANNER = {"lazy": "lazily", "lazily": "lazily"}  # an adverb before a title's verb
# words that are as often a noun's first word as a verb: "rerun command", "support matrix"
_NOUN_OR_VERB = frozenset(
    {"rerun", "mask", "output", "load", "install", "support", "combine", "patch", "merge",
     "cache"}
)  # fmt: skip


_VERB_LED_NOUNS = ("include guard",)  # a noun whose first word is a verb ("… and include guard")


def _noun_first(rest: str) -> bool:
    """Whether what follows an "and" is a short noun phrase led by a noun-or-verb word (the
    end of a list of things, not a new clause): at most three words, no article after it; or
    a noun led by a verb word."""
    words = rest.split()
    if rest.lower().startswith(_VERB_LED_NOUNS):
        return True
    return (
        bool(words)
        and words[0].lower() in _NOUN_OR_VERB
        and len(words) <= 3
        and (len(words) < 2 or words[1].lower() not in ("the", "a", "an"))
    )


_TRAILING_REF = re.compile(
    r"\s*\((?:from |cherry[- ]pick(?:ed)? (?:of |from )?|backport (?:of )?)?#\d+\)\s*$", re.I
)
# Conventional-commit types before a colon ("fix: …", "feat: …"): a kind, not a component
_CONVENTIONAL_TYPES = frozenset(
    {"fix", "bugfix", "feat", "feature", "chore", "docs", "doc", "refactor", "perf", "test"}
    | {"tests", "ci", "build", "style"}
)
_LEADING_GROUP = re.compile(r"^\((?P<component>[^()]{1,40})\)\s*:?\s*")
_FIX_WORDS = frozenset({"fix", "fixes", "fixed", "bugfix", "fixup", "hotfix"})
_ACTIONS = frozenset({Kind.FEATURE, Kind.PERF, Kind.REFACTOR, Kind.CHORE})  # kinds that are verbs
_TAGS = re.compile(r"(?<![\w=])\s*\[[^\]]{1,40}\]\s*")  # not a name's [param] or a =[value]
_OUT_OF = re.compile(r"\bout of (range|bounds|date)\b", re.I)  # one word, not "out" + "of range"
# a subject's trailing "fix" of each part ("ub fix and swiglu limit fix"): under 修复 it is
# the headline's word already
_TRAILING_FIX = re.compile(r"(?<=\w)\s+(?:bug\s*)?fix(?:es)?\b(?=\s*(?:,|;|\band\b|$))", re.I)
# "bug fix for X" names the kind, then what it is for: said as "Fix bugs of X" (修复 X 的问题,
# not 修复 X 的问题修复)
_BUG_FIX_FOR = re.compile(r"^(?:a\s+)?(?:bug\s*-?\s*fix|bugfix)(?:es)?\s+(?:for|of|in|on)\s+", re.I)


def translate_subject(subject: str, kind: Kind, p: Phrases) -> str | None:
    """The subject in the locale's words, clause by clause; None when too much stays English."""
    verbs = p.book.get("lead_verb", {})
    subject = _TAGS.sub(" ", _TRAILING_REF.sub("", subject)).strip()
    subject = _OUT_OF.sub(lambda m: "out-of-" + m.group(1).lower(), subject)
    subject = _BUG_FIX_FOR.sub("Fix bugs of ", subject)
    if kind is Kind.FIX:
        subject = _TRAILING_FIX.sub("", subject) or subject
    subject = re.sub(r"\s*\([^()]{1,60}\)\s*$", "", subject) or subject  # an aside at the end
    clauses = _clauses(subject, verbs)
    if not clauses:
        return None
    if len(clauses) > 1 and clauses[0].lower() in verbs:  # "Refactor and simplify X"
        second = clauses[1].split(" ", 1)
        if len(second) == 2 and second[0].lower() in verbs:
            joined = verbs[clauses[0].lower()] + p.word("title", "and_verb")
            clauses = [f"{second[0]} {second[1]}", *clauses[2:]]
            rest = translate_subject("; ".join(clauses), kind, p)
            return joined + rest if rest else None
    rendered = []
    for index, clause in enumerate(clauses):
        part = _clause(clause.strip(), kind, p, first=index == 0)
        if part is None:
            return None  # the first clause, or one without a verb (a list cut at ";"): keep all
        rendered.append(part)
    known = sum(r.known for r in rendered)
    unknown = sum(r.unknown for r in rendered)
    if unknown > MAX_UNKNOWN_SHARE * max(1, known + unknown):
        return None
    text = p.word("title", "clause_sep").join(r.text for r in rendered)
    return None if half_translated(text, subject, p) else text


# English left in a rendered title that shows the grammar was not carried over: an adverb
# ("previously"), a gerund after a conjunction or preposition ("when enabling X"), a participle
# after "is" or before its preposition ("misidentified as"), a lead verb the phrasebook lacks;
# the words are looked up in the subject, where the grammar is, and must still stand in the
# text (a glossary term is translated or kept on purpose).
_ADVERB = re.compile(
    r"(?<![A-Za-z0-9_`./-])[a-z]{2,}(?:ously|ively|ally|ently|antly|arily|ately|ectly|itly|edly)"
    r"(?![A-Za-z0-9_`./(-])"
)
_GERUND = re.compile(
    r"\b(?:when|by|without|while|after|before|for|from|on)\s+([a-z]{3,}ing)\b", re.I
)
_PARTICIPLE = re.compile(
    r"\b(?:is|are|was|were|be|been|being)\s+([a-z]{3,}ed)\b"
    r"|\b([a-z]{3,}ed)\s+(?:by|as|for|on|to|in|with|during)\b",
    re.I,
)
# a subject's first word that reads as a verb: Capitalised ("Prebuild", "Auto-update") or with
# a verb's ending ("summarize")
_LEAD_WORD = re.compile(r"[A-Z][a-z]+(?:-[A-Za-z][a-z]+)*|[a-z]+(?:ize|ise|ify|ate)")
# an English grammar word the rendering kept between translated words ("修复 reduce sampling
# where top_k 与 top_p could None"): the sentence was not carried over
_GRAMMAR_WORD = re.compile(
    r"(?<![A-Za-z0-9_`./-])(?:where|could|would|should|cannot|which|whose|because|was|were|"
    r"been|does|did|has|have|had|will|than|holds|keeps|one|two|three)(?![A-Za-z0-9_`./(-])"
)
_QUOTE = re.compile(r"[\"“”]")
_QUOTED_CJK = re.compile(r"[\"“][^\"”]*[\u3400-\u9fff][^\"”]*[\"”]")


def half_translated(text: str, subject: str, p: Phrases) -> bool:
    """Whether a rendered title reads as a half translation, better said as the English
    subject: it ends on a dangling particle ("…失败的"), its quotes are unbalanced or wrap
    translated words, or English grammar words stayed in it (an auxiliary or a relative
    word, an adverb, a gerund or participle of the subject's grammar; see above)."""
    plain = re.sub(r"`[^`]*`", "", text).rstrip()
    dangling = p.word("title", "dangling")
    if dangling and plain.endswith(dangling):
        return True
    inside, at_end = p.word("title", "misplaced_only"), p.word("title", "misplaced_only_end")
    if (inside and inside in plain) or (at_end and plain.endswith(at_end)):
        return True
    quotes = _QUOTE.findall(plain)
    if len(quotes) % 2 or ("“" in plain) != ("”" in plain) or _QUOTED_CJK.search(plain):
        return True
    terms = p.locale.glossary.get("title", {}).keys() | p.locale.glossary.get("term", {}).keys()
    if any(w.lower() not in terms for w in _ADVERB.findall(plain)):
        return True
    if _GRAMMAR_WORD.search(plain):
        return True
    left = [m.group(1) for m in _GERUND.finditer(subject)] + [
        m.group(1) or m.group(2) for m in _PARTICIPLE.finditer(subject)
    ]
    lead = _TOKEN.findall(subject)[:1]
    if (
        lead
        and _LEAD_WORD.fullmatch(lead[0])
        and lead[0].lower() not in p.book.get("lead_verb", {})
    ):
        left.append(lead[0])  # a verb the phrasebook lacks: the kind's verb went before it
    return any(
        w.lower() not in terms
        and w.lower() not in PARTICIPLES
        and re.search(rf"(?<![A-Za-z0-9_`./-]){re.escape(w)}(?![A-Za-z0-9_`./(-])", plain)
        for w in left
    )


def _leading_manner(tokens: list[str], verbs: dict[str, str], p: Phrases) -> tuple[str, list[str]]:
    """An adverb before the title's verb and the tokens from the verb on: "Lazy initialize X"
    → 惰性 + 初始化 X (not "fix the lazy X")."""
    if len(tokens) > 2 and tokens[0].lower() in _LEADING_MANNER and tokens[1].lower() in verbs:
        return p.book["title"]["adverbs"][_LEADING_MANNER[tokens[0].lower()]], tokens[1:]
    return "", tokens


def _kept_term_at_start(tokens: list[str], p: Phrases) -> bool:
    """Whether the clause opens with a term the glossary keeps as written ("Reduce sampling",
    a scheme's name): its first word is then no verb."""
    glossary: dict[str, str] = p.locale.glossary.get("title", {})
    for size in (2, 3):
        phrase = " ".join(tokens[:size]).lower()
        if len(tokens) >= size and glossary.get(phrase, "").lower() == phrase:
            return True
    return False


# a verbless title's last word that names what the kind's verb already says
_KIND_NOUNS = {
    Kind.PERF: frozenset({"optimization", "optimizations", "optimisation", "optimize", "optimise"}),
    Kind.REFACTOR: frozenset({"refactor", "refactoring", "cleanup"}),
}


def _clause(clause: str, kind: Kind, p: Phrases, first: bool) -> _Rendered | None:
    tokens = _TOKEN.findall(clause)
    if not tokens:
        return None
    verbs = p.book.get("lead_verb", {})
    manner, tokens = _leading_manner(tokens, verbs, p)
    lead = tokens[0].lower()
    if lead in verbs and len(tokens) > 1 and not _kept_term_at_start(tokens, p):
        verb_word, verb, rest = lead, manner + verbs[lead], tokens[1:]
    elif first:  # no verb of its own: the kind's verb, or its category ("CI：") kept as one
        verb_word, verb, rest = "", p.get("kind_verb", kind.value), tokens
        if len(rest) > 1 and rest[-1].lower() in _KIND_NOUNS.get(kind, ()):
            rest = rest[:-1]  # "RGDR optimization" → 优化 RGDR, not 优化 RGDR 优化
    else:
        return None
    rest, verb = _manner(rest, verb, p)
    segments = _segments(rest, verbs)
    head = _phrase(segments[0][1], p)
    known, unknown = head.known + 1, head.unknown
    before: list[str] = []
    modifiers: list[str] = []
    after: list[str] = []
    verb_last = False
    for prep, words in segments[1:]:
        np = _phrase(words, p)
        known, unknown = known + np.known, unknown + np.unknown
        if not np.text:
            continue
        key = _prep_key(prep, verb_word, words, verbs)
        where = p.book["title_prep"].get(key)
        if where is None:
            continue
        if key == "purpose":  # "to prevent X in Y" → 以防止 Y 中的 X
            inner = _clause(" ".join(words), kind, p, first=False)
            if inner is not None:
                after.append(where.format(clause=inner.text))
            continue
        text = where.format(np=np.text)
        if key in (
            "via", "using", "by", "through", "in_order", "with_means", "at_level", "on_event_when"
        ):  # fmt: skip
            before.append(text)
        elif key == "from_move":  # the old value before the verb, the new one after it
            before.insert(0, text)
        elif key == "with_together":  # "Align X with Y" → 将 X 与 Y 对齐
            if head.text:
                before.append(p.word("title", "object_lead"))
            after.append(text)
            verb_last = True
        elif key in AFTER_KEYS:
            after.append(text)
        else:
            modifiers.append(text)
            if key in _PLACES and _OWN_DE.match(head.text) and len(modifiers) == 1:
                modifiers[0] = text.removesuffix("的")  # 日志中失败的单测, not 日志中的失败的单测
    body = "".join(reversed(modifiers)) + head.text
    return _assembled(verb, before, [body, *after], verb_last, (known, unknown), p)


# a place or time said before the head ("{np}中的"): before a head that opens with its own
# attribute and 的 ("失败的单测"), the place's 的 goes, or two 的 stand side by side
_PLACES = frozenset(
    {"in", "on", "at", "from", "under", "within", "when", "if", "while", "after", "before",
     "during", "between"}
)  # fmt: skip
_OWN_DE = re.compile(r"^[\u4e00-\u9fff]{1,6}的")


def _assembled(
    verb: str,
    before: list[str],
    rest: list[str],
    verb_last: bool,
    counts: tuple[int, int],
    p: Phrases,
) -> _Rendered | None:
    """A clause's words with its verb after what goes before it (or last: "将 X 与 Y 对齐"); a
    category ("CI：") leads a subject without a verb only when nothing in it stayed English."""
    known, unknown = counts
    if verb.endswith(p.w.colon):
        if unknown:
            return None  # English left in the noun phrase: its grammar did not carry over
        return _Rendered(verb + _join([*before, *rest]), known, unknown)
    text = _join([*before, *rest, verb]) if verb_last else _join([*before, verb, *rest])
    return _Rendered(text, known, unknown)


def _manner(rest: list[str], verb: str, p: Phrases) -> tuple[list[str], str]:
    """Adverbs and "by default" move before the verb: "Render X correctly" → 正确渲染 X,
    "Disable X by default" → 默认禁用 X."""
    adverbs = p.book["title"]["adverbs"]
    manner = [adverbs[t.lower()] for t in rest if t.lower() in adverbs]
    if manner:
        rest = [t for t in rest if t.lower() not in adverbs]
        verb = "".join(manner) + verb
    lowered = [t.lower() for t in rest]
    at = next((i for i in range(len(rest) - 1) if lowered[i : i + 2] == ["by", "default"]), None)
    if at is not None:
        rest = rest[:at] + rest[at + 2 :]
        verb = p.word("title", "by_default") + verb
    return rest, verb


AFTER_KEYS = frozenset(
    {"to", "to_move", "to_set", "into", "instead of", "as", "due to", "because of", "in order to"}
)
# "with" after these verbs is what the verb uses or puts in (in the object's place, for
# "replace"), not something the object has: "Pad X with 0" → 用 0 补齐 X
_MEANS_VERBS = frozenset(
    {"pad", "pads", "fill", "fills", "update", "updates", "populate", "initialize", "init",
     "extend", "supplement", "complete", "patch", "seed", "build", "compile", "run", "launch",
     "replace", "replaces", "swap", "substitute", "optimize", "optimizes", "optimise",
     "accelerate", "accelerates", "implement", "implements", "reimplement", "rewrite",
     "rewrites", "compute", "computes", "vectorize", "vectorizes", "parallelize", "enhance",
     "enhances", "improve", "improves", "augment", "annotate"}
)  # fmt: skip
_TOGETHER_VERBS = frozenset(
    {"align", "aligns", "sync", "synchronize", "merge", "unify", "consolidate", "overlap",
     "overlaps", "compare"}
)  # fmt: skip
_EVENTS = frozenset(
    {"failure", "failures", "error", "errors", "exit", "startup", "shutdown", "timeout", "demand"}
)
# verbs of what the code does when an event happens (the event says when, not which object)
_REACTION_VERBS = frozenset(
    {"disable", "disables", "skip", "skips", "retry", "retries", "abort", "aborts", "stop",
     "stops", "drop", "drops", "clear", "clears", "reset", "resets", "release", "releases",
     "free", "frees", "flush", "flushes", "restart", "restarts"}
)  # fmt: skip
_LOG_VERBS = frozenset({"log", "logs", "print", "prints", "emit", "emits", "warn", "warns"})
_SET_VERBS = frozenset(
    {"set", "sets", "change", "changes", "switch", "convert", "rename", "renames", "replace",
     "replaces", "split", "splits", "correct", "corrects"}
)  # fmt: skip


def _prep_key(prep: str | None, verb_word: str, words: list[str], verbs: dict[str, str]) -> str:
    """The ``[template.title_prep]`` key a preposition takes after this verb."""
    if prep == "to" and words and words[0].lower() in verbs and len(words) > 1:
        return "purpose"
    if prep == "on" and words and words[0].lower() in _EVENTS:
        # "Disable sampling on failure" → 失败时禁用采样; "Fix crash on startup" → 启动时的崩溃
        return "on_event_when" if verb_word in _REACTION_VERBS else "on_event"
    if prep == "in" and words and words[-1].lower() == "order":
        return "in_order"
    if prep == "at" and verb_word in _LOG_VERBS and words and words[-1].lower() == "level":
        return "at_level"  # "Log X at DEBUG level" → 以 DEBUG 级别记录 X
    if prep == "into" and verb_word in MOVE_VERBS:
        return "to_move"
    if prep == "to" and verb_word in _SET_VERBS:
        return "to_set"
    if prep == "to" and verb_word in MOVE_VERBS:
        return "to_move"
    if prep == "from" and (verb_word in MOVE_VERBS or verb_word in _SET_VERBS):
        return "from_move"  # "Bump X from 4 to 6" → 从 4 升级 X 至 6 (not "X in 4")
    if prep == "with" and verb_word in _MEANS_VERBS:
        return "with_means"  # "Pad X with 0" → 用 0 补齐 X (not "the X that has 0")
    if prep == "with" and verb_word in _TOGETHER_VERBS:
        return "with_together"
    return prep or ""


def _segments(
    tokens: list[str], verbs: dict[str, str] | None = None
) -> list[tuple[str | None, list[str]]]:
    """The head words, then each prepositional phrase (preposition, words), in order."""
    preps = (
        "instead of", "due to", "because of", "in order to", "introduced by", "caused by",
        "pointing to", "required by", "used by", "related to", "based on",
    )  # fmt: skip
    singles = {
        "for", "in", "on", "of", "with", "without", "when", "if", "while", "after", "before",
        "from", "to", "into", "via", "using", "through", "under", "across", "between", "during",
        "per", "as", "at", "by", "within", "than", "regarding", "about",
    }  # fmt: skip
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    index = 0
    while index < len(tokens):
        word = tokens[index].lower()
        pair = f"{word} {tokens[index + 1].lower()}" if index + 1 < len(tokens) else ""
        if pair in preps:
            out.append((pair, []))
            index += 2
            continue
        if (
            word == "to"
            and verbs
            and index + 2 < len(tokens)
            and tokens[index + 1].lower() in verbs
            and out[-1][1]
        ):  # "to fix X in Y": the rest is one purpose clause
            out.append(("to", tokens[index + 1 :]))
            break
        after_copula = index > 0 and tokens[index - 1].lower() in ("is", "are", "be", "turned")
        if (
            word in singles
            and (out[-1][1] or index == 0)
            and not _default_phrase(tokens, index)
            and not (after_copula and word in ("on", "off"))
        ):
            out.append((word, []))
        else:
            out[-1][1].append(tokens[index])
        index += 1
    return out


def _default_phrase(tokens: list[str], index: int) -> bool:
    """``by default``: a phrase of the glossary, not a preposition."""
    return (
        tokens[index].lower() == "by"
        and index + 1 < len(tokens)
        and (tokens[index + 1].lower() == "default")
    )


def _phrase(words: list[str], p: Phrases) -> _Rendered:
    """A noun phrase word by word through the glossary, longest match first."""
    glossary: dict[str, str] = p.locale.glossary.get("title", {})
    term: dict[str, str] = p.locale.glossary.get("term", {})
    if len(words) > 1 and words[-1].lower() in PARTICIPLES:  # "requests aborted" → 被中止的请求
        words = [words[-1], *words[:-1]]
    parts: list[str] = []
    known = unknown = 0
    index = 0
    while index < len(words):
        if _KEPT.match(words[index]):
            parts.append(words[index].strip("`"))
            known += 1
            index += 1
            continue
        for size in (4, 3, 2, 1):
            chunk = words[index : index + size]
            if len(chunk) < size:
                continue
            key = " ".join(w.lower() for w in chunk)
            found = glossary.get(key, term.get(key))
            if found is None and size == 1 and key.endswith("s"):
                found = glossary.get(key[:-1])
            if found is not None:
                if found:
                    parts.append(found)
                known += size
                index += size
                break
        else:
            word = words[index]
            index += 1
            if word in p.book["title"]["joiners"]:
                parts.append(p.book["title"]["joiners"][word])
                continue
            verb = p.book.get("lead_verb", {}).get(word.lower())
            related = re.fullmatch(
                r"(?P<what>[\w.]+)-(?P<suffix>related|based|aware|only|specific)", word, re.I
            )
            if verb is not None:
                parts.append(verb)
                known += 1
                continue
            if related and related["suffix"].lower() in p.book["title"]["suffixes"]:
                parts.append(
                    related["what"] + " " + p.book["title"]["suffixes"][related["suffix"].lower()]
                )
                known += 1
                continue
            if _WORD.match(word) and not _CODE_LIKE.search(word):
                unknown += 1
            else:
                known += 1
            parts.append(word.strip("`"))
    return _Rendered(_join(parts), known, unknown)


_LATIN_START = re.compile(r"[A-Za-z0-9_(@'\"`-]")
_LATIN_END = re.compile(r"[A-Za-z0-9_)%'\"`]$")


def _join(parts: list[str]) -> str:
    """Words joined as the script wants: Latin words spaced, CJK text without spaces."""
    out = ""
    for part in parts:
        if out and _LATIN_START.match(part) and _LATIN_END.search(out):
            out += " "
        out += part
    return out


def _clip_words(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:-") + "…"


def _one_fix(translated: str, p: Phrases) -> bool:
    """Whether a symptom may follow the title: one clause, led by a fixing verb, saying no
    cause yet. "修复 X导致的 Y" says X caused Y: after a second clause it would blame that
    clause, after "避免 X" it would blame what the PR only avoids."""
    cause = p.word("title", "cause")
    return (
        translated.startswith(tuple(p.raw("title", "cause_verbs")))
        and p.word("title", "clause_sep") not in translated
        and cause not in translated
    )


def _title_symptom(dossier: Dossier, p: Phrases, subject: str) -> str:
    """For a fix: the symptom the body names, when the title does not already say it."""
    if dossier.kind is not Kind.FIX:
        return ""
    rationale = best_rationale(dossier)
    text = rationale.claim if rationale is not None else ""
    if not text or not SEVERE.search(text):
        return ""
    for key, pattern in SYMPTOMS:
        if pattern.search(text) and not pattern.search(subject):
            return p.word("title", "cause") + p.get("symptom", key)
    return ""


# +4.6%, -5~9%, 3.8x: a change, not a level; "~1.4%" is "about 1.4 %", no direction
RELATIVE = re.compile(r"^[+\-]|[x×]$|\d[-~～–]\d")
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


LOWER_IS_BETTER = frozenset(
    {"latency", "itl", "ttft", "tpot", "e2e", "end-to-end", "延迟", "memory", "显存"}
)


def _worse(claim: ClaimFact) -> bool:
    """A signed figure that says the metric got worse (``ttft +5.4%``, ``throughput -3%``): a
    cost the PR reports, never its headline."""
    sign = claim.figure[:1]
    if sign not in "+-":
        return False
    lower = (claim.metric or "").lower() in LOWER_IS_BETTER
    return (sign == "+") == lower


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
        if (c.metric or "").lower() in STRONG_METRIC and RELATIVE.search(c.figure) and not _worse(c)
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

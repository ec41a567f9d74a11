"""The template writer: a deterministic entry built only from dossier facts (DESIGN §1).

A paragraph follows the order of DESIGN §1 — verdict and audience, two to four focus points
anchored on real code names, evidence from the discussion, follow-ups — and is assembled from
the phrasebook (``phrases.toml``). Variants are picked by a stable hash of the PR number, so a
re-run prints the same text while neighbouring entries do not all read alike. Nothing is
invented: every backticked name and every @login comes from a fact of the dossier.

Titles: a template cannot translate an English PR title, so the Chinese title is the Chinese
verb of the change (from the title's own leading verb when the phrasebook knows it, else from
the kind), then the rest of the title in English, then the claimed figure if the body states
one. A ``Component:`` prefix stays in front.

Length: a paragraph aims at ≤ 460 characters in Chinese (the examples run 180–560; English
gets 800, its words run longer); when the pieces run
long, lower-priority detail goes first: extra discussion, the third follow-up, the fourth
focus point, the shape remark.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

from prdigest.analyze.discussion import is_merge_headline
from prdigest.core.models import (
    Assessment,
    ClaimFact,
    CodeRef,
    CommitFact,
    Dossier,
    Entry,
    FileFact,
    Kind,
    Level,
    Role,
    SignalFact,
    SignalKind,
    SymbolFact,
    ThreadFact,
)
from prdigest.core.records import mention
from prdigest.write import Lang

TEMPLATE_VERSION = "template/2"
MAX_PARAGRAPH = {"zh": 460, "en": 800}  # English words run longer than Chinese characters
HARD_MAX_PARAGRAPH = {"zh": 520, "en": 900}  # past this, discussion and follow-ups go too
TITLE_SUBJECT_LIMIT = 80
GENERIC_NAMES = frozenset(
    {
        "__init__",
        "__call__",
        "__post_init__",
        "__enter__",
        "__exit__",
        "__repr__",
        "forward",
        "run",
        "main",
        "apply",
        "setUp",
        "new",
        "build",
    }
)
FOLLOWUP_ORDER = (
    SignalKind.STALE_BODY,
    SignalKind.EMPTY_TEST_RESULT,
    SignalKind.TESTS_DELETED,
    SignalKind.NO_TESTS,
    SignalKind.TODO,
    SignalKind.FOLLOWUP_PROMISED,
    SignalKind.SKIP_ADDED,
    SignalKind.FAILED_CHECKS,
    SignalKind.MAGIC_NUMBER,
    SignalKind.SILENT_CLAMP,
    SignalKind.SWALLOWED_EXCEPTION,
    SignalKind.HUGE_DIFF,
    SignalKind.BROKEN_PATCH,
)
_INFORMATIVE_COMMIT = re.compile(
    r"\b(?:fix|revert|drop|remove|regression|address|rework|switch|"
    r"instead|replace|restore|guard|handle)\w*\b",
    re.I,
)
_CJK = "\u3400-\u4dbf\u4e00-\u9fff"
_SPACE_BEFORE = re.compile(rf"([{_CJK}])([A-Za-z0-9`@#+\-−(\[])")
_SPACE_AFTER = re.compile(rf"([A-Za-z0-9`%)\]])([{_CJK}])")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([，。；：、）」！？])")
_SPACE_AFTER_PUNCT = re.compile(r"([（「，。；：、）」])[ \t]+")


@functools.cache
def phrasebook() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("phrases.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@functools.cache
def glossary() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("glossary.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def metric_name(metric: str | None, lang: Lang) -> str:
    """A claim's metric as the digest writes it (``throughput`` → 吞吐 in Chinese)."""
    if not metric:
        return ""
    if lang == "en":
        return metric
    return str(glossary()["metric"].get(metric.lower(), metric))


def code(name: str) -> str:
    return f"`{name}`"


def space_cjk(text: str) -> str:
    """A space between Chinese and Latin text or code, none next to full-width punctuation."""
    spaced = _SPACE_AFTER.sub(r"\1 \2", _SPACE_BEFORE.sub(r"\1 \2", text))
    return _SPACE_AFTER_PUNCT.sub(r"\1", _SPACE_BEFORE_PUNCT.sub(r"\1", spaced))


def _stable(seed: int, slot: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{slot}".encode()).digest()[:4], "big")


@dataclass
class _Cited:
    """The code names and fact ids one paragraph uses."""

    refs: dict[str, CodeRef] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)

    def fact(self, fact_id: str) -> None:
        if fact_id not in self.ids:
            self.ids.append(fact_id)

    def name(self, name: str, path: str = "", line: int | None = None) -> str:
        """``name`` in backticks, remembered with its location for permalinks."""
        self.refs.setdefault(name, CodeRef(name=name, path=path, line=line))
        return code(name)


class _Phrases:
    """Phrase lookup for one language and one PR (the PR number seeds the variant choice)."""

    def __init__(self, lang: Lang, seed: int) -> None:
        self.book = phrasebook()[lang]
        self.lang = lang
        self.seed = seed

    def get(self, section: str, key: str, **values: object) -> str:
        value = self.book[section][key]
        if isinstance(value, list):
            value = value[_stable(self.seed, f"{section}.{key}") % len(value)]
        return str(value).format(**values) if values else str(value)

    def has(self, section: str, key: str) -> bool:
        return key in self.book.get(section, {})

    def raw(self, section: str, key: str) -> Any:
        return self.book[section][key]

    def word(self, section: str, key: str) -> str:
        """A fixed (non-variant) phrase such as a separator."""
        return str(self.book[section][key])

    def join(self, items: Sequence[str]) -> str:
        """``a、b 与 c`` / ``a, b and c``."""
        if len(items) <= 1:
            return "".join(items)
        return (
            self.word("symbol", "list_sep").join(items[:-1])
            + self.word("symbol", "and")
            + items[-1]
        )

    def listing(self, items: Sequence[str]) -> str:
        """``a、b`` / ``a, b`` (no final "and")."""
        return self.word("symbol", "list_sep").join(items)

    @property
    def stop(self) -> str:
        return "。" if self.lang == "zh" else "."

    def who(self, login: str | None) -> str:
        """``@login`` for a login; a git display name ("Li Wang") stays a plain name."""
        return mention(login) if login else "?"


# -- titles -------------------------------------------------------------------------------

_COMPONENT = re.compile(r"^(?P<component>[A-Za-z][\w./+ -]{0,28}?):\s+(?P<rest>\S.*)$")
_LEAD_WORD = re.compile(r"^(?P<word>[A-Za-z]+)\b\s*")


def title_for(dossier: Dossier, lang: Lang) -> str:
    """Chinese (or English) verb of the change, the subject, and the claimed figure if any."""
    p = _Phrases(lang, dossier.number)
    subject = dossier.subject.strip().rstrip(".")
    if dossier.kind is Kind.REVERT and dossier.reverts:
        inner = re.sub(r'^revert\s*"?|"\s*$', "", subject, flags=re.I).strip()
        inner = re.sub(r"^\s*(?:\[[^\]]{1,40}\]\s*)+", "", inner)
        inner = re.sub(r"\s*\(#\d+\)\s*\"?$", "", inner)
        subject = _clip_words(inner, TITLE_SUBJECT_LIMIT)
        title = f"{p.get('kind_verb', 'revert')} #{dossier.reverts}: {subject}"
        return space_cjk(title) if lang == "zh" else title
    if lang == "en":  # the PR's own English title already says it best
        return subject + _title_figure(dossier, lang)
    component = ""
    match = _COMPONENT.match(subject)
    if match and " " not in match["component"].strip():
        component, subject = match["component"], match["rest"]
    verb, rest = _verb_and_rest(subject, dossier.kind, p)
    joiner = "" if verb.endswith("：") else " "
    title = f"{verb}{joiner}{_clip_words(rest, TITLE_SUBJECT_LIMIT)}"
    if component:
        title = f"{component}{'：' if lang == 'zh' else ': '}{title}"
    title += _title_figure(dossier, lang)
    return space_cjk(title) if lang == "zh" else title


def _verb_and_rest(subject: str, kind: Kind, p: _Phrases) -> tuple[str, str]:
    match = _LEAD_WORD.match(subject)
    if p.lang == "zh" and match:
        verb = p.book["lead_verb"].get(match["word"].lower())
        rest = subject[match.end() :].strip()
        if verb and rest:
            return verb, rest
    verb = p.get("kind_verb", kind.value)
    if p.lang == "zh" and not verb.endswith("："):
        verb += "："  # the subject keeps its own English verb: "修复：Clamp …"
    return verb, subject


def _clip_words(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:-") + "…"


_RELATIVE = re.compile(r"^[+\-~]|[x×]$|\d[-~～–]\d")  # +4.6%, -5~9%, 3.8x: a change, not a level
_STRONG_METRIC = frozenset(
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
        if (c.metric or "").lower() in _STRONG_METRIC and _RELATIVE.search(c.figure)
    ]
    if not strong:
        return None
    prose = [c for c in strong if not c.in_table]
    if prose:  # the author's own summary sentence beats any single table row
        return prose[0], False
    best = max(strong, key=lambda c: _figure_size(c.figure))
    return best, len(strong) > 1


def _title_figure(dossier: Dossier, lang: Lang) -> str:
    found = title_claim(dossier)
    if found is None:
        return ""
    claim, up_to = found
    sep = "，" if lang == "zh" else ", "
    prefix = str(phrasebook()[lang]["followup"]["up_to"]) if up_to else ""
    return f"{sep}{metric_name(claim.metric, lang)} {prefix}{claim.figure}"


# -- verdict and shape --------------------------------------------------------------------


def _display_names(files: Sequence[FileFact]) -> dict[str, str]:
    """Basename of each file, or its path where two changed files share a basename."""
    counts: dict[str, int] = {}
    for f in files:
        base = PurePosixPath(f.path).name
        counts[base] = counts.get(base, 0) + 1
    return {
        f.path: (PurePosixPath(f.path).name if counts[PurePosixPath(f.path).name] == 1 else f.path)
        for f in files
    }


def _file_name(path: str, names: dict[str, str], cited: _Cited) -> str:
    return cited.name(names.get(path, PurePosixPath(path).name), path)


def _verdict(d: Dossier, a: Assessment, p: _Phrases) -> str:
    rule = next((r.detail for r in a.reasons if r.code == "level"), "")
    audience = a.audience if p.lang == "zh" else a.audience_en
    area = a.area if p.lang == "zh" else a.area_en
    if a.level is Level.MUST_READ:
        key = "must_read_audience" if audience else "must_read"
    elif a.level is Level.WORTH_READING:
        key = "worth_reading_audience" if audience else "worth_reading"
    else:
        key = a.level.value
    why_key = rule if p.has("why", rule) else ("score" if rule.startswith("score") else "tiny")
    why = p.get("why", why_key, lines=d.additions + d.deletions)
    return p.get("verdict", key, audience=audience or "", area=area or "", why=why)


def _shape(d: Dossier, p: _Phrases) -> str:
    if d.coverage.diff.value == "none":
        return p.get("shape", "metadata")
    source = sum(f.additions + f.deletions for f in d.files if f.role is Role.SOURCE)
    tests = sum(f.additions + f.deletions for f in d.files if f.role is Role.TEST)
    if source and tests >= 3 * source and source <= 30:
        return p.get("shape", "tests_heavy", source=source, tests=tests)
    if d.coverage.diff.value == "partial":
        return p.get("shape", "partial", note=d.coverage.note)
    if d.additions + d.deletions >= 800 and len(d.files) >= 8:
        return p.get(
            "shape", "large", additions=d.additions, deletions=d.deletions, files=len(d.files)
        )
    return ""


# -- focus points ---------------------------------------------------------------------------


def _main_symbols(d: Dossier) -> list[list[SymbolFact]]:
    """Source symbols worth naming, grouped by file, the most-changed files first (≤ 2 files)."""
    by_file: dict[str, list[SymbolFact]] = {}
    for s in d.symbols:
        if s.in_test or s.kind in ("step", "field") or not s.lines_changed:
            continue
        if s.name in GENERIC_NAMES and not s.parent:
            continue
        by_file.setdefault(s.path, []).append(s)
    groups = sorted(by_file.values(), key=lambda g: -sum(s.lines_changed for s in g))
    picked = []
    for group in groups[:2]:
        added_classes = {
            s.name for s in group if s.kind in ("class", "struct") and s.change == "added"
        }
        group = [
            s for s in group if s.parent not in added_classes
        ]  # a new class implies its methods
        ranked = sorted(
            group, key=lambda s: (s.name in GENERIC_NAMES, -s.lines_changed, s.line or 0)
        )
        picked.append(sorted(ranked[:3], key=lambda s: s.line or 0))
    return picked


def _symbol_name(s: SymbolFact, p: _Phrases, cited: _Cited) -> str:
    line = s.line if s.change != "removed" else None
    name = cited.name(s.name, s.path, line)
    if s.name in GENERIC_NAMES and s.parent:
        return p.get("symbol", "of", parent=cited.name(s.parent, s.path, None), name=name)
    return name


def _symbol_point(
    group: list[SymbolFact],
    d: Dossier,
    p: _Phrases,
    cited: _Cited,
    names: dict[str, str],
    purpose: bool,
) -> str:
    by_change: dict[str, list[str]] = {}
    for s in group:
        cited.fact(s.id)
        shown = _symbol_name(s, p, cited)
        if not any(shown in items for items in by_change.values()):  # one name, said once
            by_change.setdefault(s.change, []).append(shown)
    parts = [p.get("symbol", change, name=p.join(items)) for change, items in by_change.items()]
    text = p.get(
        "symbol",
        "in_file",
        file=_file_name(group[0].path, names, cited),
        names=p.word("symbol", "change_sep").join(parts),
    )
    if purpose:
        text += ("，" if p.lang == "zh" else ": ") + p.get("symbol_purpose", d.kind.value)
    return text


def _file_point(d: Dossier, p: _Phrases, cited: _Cited, names: dict[str, str]) -> str | None:
    candidates = [f for f in d.files if f.role is not Role.TEST and not f.generated] or list(
        d.files
    )
    if not candidates:
        return None
    top = max(candidates, key=lambda f: f.additions + f.deletions)
    cited.fact(top.id)
    return p.get(
        "symbol",
        "file_only",
        file=_file_name(top.path, names, cited),
        additions=top.additions,
        deletions=top.deletions,
    )


def _signal_point(d: Dossier, kind: SignalKind, key: str, p: _Phrases, cited: _Cited) -> str | None:
    found = [s for s in d.signals if s.kind is kind][:2]
    if not found:
        return None
    for s in found:
        cited.fact(s.id)
    return p.get(
        "point", key, names=p.listing([cited.name(s.detail, s.path or "", s.line) for s in found])
    )


def _test_point(d: Dossier, p: _Phrases, cited: _Cited) -> str | None:
    if not d.tests and not d.techniques:
        return None
    unique = list({t.name: t for t in d.tests}.values())[:2]
    for t in unique:
        cited.fact(t.id)
    names = p.join([cited.name(t.name, t.path, t.line) for t in unique])
    if not names:
        names = cited.name(PurePosixPath(d.techniques[0].path).name, d.techniques[0].path)
    techniques = []
    for q in d.techniques[:3]:
        cited.fact(q.id)
        label = (
            cited.name(q.label, q.path, q.line)
            if q.technique not in ("shell_stub", "hypothesis", "subprocess")
            else ""
        )
        techniques.append(p.get("technique", q.technique, label=label))
    how = (
        p.get("point", "tests_how", techniques=p.word("point", "technique_sep").join(techniques))
        if techniques
        else p.get("point", "tests_plain")
    )
    return p.get("point", "tests", names=names, how=p.word("point", "tests_sep") + how)


def _field_point(d: Dossier, p: _Phrases, cited: _Cited, names: dict[str, str]) -> str | None:
    """New state: annotated fields a class gains (often the heart of a fix)."""
    new_classes = {
        s.name for s in d.symbols if s.kind in ("class", "struct") and s.change == "added"
    }
    fields = [
        s
        for s in d.symbols
        if s.kind == "field"
        and s.change == "added"
        and not s.in_test
        and s.parent not in new_classes  # a new class's fields come with it
    ]
    if not fields:
        return None
    first = fields[0]
    same = list(
        {s.name: s for s in fields if s.parent == first.parent and s.path == first.path}.values()
    )[:2]
    for s in same:
        cited.fact(s.id)
    return p.get(
        "point",
        "fields",
        file=_file_name(first.path, names, cited),
        owner=cited.name(first.parent or "", first.path),
        names=p.listing([cited.name(s.name, s.path, s.line) for s in same]),
    )


def _claim_point(d: Dossier, p: _Phrases, cited: _Cited) -> str | None:
    """The body's headline effect, when it is a relative figure of a named metric."""
    claim = next(
        (
            c
            for c in d.claims
            if c.metric
            and _RELATIVE.search(c.figure)
            and not (c.in_table and (c.metric or "").lower() not in _STRONG_METRIC)
        ),
        None,
    )
    if claim is None:
        return None
    cited.fact(claim.id)
    metric = claim.metric or ""
    if metric.lower().startswith(("improve", "reduction", "regression")):
        return p.get("point", "claim_no_metric", figure=claim.figure)
    return p.get("point", "claim", metric=metric_name(metric, p.lang), figure=claim.figure)


def _context_points(d: Dossier, p: _Phrases, cited: _Cited) -> list[str]:
    points = []
    if d.reverts:
        points.append(p.get("point", "revert", number=d.reverts))
    if d.series:
        points.append(p.get("point", "series", index=d.series.index, total=d.series.total))
    renamed = [f for f in d.files if f.status == "renamed" and f.previous_path]
    if renamed and d.kind is Kind.REFACTOR:
        f = renamed[0]
        cited.fact(f.id)
        points.append(
            p.get(
                "point",
                "rename",
                old=cited.name(f.previous_path or ""),
                new=cited.name(f.path, f.path),
            )
        )
    steps = [s for s in d.symbols if s.kind == "step"][:2]
    if steps:
        for s in steps:
            cited.fact(s.id)
        points.append(
            p.get(
                "point",
                "step",
                names=p.listing([cited.name(s.name, s.path, s.line) for s in steps]),
            )
        )
    return points


def _focus_points(d: Dossier, a: Assessment, p: _Phrases, cited: _Cited) -> list[str]:
    names = _display_names(d.files)
    points = _context_points(d, p, cited)
    groups = _main_symbols(d)
    for index, group in enumerate(groups):
        points.append(_symbol_point(group, d, p, cited, names, purpose=index == 0))
    if not groups:
        file_point = _file_point(d, p, cited, names)
        if file_point:
            points.append(file_point)
    field_point = _field_point(d, p, cited, names)
    if field_point:
        points.insert(min(1, len(points)), field_point)
    for kind, key in ((SignalKind.ENV_VAR, "env_var"), (SignalKind.CONFIG_FLAG, "config_flag")):
        found = _signal_point(d, kind, key, p, cited)
        if found:
            points.append(found)
    if (d.kind is Kind.PERF or (a.level is Level.MUST_READ and d.kind is not Kind.FIX)) and (
        title_claim(d) is None  # a figure already in the title need not be repeated
    ):
        claim = _claim_point(d, p, cited)
        if claim:
            points.append(claim)
    test = _test_point(d, p, cited)
    if test:
        points.append(test)
    limit = 4 if a.level in (Level.MUST_READ, Level.WORTH_READING) else 1
    return points[:limit]


def _render_focus(points: list[str], p: _Phrases) -> str:
    if not points:
        return ""
    if len(points) == 1:
        return p.get("focus", "lead_one") + points[0] + p.stop
    lead = p.get("focus", "lead", count=p.raw("focus", "count")[len(points)])
    style = p.get("focus", "numbering", n="{n}", cn="{cn}")
    numbered = [
        style.format(n=i, cn=p.raw("focus", "cn")[i]) + text
        for i, text in enumerate(points, start=1)
    ]
    return lead + p.word("focus", "separator").join(numbered) + p.stop


# -- discussion -----------------------------------------------------------------------------


def _where(thread: ThreadFact, names: dict[str, str], cited: _Cited) -> str:
    if not thread.path:
        return "PR"
    return cited.name(
        names.get(thread.path, PurePosixPath(thread.path).name), thread.path, thread.line
    )


_COMMIT_CLASSES = (
    re.compile(r"\b(?:regress\w*|restore\w*|revert\w*)\b", re.I),
    re.compile(r"\bfix\w*\b", re.I),
    re.compile(r"\b(?:instead|replace\w*|rework\w*|switch\w*|drop\w*|remove\w*)\b", re.I),
    re.compile(r"\baddress\w*\b", re.I),
)
_SUGGESTION = re.compile(r"^Apply suggestions? from (?:@(?P<who>[\w-]+)|code review)", re.I)


def _telling_commit(commits: Sequence[CommitFact], avoid: set[str]) -> CommitFact | None:
    """The after-review commit whose headline says most about what review changed."""
    after = [
        c
        for c in commits
        if c.after_review and not is_merge_headline(c.headline) and c.id not in avoid
    ]
    for pattern in _COMMIT_CLASSES:
        telling = [c for c in after if pattern.search(c.headline)]
        if telling:
            return telling[-1]
    return after[-1] if after else None


def _suggestion_regression(d: Dossier, p: _Phrases, cited: _Cited) -> tuple[str, set[str]] | None:
    """An applied review suggestion followed by a commit that repairs what it broke."""
    for index, commit in enumerate(d.commits):
        match = _SUGGESTION.match(commit.headline)
        if not match:
            continue
        repair = next(
            (
                c
                for c in d.commits[index + 1 :]
                if _COMMIT_CLASSES[0].search(c.headline)
                or re.search(r"\bfix\w*\b", c.headline, re.I)
            ),
            None,
        )
        if repair is None:
            continue
        who = match["who"] or next((r.login for r in d.reviewers if not r.is_bot), None)
        cited.fact(commit.id)
        cited.fact(repair.id)
        text = p.get(
            "discussion",
            "suggestion_regression",
            who=p.who(who),
            applied=cited.name(commit.sha[:7]),
            fix=cited.name(repair.sha[:7]),
            headline=_quote(repair.headline, 70),
        )
        return text, {commit.id, repair.id}
    return None


def _requested_part(d: Dossier, p: _Phrases, cited: _Cited) -> str | None:
    requested = [r for r in d.reviewers if "CHANGES_REQUESTED" in r.states and not r.is_bot]
    if not requested:
        return None
    for r in requested:
        cited.fact(r.id)
    return p.get(
        "discussion", "changes_requested", who=p.listing([p.who(r.login) for r in requested[:2]])
    )


def _commit_part(d: Dossier, p: _Phrases, cited: _Cited, avoid: set[str]) -> str | None:
    dropped_tests = {s.provenance.ref for s in d.signals if s.kind is SignalKind.TESTS_DELETED}
    avoid = avoid | {c.id for c in d.commits if c.sha[:7] in dropped_tests}
    commit = _telling_commit(d.commits, avoid)
    if commit is None or not any(not r.is_bot for r in d.reviewers):
        return None
    cited.fact(commit.id)
    count = sum(1 for c in d.commits if c.after_review)
    if len(commit.headline) > 80:
        return p.get("discussion", "commits_after_short", count=count)
    return p.get(
        "discussion",
        "commits_after",
        count=count,
        sha=cited.name(commit.sha[:7]),
        headline=_quote(commit.headline, 80),
    )


def _human_thread_part(d: Dossier, p: _Phrases, cited: _Cited, names: dict[str, str]) -> str | None:
    people = [t for t in d.threads if not t.started_by_bot and t.started_by != d.author]
    if not people:
        return None
    open_people = [t for t in people if not (t.is_resolved or t.is_outdated)]
    for t in people:
        cited.fact(t.id)
    if len(people) == 1:
        t = people[0]
        state = (
            "state_open" if open_people else "state_resolved" if t.is_resolved else "state_outdated"
        )
        return p.get(
            "discussion",
            "thread_person",
            who=p.who(t.started_by),
            where=_where(t, names, cited),
            state=p.get("discussion", state),
        ) + _thread_names(t, p, cited)
    who = p.listing(list(dict.fromkeys(p.who(t.started_by) for t in people))[:3])
    paths = list(dict.fromkeys(t.path for t in people if t.path))[:2]
    where = p.listing([_file_name(x, names, cited) for x in paths]) or "PR"
    text = p.get("discussion", "threads_summary", who=who, count=len(people), where=where)
    if open_people:
        t = open_people[0]
        text += (
            ("，" if p.lang == "zh" else "; ")
            + p.get(
                "discussion", "threads_open", who=p.who(t.started_by), where=_where(t, names, cited)
            )
            + _thread_names(t, p, cited)
        )
    return text


def _bot_thread_part(d: Dossier, p: _Phrases, cited: _Cited, names: dict[str, str]) -> str | None:
    open_bot = [
        t for t in d.threads if t.started_by_bot and not t.is_resolved and not t.is_outdated
    ]
    if not open_bot:
        return None
    for t in open_bot:
        cited.fact(t.id)
    where = p.listing(list(dict.fromkeys(_where(t, names, cited) for t in open_bot[:2])))
    bots = p.listing(list(dict.fromkeys(p.who(t.started_by) for t in open_bot)))
    return p.get("discussion", "unresolved", where=where, who=bots, count=len(open_bot))


def _thread_names(t: ThreadFact, p: _Phrases, cited: _Cited) -> str:
    mentioned = [n for n in t.code_names if re.fullmatch(r"[A-Za-z_][\w.:/()\-]{1,60}", n)][:2]
    if not mentioned:
        return ""
    return p.get(
        "discussion",
        "thread_names",
        names=p.listing([cited.name(n, t.path or "") for n in mentioned]),
    )


def _discussion_parts(d: Dossier, p: _Phrases, cited: _Cited) -> list[str]:
    """Discussion evidence, most telling first (the paragraph may keep only the first ones)."""
    if not d.coverage.discussion:
        return []  # unknown, not absent: the digest header says which records lack reviews
    names = _display_names(d.files)
    regression = _suggestion_regression(d, p, cited)
    used = regression[1] if regression else set()
    candidates = [
        regression[0] if regression else None,
        _requested_part(d, p, cited),
        _human_thread_part(d, p, cited, names),
        _bot_thread_part(d, p, cited, names),
        _commit_part(d, p, cited, used),
    ]
    parts = [x for x in candidates if x]
    if not parts:
        bots = [m for m in d.remarks if m.is_bot]
        if bots:
            cited.fact(bots[0].id)
            parts.append(
                p.get(
                    "discussion",
                    "bot_remark",
                    who=p.who(bots[0].author),
                    excerpt=_quote(bots[0].excerpt, 60),
                )
            )
    if not parts:
        approvers = [r.login for r in d.reviewers if r.last_state == "APPROVED" and not r.is_bot][
            :2
        ]
        if approvers:
            parts.append(
                p.get("discussion", "approved", who=p.listing([p.who(x) for x in approvers]))
            )
    return parts


def _render_discussion(parts: list[str], p: _Phrases) -> str:
    if not parts:
        return ""
    text = p.word("discussion", "sep").join(parts)
    lead = p.get("discussion", "lead")
    if p.lang == "en" and not lead:
        text = text[0].upper() + text[1:]
    return lead + text + p.stop


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_QUOTED_MENTION = re.compile(r"@(?=[A-Za-z_])")


def _quote(text: str, limit: int) -> str:
    """PR text quoted inside an entry: no code spans or @mentions of its own, clipped.

    A clipped backtick span or an ``@decorator`` in a quote would read as a code name or a
    person the entry claims, so both are neutralised.
    """
    return _short(_QUOTED_MENTION.sub("", text.replace("`", "'")), limit)


# -- follow-ups -----------------------------------------------------------------------------


def _followup_items(d: Dossier, p: _Phrases, cited: _Cited, limit: int) -> list[str]:
    items: list[str] = []
    names = _display_names(d.files)
    kinds = {s.kind for s in d.signals}
    for kind in FOLLOWUP_ORDER:
        found = [s for s in d.signals if s.kind is kind]
        if not found or (kind is SignalKind.NO_TESTS and SignalKind.TESTS_DELETED in kinds):
            continue
        items.append(_followup_text(kind, found, d, p, cited, names))
        if len(items) >= limit:
            break
    return items


def _render_followups(items: list[str], p: _Phrases) -> str:
    if not items:
        return ""
    return p.get("followup", "lead") + p.word("followup", "sep").join(items) + p.stop


def _detail_name(signal: SignalFact, names: dict[str, str], cited: _Cited) -> str:
    """A signal's code name in backticks, never clipped (a clipped name is not in the record)."""
    if signal.detail == signal.path:  # a whole file: its short display name
        return _file_name(signal.detail, names, cited)
    return cited.name(signal.detail, signal.path or "", signal.line)


def _followup_text(
    kind: SignalKind,
    found: list[SignalFact],
    d: Dossier,
    p: _Phrases,
    cited: _Cited,
    names: dict[str, str],
) -> str:
    first = found[0]
    cited.fact(first.id)
    file_ref = _file_name(first.path, names, cited) if first.path else ""
    if kind is SignalKind.NO_TESTS:
        lines = sum(f.additions + f.deletions for f in d.files if f.role is Role.SOURCE)
        return p.get("followup", "no_tests", lines=lines)
    if kind is SignalKind.EMPTY_TEST_RESULT:
        return p.get("followup", "empty_test_result")
    if kind is SignalKind.TESTS_DELETED and first.provenance.kind == "commit":
        return p.get(
            "followup",
            "tests_dropped",
            sha=cited.name(first.provenance.ref),
            detail=_quote(first.detail, 80),
        )
    if kind is SignalKind.FOLLOWUP_PROMISED:
        return p.get(
            "followup", "followup_promised", who=p.who(first.owner), detail=_quote(first.detail, 90)
        )
    if kind is SignalKind.FAILED_CHECKS:
        return p.get("followup", kind.value, detail=cited.name(first.detail.split(", ")[0]))
    if kind in (SignalKind.HUGE_DIFF, SignalKind.BROKEN_PATCH):
        return p.get("followup", kind.value, detail=first.detail)
    if kind is SignalKind.MAGIC_NUMBER:
        shown = [
            cited.name(s.detail, s.path or "", s.line)
            + (
                f"（= {s.value}）"
                if p.lang == "zh" and s.value
                else f" (= {s.value})"
                if s.value
                else ""
            )
            for s in found[:2]
        ]
        return p.get("followup", kind.value, detail=p.listing(shown))
    if kind is SignalKind.TODO:
        marker = cited.name(first.detail.split(":")[0], first.path or "", first.line)
        return p.get("followup", "todo", detail=marker, file=file_ref)
    details = p.listing([_detail_name(s, names, cited) for s in found[:2]])
    return p.get("followup", kind.value, detail=details, file=file_ref)


# -- assembly -------------------------------------------------------------------------------


@dataclass
class _Draft:
    """The pieces of a paragraph, in DESIGN §1 order, before they are joined."""

    p: _Phrases
    verdict: str
    shape: str
    points: list[str]
    discussion: list[str]
    followups: list[str]

    def text(self) -> str:
        pieces = [
            self.verdict,
            self.shape,
            _render_focus(self.points, self.p),
            _render_discussion(self.discussion, self.p),
            _render_followups(self.followups, self.p),
        ]
        joined = ("" if self.p.lang == "zh" else " ").join(x for x in pieces if x)
        return space_cjk(joined) if self.p.lang == "zh" else joined

    def shrink(self) -> bool:
        """Drop the least important remaining detail; False when nothing more can go."""
        steps = (
            (self.discussion, 3),
            (self.followups, 2),
            (self.points, 3),
            None,
            (self.discussion, 2),
            (self.followups, 1),
            (self.points, 2),
            (self.discussion, 1),
        )
        for step in steps:
            if step is None:
                if self.shape:
                    self.shape = ""
                    return True
                continue
            items, keep = step
            if len(items) > keep:
                items.pop()
                return True
        return False


def paragraph_for(d: Dossier, a: Assessment, lang: Lang) -> tuple[str, _Cited]:
    """The paragraph and what it cites; detail is dropped, least important first, to fit."""
    p = _Phrases(lang, d.number)
    deep = a.level in (Level.MUST_READ, Level.WORTH_READING)
    cited = _Cited()
    draft = _Draft(
        p,
        _verdict(d, a, p),
        _shape(d, p),
        _focus_points(d, a, p, cited),
        _discussion_parts(d, p, cited) if deep else [],
        _followup_items(d, p, cited, 3 if deep else 1),
    )
    while len(draft.text()) > MAX_PARAGRAPH[lang] and draft.shrink():
        pass
    while len(draft.text()) > HARD_MAX_PARAGRAPH[lang] and (draft.discussion or draft.followups):
        (draft.discussion or draft.followups).pop()
    text = draft.text()
    # cite only what survived the trimming
    kept = _Cited(refs={k: v for k, v in cited.refs.items() if code(k) in text}, ids=cited.ids)
    return text, kept


@dataclass(frozen=True)
class TemplateWriter:
    """Deterministic writer; the default (no network, no model)."""

    @property
    def key(self) -> str:
        return TEMPLATE_VERSION

    def write(
        self, dossier: Dossier, assessment: Assessment, *, lang: Lang, paragraph: bool
    ) -> Entry:
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
        text, cited = paragraph_for(dossier, assessment, lang)
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

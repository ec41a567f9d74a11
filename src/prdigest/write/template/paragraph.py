"""A paragraph: verdict and audience, shape, focus points, discussion, follow-ups (DESIGN §1).

Length: a paragraph of any level aims under the locale's ``paragraph_max`` (450 characters in
Chinese, the issue's 150–450; English gets 800, its words run longer). Each focus point comes
with shorter wordings that name fewer things; when the pieces run long, lower-priority detail
goes first (the shape remark, a fifth point, extra discussion, follow-ups and why sentences),
a point says fewer names before it goes, the other-files sentence goes after the third point
but before the last discussion item, and only then do the first two points lose names. What
fits again afterwards comes back (``_Draft.regrow``); then a rewrite too long for a focus
point of its own (80–140 characters, often a small PR's whole change) is said last when it
still fits. Past ``paragraph_hard_max`` discussion and follow-ups go too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prdigest.core.models import AreaText, Assessment, Dossier, FileFact, Level, Role
from prdigest.write.llm.verify import chinese_share
from prdigest.write.template.discussion import discussion_parts, render_discussion
from prdigest.write.template.focus import (
    MAX_POINTS,
    OtherFiles,
    focus_points,
    long_edit_point,
    other_files,
    render_focus,
    render_other_files,
    unnamed_files,
)
from prdigest.write.template.followups import render_followups, weighed_followups
from prdigest.write.template.phrases import Cited, Phrases, code
from prdigest.write.template.why import render_why, summary_part, why_parts

SMALL_LINES = 30  # "only N lines" is said up to this size


def _why(d: Dossier, rule: str, p: Phrases) -> str:
    """Why a PR needs no close read, said only as a fact the diff shows ("" when none fits)."""
    if p.has("why", rule):
        return p.get("why", rule, lines=d.additions + d.deletions)
    lines = d.additions + d.deletions
    roles = _non_source_roles(d, p)
    if lines <= SMALL_LINES:
        if roles:  # both: a tiny change, and none of it runtime code
            return p.get("why", "small_no_source", lines=lines, roles=roles)
        return p.get("why", "small change", lines=lines)
    if roles:
        return p.get("why", "no_source", roles=roles)
    if d.deletions >= 4 * max(1, d.additions) and d.deletions >= SMALL_LINES:
        return p.get("why", "deletion", additions=d.additions, deletions=d.deletions)
    return ""


def _non_source_roles(d: Dossier, p: Phrases) -> str:
    """The roles of a PR's files, said as a list, when none is runtime source ("" else)."""
    if not d.files or d.source_lines_changed():
        return ""
    roles = list(dict.fromkeys(_role_said(f) for f in d.files if p.has("roles", f.role.value)))
    # all of them: "只改了 A、B、C" that leaves a fourth out would be false
    return p.word("roles", "sep").join(p.word("roles", r) for r in roles)


# the CI role also holds the developer tools a preset files with it (tools/, format.sh, lint
# configuration): a file outside these paths is said as a tool, not as CI
_CI_PATH = re.compile(
    r"(?:^|/)(?:\.github|\.ci|ci|\.buildkite|\.circleci|\.gitlab)(?:/|$)|\.gitlab-ci\.yml$"
)


_EXAMPLES_PATH = re.compile(r"(?:^|/)examples?/")


def _role_said(f: FileFact) -> str:
    if f.role is Role.CI and not _CI_PATH.search(f.path):
        return "tools"
    if f.role is Role.DOCS and _EXAMPLES_PATH.search(f.path):
        return "examples"  # a runnable script a user copies, filed with the docs
    return f.role.value


def _without_examples(audience: str, p: Phrases) -> str:
    """The area's readers without the list of examples a preset gives in parentheses
    (「维护 Ascend Attention 后端（MLA、SFA、DSA、FA3）的工程师」): in an entry the list reads
    as what the PR touched. A single name in parentheses (「Atlas 300I（310P）」) stays."""
    open_, close = (mark.strip() for mark in p.w.paren)
    pattern = re.escape(open_) + "([^" + re.escape(open_ + close) + "]*)" + re.escape(close)

    def drop(found: re.Match[str]) -> str:
        listed = any(sep in found.group(1) for sep in ("、", ", ", "，"))
        return "" if listed else found.group(0)

    return re.sub(r"\s*" + pattern, drop, audience)


def _verdict(d: Dossier, a: Assessment, p: Phrases, area: AreaText | None) -> str:
    rule = next((r.detail for r in a.reasons if r.code == "level"), "")
    audience = _without_examples(area.audience, p) if area is not None and a.audience else ""
    if a.level is Level.MUST_READ:
        key = "must_read_audience" if audience else "must_read"
    elif a.level is Level.WORTH_READING:
        key = "worth_reading_audience" if audience else "worth_reading"
    else:
        key = a.level.value
    why = _why(d, rule, p) if a.level in (Level.SKIM, Level.SKIP) else ""
    if not why and a.level in (Level.SKIM, Level.SKIP):
        key = f"{a.level.value}_plain"
    name = area.name if area is not None else ""
    return p.get("verdict", key, audience=audience, area=name, why=why)


def _shape(d: Dossier, p: Phrases) -> str:
    if d.coverage.diff.value == "none":
        return p.get("shape", "metadata")
    source = d.source_lines_changed()
    tests = sum(f.additions + f.deletions for f in d.files if f.role is Role.TEST)
    # a ratio worth a look only when the test lines hold tests (not thresholds edited in a
    # config or an e2e case)
    if source and tests >= 3 * source and source <= 30 and d.tests:
        return p.get("shape", "tests_heavy", source=source, tests=tests)
    if d.coverage.diff.value == "partial":
        return p.get("shape", "partial", note=d.coverage.note)
    return _large_shape(d, p)


def _large_shape(d: Dossier, p: Phrases) -> str:
    """The remark that a PR is large and the points below are where to start ("" else)."""
    if d.additions + d.deletions >= 800 and len(d.files) >= 8:
        return p.get(
            "shape", "large", additions=d.additions, deletions=d.deletions, files=len(d.files)
        )
    return ""


def _untagged(point: str, p: Phrases) -> str:
    """A focus point without its "(named in the body)"-style reason tags: the names stay."""
    open_, close = p.w.paren
    for reason in p.book["reason"].values():
        pattern = re.escape(open_ + str(reason) + close).replace(re.escape("{files}"), r"\d+")
        point = re.sub(pattern, "", point)
    return point


def _others_by_named_tests(
    d: Dossier, p: Phrases, cited: Cited, points: list[list[str]]
) -> tuple[dict[frozenset[str], OtherFiles], dict[str, tuple[str, ...]]]:
    """The other files with and without the test files whose tests the points can name (made
    now, before the discussion and follow-ups cite anything), and those tests by file."""
    said = " ".join(w for wordings in points for w in wordings)
    tests: dict[str, tuple[str, ...]] = {}
    for t in d.tests:
        if code(t.name) in said:
            tests[t.path] = (*tests.get(t.path, ()), code(t.name))
    keys = [frozenset(), frozenset(tests)] if tests else [frozenset()]
    variants: dict[frozenset[str], OtherFiles] = {}
    scratches = []
    for skip in keys:  # each from the same state: what one names must not hide a file from another
        scratch = cited.copy()
        variants[skip] = other_files(d, p, scratch, skip=skip)
        scratches.append(scratch)
    for scratch in scratches:
        cited.merge(scratch)
    return variants, tests


@dataclass
class _Draft:
    """The pieces of a paragraph, in DESIGN §1 order, before they are joined."""

    p: Phrases
    verdict: str
    why: list[str]
    shape: str
    wordings: list[list[str]]  # per focus point, its wordings, fullest first (fewer names after)
    spare: set[int]  # points whose shorter wording drops a rewritten expression, not a name
    # the other files to open, said after the points: by the set of test files whose tests the
    # points name (not said again), and those tests by file
    others_by_named: dict[frozenset[str], OtherFiles]
    tests_by_file: dict[str, tuple[str, ...]]
    discussion: list[str]
    followups: list[str]
    weak: int = 0  # how many of the last follow-ups are weak: they go before a third point
    dossier: Dossier | None = None  # its files: the other-files sentence counts the unnamed
    limit: int = 0  # the length the shrinking aims under
    thin: set[int] = field(default_factory=set)  # the names point: its names go before a point
    others_at: int = 0  # other-files wordings dropped so far (fewer files, then none)
    at: list[int] = field(default_factory=list)  # per point, the wording said now
    gone: list[list[str]] = field(default_factory=list)  # points dropped, in the order they went
    weak_gone: list[str] = field(default_factory=list)  # weak follow-ups dropped, the same way
    why_gone: list[str] = field(default_factory=list)  # why sentences dropped, the same way

    def __post_init__(self) -> None:
        self.at = [0] * len(self.wordings)

    @property
    def points(self) -> list[str]:
        return [w[i] for w, i in zip(self.wordings, self.at, strict=True)]

    def others(self) -> list[OtherFiles]:
        """The other-files wordings left (fullest first: fewer files after), given the why and
        the focus points as rendered now: the files they name are not said again."""
        focus = render_focus(self.points, self.p)
        named = frozenset(
            path for path, tests in self.tests_by_file.items() if any(t in focus for t in tests)
        )
        # a set made up front, else the files all said: no file is skipped whose test is not named
        files = self.others_by_named.get(named, self.others_by_named[frozenset()])
        unnamed = files.unnamed_in(render_why(self.why, self.p) + focus)
        wordings = [unnamed.unnamed_in("", size) for size in range(len(unnamed.paths), 0, -1)]
        return wordings[self.others_at :]

    def _pieces(self) -> list[str]:
        """The paragraph's parts as rendered now, the other-files sentence left empty."""
        return [
            self.verdict,
            render_why(self.why, self.p),
            self.shape,
            render_focus(self.points, self.p),
            "",  # the other files, counted against what the rest names
            render_discussion(self.discussion, self.p),
            render_followups(self.followups, self.p),
        ]

    def text(self) -> str:
        pieces = self._pieces()
        others = self.others()
        if self.points and others:
            said = "".join(pieces)
            rest = unnamed_files(self.dossier, said, others[0].paths, self.p) if self.dossier else 0
            pieces[4] = render_other_files(others[0], rest, self.p)
        return self.p.finish(self.p.w.join.join(x for x in pieces if x))

    def fits(self) -> bool:
        text = self.text()
        return len(text) <= self.limit and chinese_share(text) >= self.p.locale.script.min_cjk_share

    def shrink(self) -> bool:
        """Drop the least important remaining detail; False when nothing more can go.

        A focus point first loses names (its shorter wordings), the last point first, and
        goes only when it names one thing; the first two points go last of all."""
        steps: tuple[str | tuple[list[str] | str, int], ...] = (
            "shape",
            ("points", 4),
            (self.discussion, 3),
            (self.followups, 2),
            (self.why, 2),
            "weak",
            ("points", 3),
            (self.discussion, 2),
            (self.followups, 1),
            (self.why, 1),
            "tags",
            ("points", 2),
            "others",
            (self.discussion, 1),
            "trim",
            (self.why, 0),
        )
        for step in steps:
            if isinstance(step, str):
                if self._drop(step):
                    return True
                continue
            items, keep = step
            if items == "points":
                if len(self.wordings) > keep:
                    self._trim_or_pop()
                    return True
                continue
            assert isinstance(items, list)
            if len(items) > keep:
                gone = items.pop()
                if items is self.why:
                    self.why_gone.append(gone)
                return True
        return False

    def regrow(self) -> None:
        """After the shrinking, give back what fits again: a dropped why sentence (the reason
        or design a reader is after, the first of them first), a dropped point (the last to go
        first) in its shortest wording, then more names in each point, the first first, then a
        weak follow-up."""
        self._give_back(self.why, self.why_gone)
        for wordings in reversed(self.gone):
            self.wordings.append(wordings)
            self.at.append(len(wordings) - 1)
            if not self.fits():
                self.wordings.pop()
                self.at.pop()
        self.gone.clear()
        for i in range(len(self.wordings)):
            while self.at[i] > 0:
                self.at[i] -= 1
                if not self.fits():
                    self.at[i] += 1
                    break
        self._give_back(self.followups, self.weak_gone)

    def _give_back(self, items: list[str], gone: list[str]) -> None:
        """Sentences dropped from ``items`` back, the last to go first, while they fit."""
        for item in reversed(gone):
            items.append(item)
            if not self.fits():
                items.pop()
                break
        gone.clear()

    def _trim_or_pop(self) -> None:
        """The last point says fewer names, or, when it has no shorter wording, the names
        point does (names no definition carries say less than a definition), or it goes."""
        last = len(self.wordings) - 1
        thin = [i for i in self.thin if i < last and self.at[i] < len(self.wordings[i]) - 1]
        if self.at[last] < len(self.wordings[last]) - 1:
            self.at[last] += 1
        elif thin:
            self.at[thin[0]] += 1
        else:
            self.gone.append(self.wordings.pop())
            self.at.pop()
            self.spare.discard(len(self.wordings))
            self.thin.discard(len(self.wordings))

    def _drop(self, step: str) -> bool:
        """One-off steps: the shape remark, the reason tags of the points, the other files,
        and, when nothing else is left, fewer names in any point (the last first)."""
        if step == "shape" and self.shape:
            self.shape = ""
            return True
        if step == "weak" and self.weak and self.followups:
            self.weak_gone.append(self.followups.pop())
            self.weak -= 1
            return True
        if step == "others" and self.others():
            self.others_at += 1  # fewer files, then none
            return True
        if step == "trim":  # a second rewritten expression first, then names, last point first
            order = sorted(range(len(self.wordings)), key=lambda i: (i not in self.spare, -i))
            for i in order:
                if self.at[i] < len(self.wordings[i]) - 1:
                    self.at[i] += 1
                    return True
            return False
        if step == "tags":  # only when that alone makes the paragraph fit: a point costs more
            tagged = [list(w) for w in self.wordings]
            self.wordings[:] = [[_untagged(x, self.p) for x in w] for w in tagged]
            if self.wordings != tagged and len(self.text()) <= self.limit:
                self.gone[:] = [[_untagged(x, self.p) for x in w] for w in self.gone]
                return True
            self.wordings[:] = tagged
        return False


def _add_long_edit(
    draft: _Draft, d: Dossier, p: Phrases, cited: Cited, most: int, files: dict[str, str]
) -> None:
    """A long rewrite as a last focus point, in its fullest wording that still fits (cited only
    when said): the room a short paragraph has left. It takes the place of its file's
    line-count point (``files``: each such point's text by path), which says less."""
    scratch = cited.copy()
    point = long_edit_point(d, p, scratch)
    if point is None:
        return
    said = [i for i, w in enumerate(draft.wordings) if w == [files.get(point.path)]]
    if not said and len(draft.wordings) >= most:
        return
    at = said[0] if said else len(draft.wordings)
    replaced = (draft.wordings.pop(at), draft.at.pop(at)) if said else None
    draft.wordings.insert(at, list(point.texts))
    draft.at.insert(at, 0)
    while not draft.fits():
        if draft.at[at] == len(draft.wordings[at]) - 1:
            draft.wordings.pop(at)
            draft.at.pop(at)
            if replaced is not None:
                draft.wordings.insert(at, replaced[0])
                draft.at.insert(at, replaced[1])
            return
        draft.at[at] += 1
    cited.merge(scratch)


def _add_summary(draft: _Draft, d: Dossier, p: Phrases, cited: Cited) -> None:
    """What the body says the change does, before the rest of the why, where a paragraph whose
    PR gives no reason has room left for it (cited only when said)."""
    scratch = cited.copy()
    summary = summary_part(d, p, scratch)
    if summary is None:
        return
    draft.why.insert(0, summary)
    if draft.fits():
        cited.merge(scratch)
    else:
        draft.why.pop(0)


def _trailing_weak(weak: list[bool]) -> int:
    """How many follow-ups at the end of the list are weak ones."""
    count = 0
    for flag in reversed(weak):
        if not flag:
            break
        count += 1
    return count


def paragraph_for(
    d: Dossier, a: Assessment, lang: str, area: AreaText | None = None, variant: int = 0
) -> tuple[str, Cited]:
    """The paragraph and what it cites; detail is dropped, least important first, to fit.

    ``area`` is the primary area's name and readers in ``lang`` (from the preset);
    ``variant`` another choice of phrase variants.
    """
    p = Phrases(lang, d.number, variant)
    bounds = p.locale.bounds
    deep = a.level in (Level.MUST_READ, Level.WORTH_READING)
    cited = Cited()
    quoting = Cited()  # the why first: the names point skips the names its quote says
    why = why_parts(d, p, quoting)
    quoted = frozenset(quoting.refs) | {name.lstrip("@") for name in quoting.refs}  # as shown
    points = focus_points(d, a, p, cited, quoted=quoted)
    cited.merge(quoting)  # cited after the points, as if written after them
    verdict, shape = _verdict(d, a, p, area), _shape(d, p)
    wordings = [list(x.texts) for x in points]
    others = _others_by_named_tests(d, p, cited, wordings)
    discussion = discussion_parts(d, p, cited) if deep else []
    followups = weighed_followups(d, p, cited, 3 if deep else 1)  # in this order: what each cites
    draft = _Draft(
        p,
        verdict,
        why,
        shape,
        wordings,
        {i for i, x in enumerate(points) if x.spare},
        *others,
        discussion,
        [text for text, _weak in followups],
        _trailing_weak([weak for _text, weak in followups]),
        d,
        thin={i for i, x in enumerate(points) if x.thin},
    )
    limit = bounds.paragraph_max  # one aim for every level: length, not the level, binds names
    draft.limit = limit
    while not draft.fits() and draft.shrink():  # too long, or its code outweighs its words
        pass
    if draft.fits():
        draft.regrow()
        files = {x.path: x.texts[0] for x in points if x.path and not x.spare}
        _add_long_edit(draft, d, p, cited, MAX_POINTS[deep], files)
        _add_summary(draft, d, p, cited)
    if draft.shape and len(draft.points) < 2 and draft.shape == _large_shape(d, p):
        draft.shape = ""  # "按下面的顺序读" over a single place to read promises an order
    hard = bounds.paragraph_hard_max if deep else limit
    while len(draft.text()) > hard and (draft.discussion or draft.followups or draft.why):
        (draft.discussion or draft.followups or draft.why).pop()
    # quotes of the body are in its language: they may not outweigh the entry's own (the
    # verifier's script rule); the quote goes first, then the other quoted detail
    rule = p.locale.script
    while chinese_share(draft.text()) < rule.min_cjk_share and (draft.why or draft.discussion):
        (draft.why or draft.discussion).pop()
    text = draft.text()
    # cite only what survived the trimming
    kept = Cited(refs={k: v for k, v in cited.refs.items() if code(k) in text}, ids=cited.ids)
    return text, kept

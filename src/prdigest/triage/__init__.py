"""Triage: a verdict level, a score and its reasons for each dossier; ranking of a window.

The verdict is computed here from dossier facts only — never from what the PR body or a model
says about itself (DESIGN §1). Every score contribution is a :class:`Reason`, so ``prdigest
explain`` can show exactly why a PR landed where it did.

How a level is chosen, first rule that applies:

1. ``list_only``: authored by a bot (``…[bot]``).
2. ``skip``: ownership files only (CODEOWNERS); a docs-only change of ≤ 6 lines; a dependency
   pin with no code change; a chore of ≤ 10 lines.
3. ``list_only``: a tiny non-source change (≤ 3 lines) with a thin description and no review.
4. ``worth_reading``: a docs-only change of ≥ 50 lines (a guide).
5. ``skim``: a small change (≤ 12 lines in all, or ≤ 12 outside tests with no test work)
   unless it is a fix in a core area, a fix with tests, or shaped by a rich review (changes
   requested, ≥ 3 threads by people); or any PR scoring under ``SKIM_BELOW``.
6. ``must_read``: fix / perf / feature / refactor / revert work with source changes scoring at
   least ``MUST_READ_AT``.
7. ``worth_reading``: everything else (CI and test infrastructure, dependency bumps with
   adaptations, moves).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from prdigest.core.models import (
    TRIAGE_VERSION,
    Assessment,
    Dossier,
    Kind,
    Level,
    Reason,
    Role,
    SignalKind,
)

KIND_BASE = {
    Kind.FIX: 3.0,
    Kind.PERF: 3.0,
    Kind.FEATURE: 2.5,
    Kind.REFACTOR: 1.8,
    Kind.REVERT: 1.5,
    Kind.CI: 1.2,
    Kind.TEST: 1.2,
    Kind.DEPS: 1.0,
    Kind.DOCS: 0.8,
    Kind.CHORE: 0.3,
}
MUST_READ_AT = 6.0
SKIM_BELOW = 3.0
SMALL_LINES = 12
DOCS_GUIDE_LINES = 50
SUBSTANTIVE_BODY_CHARS = 800  # a template filled with a real analysis, not a one-line purpose
OWNERSHIP_FILES = ("CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS", "OWNERS", "MAINTAINERS")
SIGNAL_BONUS = {
    SignalKind.STALE_BODY: 0.4,
    SignalKind.UNRESOLVED_THREADS: 0.4,
    SignalKind.TODO: 0.2,
    SignalKind.SILENT_CLAMP: 0.3,
    SignalKind.SWALLOWED_EXCEPTION: 0.3,
    SignalKind.ENV_VAR: 0.3,
    SignalKind.CONFIG_FLAG: 0.3,
}


def _reason(code: str, detail: str, weight: float) -> Reason:
    return Reason(code=code, detail=detail, weight=round(weight, 2))


def _lines(dossier: Dossier, *roles: Role) -> int:
    return sum(f.additions + f.deletions for f in dossier.files if f.role in roles)


def _body_chars(dossier: Dossier) -> int:
    return sum(len(s.text) for s in dossier.sections if not s.empty)


def _human_reviewers(dossier: Dossier) -> int:
    return sum(1 for r in dossier.reviewers if not r.is_bot)


def score_reasons(dossier: Dossier) -> list[Reason]:
    """Each contribution to the score, largest topics first."""
    reasons = [
        _reason("kind", f"{dossier.kind.value} ({dossier.kind_evidence})", KIND_BASE[dossier.kind])
    ]
    area = dossier.primary_area
    if area is not None and area.core:
        reasons.append(
            _reason(
                "core_area", f"core area {area.id} ({area.share:.0%} of changes)", 1.5 * area.weight
            )
        )
    source = _lines(dossier, Role.SOURCE)
    if source:
        reasons.append(
            _reason(
                "source_size", f"{source} source lines changed", min(2.0, math.log10(source + 1))
            )
        )
    infra = _lines(dossier, Role.CI, Role.BUILD)
    if infra:
        reasons.append(
            _reason(
                "infra_size",
                f"{infra} CI/build lines changed",
                min(1.5, 0.75 * math.log10(infra + 1)),
            )
        )
    if dossier.tests:
        reasons.append(
            _reason(
                "tests_added",
                f"{len(dossier.tests)} test(s) added",
                min(1.0, 0.5 * len(dossier.tests)),
            )
        )
    if dossier.techniques:
        names = ", ".join(t.label for t in dossier.techniques[:3])
        reasons.append(_reason("test_techniques", names, min(1.0, 0.3 * len(dossier.techniques))))
    reasons += _discussion_reasons(dossier)
    if dossier.claims:
        reasons.append(_reason("claims", f"body claims {dossier.claims[0].figure}", 0.5))
    if any(i.closing for i in dossier.issues):
        reasons.append(_reason("closes_issue", "closes a linked issue", 0.3))
    for kind, bonus in SIGNAL_BONUS.items():
        found = [s for s in dossier.signals if s.kind is kind]
        if found:
            reasons.append(_reason(f"signal_{kind.value}", found[0].detail[:60], bonus))
    return reasons


def _discussion_reasons(dossier: Dossier) -> list[Reason]:
    reasons = []
    requested = [
        r.login for r in dossier.reviewers if "CHANGES_REQUESTED" in r.states and not r.is_bot
    ]
    if requested:
        reasons.append(
            _reason("changes_requested", f"changes requested by {', '.join(requested)}", 1.0)
        )
    human_threads = [t for t in dossier.threads if not t.started_by_bot]
    if len(human_threads) >= 2:
        reasons.append(
            _reason(
                "review_threads",
                f"{len(human_threads)} review threads by people",
                min(1.0, 0.25 * len(human_threads)),
            )
        )
    after = [c for c in dossier.commits if c.after_review]
    if after and _human_reviewers(dossier):
        reasons.append(_reason("commits_after_review", f"{len(after)} commit(s) after review", 0.5))
    return reasons


def _small(dossier: Dossier, total: int, outside_tests: int) -> bool:
    """A few lines in all, or a few lines outside tests with no test work to learn from."""
    return total <= SMALL_LINES or (
        outside_tests <= SMALL_LINES and not dossier.tests and not dossier.techniques
    )


def _exempt_from_small(dossier: Dossier, source: int) -> bool:
    """Small but still worth more than a skim: a core fix, a fix with tests, a rich review."""
    area = dossier.primary_area
    core_fix = dossier.kind is Kind.FIX and source > 0 and area is not None and area.core
    tested_fix = dossier.kind is Kind.FIX and source > 0 and bool(dossier.tests)
    return core_fix or tested_fix or _rich_discussion(dossier)


def _rich_discussion(dossier: Dossier) -> bool:
    """A review that shaped the change: changes requested, or several threads by people."""
    requested = any("CHANGES_REQUESTED" in r.states and not r.is_bot for r in dossier.reviewers)
    human_threads = sum(1 for t in dossier.threads if not t.started_by_bot)
    return requested or human_threads >= 3


def _level_rule(dossier: Dossier, score: float) -> tuple[Level, str]:
    """The level and the rule that chose it (see the module docstring)."""
    total = dossier.additions + dossier.deletions
    source = _lines(dossier, Role.SOURCE)
    outside_tests = total - _lines(dossier, Role.TEST)
    discussed = _human_reviewers(dossier) > 1 or any(not t.started_by_bot for t in dossier.threads)
    paths = [f.path for f in dossier.files]
    roles = {f.role for f in dossier.files}
    if dossier.author and dossier.author.lower().endswith("[bot]"):
        return Level.LIST_ONLY, "authored by a bot"
    if paths and all(p.endswith(OWNERSHIP_FILES) for p in paths):
        return Level.SKIP, "ownership files only"
    if roles == {Role.DOCS} and total <= 6:
        return Level.SKIP, "docs-only change of a few lines"
    if roles and roles <= {Role.DEPS} and total <= 6:
        return Level.SKIP, "dependency pin without code change"
    if dossier.kind is Kind.CHORE and total <= 10:
        return Level.SKIP, "small chore"
    thin = _body_chars(dossier) < SUBSTANTIVE_BODY_CHARS
    if paths and source == 0 and total <= 3 and thin and not discussed:
        return Level.LIST_ONLY, "tiny non-source change with a thin description"
    if roles == {Role.DOCS} and total >= DOCS_GUIDE_LINES:
        return Level.WORTH_READING, "a docs guide"
    if paths and _small(dossier, total, outside_tests) and not _exempt_from_small(dossier, source):
        return Level.SKIM, "small change"
    if score < SKIM_BELOW:
        return Level.SKIM, f"score under {SKIM_BELOW}"
    if (
        dossier.kind in (Kind.FIX, Kind.PERF, Kind.FEATURE, Kind.REFACTOR, Kind.REVERT)
        and source
        and (score >= MUST_READ_AT)
    ):
        return Level.MUST_READ, f"{dossier.kind.value} with source changes, score ≥ {MUST_READ_AT}"
    return Level.WORTH_READING, "notable but not core reading"


def assess(dossier: Dossier) -> Assessment:
    reasons = score_reasons(dossier)
    score = round(sum(r.weight for r in reasons), 2)
    level, rule = _level_rule(dossier, score)
    reasons.insert(0, _reason("level", rule, 0.0))
    area = dossier.primary_area
    focused = area is not None and area.share >= 0.5 and area.readers
    return Assessment(
        repo=dossier.repo,
        number=dossier.number,
        level=level,
        score=score,
        reasons=tuple(reasons),
        audience=area.id if focused and area else None,
        area=area.id if area else None,
        triage_version=TRIAGE_VERSION,
    )


def rank(assessments: Sequence[Assessment]) -> list[Assessment]:
    """Best first: level, then score, then the newer PR number."""
    return sorted(assessments, key=lambda a: (a.level.rank, -a.score, -a.number))


def select(assessments: Sequence[Assessment], top: int) -> list[Assessment]:
    """The PRs that get a paragraph: the best ``top`` that are not ``list_only``."""
    eligible = [a for a in rank(assessments) if a.level is not Level.LIST_ONLY]
    return eligible[: max(0, top)]

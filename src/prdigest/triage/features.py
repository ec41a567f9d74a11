"""The features of a dossier that triage's fitted model weighs, each a named number.

Every feature is something an expert reader looks at (``shared/eval/verdict-criteria.md``): what
kind of change the diff corroborates, how much source it changes and how much of that is
deletion, whether the body states a root cause or a measured effect, which design ideas the
code shows (locks, events, streams, state enums, fail-closed raises), whether new tests come
with it, and whether only docs, CI or tests changed. Sizes enter as logarithms: a reader's
attention does not grow with the line count.

The names are the keys of the model file (``model.json``); a feature's value times its weight
is one reason of the verdict, so ``prdigest explain`` shows how each one moved it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from prdigest.analyze.body import SEVERE
from prdigest.core.models import Dossier, Kind, Role, SignalKind

CONCURRENCY = ("lock", "event", "stream", "thread_pool", "async")
# test techniques that show a way of testing worth copying: ordered by events, bit-exact,
# a patched class attribute, a fake with assertions, a stubbed command
DISTINCTIVE_TESTS = ("threading_event", "bitwise_equal", "monkeypatch", "fake_object", "shell_stub")
_UPSTREAM_SYNC = re.compile(
    r"\b(?:main2main|main2mian|upgrade (?:vllm|to)|bump (?:vllm|version)|upstream|sync with|"
    r"adapt(?:s|ed)? to|compat(?:ibility)?|align with)\b",
    re.I,
)
_COSMETIC = re.compile(
    r"\b(?:typo|log(?:ging|s)?|warning|comment|format(?:ting)?|lint|rename|readme|spelling)\b",
    re.I,
)
_REMOVE = re.compile(r"^\s*(?:remove|drop|delete|deprecate|clean ?up|revert)\b", re.I)
_RELATIVE_FIGURE = re.compile(r"^[+\-~]|[x×]$|\d[-~～–]\d|%")
_NO_CHANGE = re.compile(r"^\W*(?:no|none|n/?a|nope|not)\b", re.I)
KIND_FEATURES = (
    Kind.FIX,
    Kind.PERF,
    Kind.FEATURE,
    Kind.REFACTOR,
    Kind.REVERT,
    Kind.DEPS,
    Kind.CI,
    Kind.TEST,
    Kind.DOCS,
)  # chore is the baseline


def _lines(d: Dossier, *roles: Role) -> int:
    return sum(f.additions + f.deletions for f in d.files if f.role in roles and not f.generated)


def _log(value: float) -> float:
    return round(math.log1p(max(0.0, value)), 4)


def _source_area(d: Dossier) -> bool:
    """Whether the PR's main area is runtime-critical (``core`` in the preset)."""
    area = d.primary_area
    return bool(area and area.core and _lines(d, Role.SOURCE))


def _measured(d: Dossier) -> int:
    return sum(1 for c in d.claims if _RELATIVE_FIGURE.search(c.figure))


def _user_facing(d: Dossier) -> bool:
    section = next((s for s in d.sections if s.name == "user_facing"), None)
    return section is not None and not section.empty and not _NO_CHANGE.match(section.text)


def _design(d: Dossier, *patterns: str, tests: bool = False) -> int:
    return sum(1 for x in d.design if x.pattern in patterns and x.in_test == tests)


_CODE_NAME = re.compile(r"`[^`\n]{2,80}`")


def _section_text(d: Dossier, *names: str) -> str:
    return "\n".join(s.text for s in d.sections if s.name in names and not s.empty)


def _files_only(d: Dossier, *roles: Role) -> bool:
    return bool(d.files) and all(f.role in roles for f in d.files)


def _withdrawal(d: Dossier) -> bool:
    """Test, docs or CI files taken away in bulk with no source change: coverage or a
    documented feature withdrawn, which a reader should know of though no runtime code moves
    (a test merged into another, or lines trimmed from files that stay, is not)."""
    if _lines(d, Role.SOURCE) or sum(f.status == "removed" for f in d.files) < 2:
        return False
    added = sum(f.additions for f in d.files)
    removed = sum(f.deletions for f in d.files)
    return removed >= WITHDRAWN_LINES and added <= 0.1 * (added + removed)


WITHDRAWN_LINES = 500


FEATURES: dict[str, Callable[[Dossier], float]] = {
    **{f"kind_{k.value}": (lambda d, k=k: float(d.kind is k)) for k in KIND_FEATURES},  # type: ignore[misc]
    "source_lines": lambda d: _log(_lines(d, Role.SOURCE)),
    "source_added": lambda d: _log(
        sum(f.additions for f in d.files if f.role is Role.SOURCE and not f.generated)
    ),
    "deletion_share": lambda d: round(
        sum(f.deletions for f in d.files if f.role is Role.SOURCE) / max(1, _lines(d, Role.SOURCE)),
        3,
    ),
    "source_files": lambda d: _log(sum(1 for f in d.files if f.role is Role.SOURCE)),
    "no_source": lambda d: float(bool(d.files) and not _lines(d, Role.SOURCE)),
    "docs_only": lambda d: float(_files_only(d, Role.DOCS)),
    "ci_only": lambda d: float(_files_only(d, Role.CI, Role.BUILD, Role.CONFIG, Role.DEPS)),
    "tests_only": lambda d: float(_files_only(d, Role.TEST, Role.CONFIG)),
    "test_lines": lambda d: _log(_lines(d, Role.TEST)),
    "tests_added": lambda d: float(min(5, len({t.name for t in d.tests}))),
    "techniques": lambda d: float(min(3, len({q.technique for q in d.techniques}))),
    "distinctive_tests": lambda d: float(
        min(2, len({q.technique for q in d.techniques if q.technique in DISTINCTIVE_TESTS}))
    ),
    "core_area": lambda d: float(_source_area(d)),
    "root_cause": lambda d: float(min(3, sum(1 for r in d.rationale if r.kind == "root_cause"))),
    "symptom": lambda d: float(min(3, sum(1 for r in d.rationale if r.kind == "symptom"))),
    "severe": lambda d: float(min(3, sum(1 for r in d.rationale if SEVERE.search(r.text)))),
    "measured": lambda d: float(min(3, _measured(d))),
    "concurrency": lambda d: float(min(3, _design(d, *CONCURRENCY))),
    "ordered_tests": lambda d: float(min(2, _design(d, "event", tests=True))),
    "fail_closed": lambda d: float(min(2, _design(d, "fail_closed"))),
    "state_design": lambda d: float(min(2, _design(d, "state_enum", "extension_point"))),
    "host_sync_removed": lambda d: float(min(2, _design(d, "host_sync_removed"))),
    "body": lambda d: _log(sum(len(s.text) for s in d.sections if not s.empty) / 100),
    "user_facing": lambda d: float(_user_facing(d)),
    "new_knob": lambda d: float(
        any(s.kind in (SignalKind.ENV_VAR, SignalKind.CONFIG_FLAG) for s in d.signals)
        or bool(d.documented_knobs)
    ),
    # a reported issue the PR closes (a linked closing issue, or "Fixes #N" in the body):
    # someone hit the problem, which a mention of a related issue or PR does not say
    "closes_issue": lambda d: float(any(i.closing for i in d.issues)),
    "upstream_sync": lambda d: float(bool(_UPSTREAM_SYNC.search(d.subject))),
    "cosmetic_title": lambda d: float(bool(_COSMETIC.search(d.subject))),
    "areas": lambda d: float(min(4, len(d.areas))),
    "narrow": lambda d: float(bool(d.narrow)),
    "removal": lambda d: float(
        sum(f.deletions for f in d.files if f.role is Role.SOURCE) >= 20
        and sum(f.additions for f in d.files if f.role is Role.SOURCE)
        <= 0.1 * _lines(d, Role.SOURCE)
    ),
    "withdrawal": lambda d: float(_withdrawal(d)),
    "title_remove": lambda d: float(bool(_REMOVE.match(d.subject))),
    "version_gate": lambda d: float(min(2, _design(d, "version_gate"))),
    "infra_logic": lambda d: float(min(3, _design(d, "infra_logic"))),
    "infra_lines": lambda d: _log(_lines(d, Role.CI, Role.BUILD)),
    # what makes a PR a lesson (the criteria's must-read): a correctness fix whose cause is
    # stated, or a mechanism backed by a measurement
    "fix_lesson": lambda d: float(
        _lines(d, Role.SOURCE) > 0
        and any(r.kind == "root_cause" for r in d.rationale)
        and any(SEVERE.search(r.text) for r in d.rationale)
    ),
    "explained": lambda d: _log(len(_section_text(d, "purpose", "changes")) / 100),
    "body_code": lambda d: _log(len(_CODE_NAME.findall(_section_text(d, "purpose", "changes")))),
    "measured_mechanism": lambda d: float(
        d.kind in (Kind.PERF, Kind.FEATURE) and _measured(d) > 0 and _lines(d, Role.SOURCE) > 0
    ),
}


# What a body explanation or a test is worth depends on where it stands: a root cause stated for
# a CI change, a fix or a core-area change reads differently. Products of pairs, named "a*b".
CONTEXTS = ("no_source", "kind_fix", "core_area")
EVIDENCE = ("root_cause", "severe", "symptom", "measured", "explained", "body_code", "tests_added")
INTERACTIONS = tuple(f"{c}*{e}" for c in CONTEXTS for e in EVIDENCE)
NAMES = (*FEATURES, *INTERACTIONS)


def features(d: Dossier) -> dict[str, float]:
    """Every feature of a dossier, by name: :data:`FEATURES`, then :data:`INTERACTIONS`."""
    values = {name: float(get(d)) for name, get in FEATURES.items()}
    for name in INTERACTIONS:
        left, right = name.split("*")
        values[name] = round(values[left] * values[right], 4)
    return values


def lesson(d: Dossier) -> bool:
    """Whether the PR carries something an expert would call a lesson (needed for must_read):
    a stated root cause or correctness symptom, a measured effect, a mechanism in the code, a
    distinctive test (ordered by events, bit-exact, a stubbed boundary), or a review that
    shaped the change."""
    mechanisms = (*CONCURRENCY, "state_enum", "extension_point", "host_sync_removed")
    requested = any("CHANGES_REQUESTED" in r.states and not r.is_bot for r in d.reviewers)
    return (
        any(r.kind == "root_cause" for r in d.rationale)
        or _measured(d) > 0
        or any(x.pattern in mechanisms or (x.pattern == "event" and x.in_test) for x in d.design)
        or any(SEVERE.search(r.text) for r in d.rationale)
        or any(q.technique in DISTINCTIVE_TESTS for q in d.techniques)
        or requested
        or sum(1 for t in d.threads if not t.started_by_bot) >= 3
    )

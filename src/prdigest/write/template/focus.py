"""Focus points: two to four concrete places to read, each anchored on real code names."""

from __future__ import annotations

from pathlib import PurePosixPath

from prdigest.core.models import (
    Assessment,
    Dossier,
    Kind,
    Level,
    Role,
    SignalKind,
    SymbolFact,
    TechniqueFact,
)
from prdigest.write.template.phrases import Cited, Phrases, display_names, file_name
from prdigest.write.template.title import RELATIVE, STRONG_METRIC, title_claim

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


def _main_symbols(d: Dossier) -> list[list[SymbolFact]]:
    """Source symbols worth naming, grouped by file, the most-changed files first (≤ 2 files)."""
    by_file: dict[str, list[SymbolFact]] = {}
    for s in d.symbols:
        if s.in_test or s.kind in ("step", "field") or not s.lines_changed:
            continue
        if s.change == "removed" and s.relocated:
            continue  # said where it arrives ("moved from …"), not as a deletion
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


def _symbol_name(s: SymbolFact, p: Phrases, cited: Cited) -> str:
    line = s.line if s.change != "removed" else None
    name = cited.name(s.name, s.path, line)
    if s.name in GENERIC_NAMES and s.parent:
        return p.get("symbol", "of", parent=cited.name(s.parent, s.path, None), name=name)
    return name


def _change_of(
    s: SymbolFact, p: Phrases, cited: Cited, names: dict[str, str]
) -> tuple[str, dict[str, str]]:
    """The phrase key for how a symbol changed, and what fills it (where it came from)."""
    if s.renamed_from:
        return "renamed", {"origin": cited.name(s.renamed_from, s.moved_from or s.path)}
    if s.moved_from:
        return "moved", {"origin": file_name(s.moved_from, names, cited)}
    return s.change, {}


def _symbol_point(
    group: list[SymbolFact],
    d: Dossier,
    p: Phrases,
    cited: Cited,
    names: dict[str, str],
) -> str:
    by_change: dict[tuple[str, tuple[tuple[str, str], ...]], list[str]] = {}
    for s in group:
        cited.fact(s.id)
        shown = _symbol_name(s, p, cited)
        change, extra = _change_of(s, p, cited, names)
        if not any(shown in items for items in by_change.values()):  # one name, said once
            by_change.setdefault((change, tuple(extra.items())), []).append(shown)
    parts = [
        p.get("symbol", change, name=p.join(items), **dict(extra))
        for (change, extra), items in by_change.items()
    ]
    return p.get(
        "symbol",
        "in_file",
        file=file_name(group[0].path, names, cited),
        names=p.word("symbol", "change_sep").join(parts),
    )


def _file_point(d: Dossier, p: Phrases, cited: Cited, names: dict[str, str]) -> str | None:
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
        file=file_name(top.path, names, cited),
        additions=top.additions,
        deletions=top.deletions,
    )


def _signal_point(d: Dossier, kind: SignalKind, key: str, p: Phrases, cited: Cited) -> str | None:
    found = [s for s in d.signals if s.kind is kind][:2]
    if not found:
        return None
    for s in found:
        cited.fact(s.id)
    return p.get(
        "point", key, names=p.listing([cited.name(s.detail, s.path or "", s.line) for s in found])
    )


def technique_phrase(q: TechniqueFact, p: Phrases, label: str) -> str | None:
    """What a test technique does, said no further than its code shows (None: nothing to say,
    e.g. a parametrisation with a single case)."""
    key = q.technique
    if key == "parametrize":
        if q.cases is None or q.cases < 2:
            return None
        return p.get("technique", key, label=label, cases=q.cases)
    if key == "fake_object" and not q.asserts_calls:
        key = "fake_object_plain"
    elif key == "mock" and q.asserts_calls:
        key = "mock_asserted"
    elif key == "threading_event" and q.sleeps:
        key = "threading_event_sleeps"
    return p.get("technique", key, label=label)


def _relocated_tests_point(d: Dossier, p: Phrases, cited: Cited) -> str | None:
    """Tests that moved or were renamed: said as such, never as new or deleted."""
    moved = [t for t in d.tests if t.moved_from or t.renamed_from]
    if not moved:
        return None
    first = moved[0]
    for t in moved[:2]:
        cited.fact(t.id)
    if first.renamed_from:
        return p.get(
            "point",
            "test_renamed",
            name=cited.name(first.name, first.path, first.line),
            origin=cited.name(first.renamed_from, first.moved_from or first.path),
        )
    same = [t for t in moved if t.moved_from == first.moved_from]
    return p.get(
        "point",
        "tests_moved",
        names=p.join([cited.name(t.name, t.path, t.line) for t in same[:2]]),
        count=len(same),
        origin=cited.name(first.moved_from or "", first.moved_from or ""),
    )


def _test_point(d: Dossier, p: Phrases, cited: Cited) -> str | None:
    new_tests = [t for t in d.tests if not (t.moved_from or t.renamed_from or t.existed)]
    if not new_tests and not d.techniques:
        return _relocated_tests_point(d, p, cited)
    unique = list({t.name: t for t in new_tests}.values())[:2]
    for t in unique:
        cited.fact(t.id)
    names = p.join([cited.name(t.name, t.path, t.line) for t in unique])
    techniques = []
    for q in d.techniques:
        label = (
            cited.name(q.label, q.path, q.line)
            if q.technique not in ("shell_stub", "hypothesis", "subprocess")
            else ""
        )
        phrase = technique_phrase(q, p, label)
        if phrase is None:
            cited.refs.pop(q.label, None)
            continue
        cited.fact(q.id)
        techniques.append(phrase)
        if len(techniques) == 3:
            break
    key = "tests"
    if not names:
        if not techniques:
            return None
        key = "tests_file"
        names = cited.name(PurePosixPath(d.techniques[0].path).name, d.techniques[0].path)
    how = (
        p.get("point", "tests_how", techniques=p.word("point", "technique_sep").join(techniques))
        if techniques
        else p.get("point", "tests_plain")
    )
    return p.get("point", key, names=names, how=(p.word("point", "tests_sep") + how) if how else "")


def _field_point(d: Dossier, p: Phrases, cited: Cited, names: dict[str, str]) -> str | None:
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
        file=file_name(first.path, names, cited),
        owner=cited.name(first.parent or "", first.path),
        names=p.listing([cited.name(s.name, s.path, s.line) for s in same]),
    )


def _claim_point(d: Dossier, p: Phrases, cited: Cited) -> str | None:
    """The body's headline effect, when it is a relative figure of a named metric."""
    claim = next(
        (
            c
            for c in d.claims
            if c.metric
            and RELATIVE.search(c.figure)
            and not (c.in_table and (c.metric or "").lower() not in STRONG_METRIC)
        ),
        None,
    )
    if claim is None:
        return None
    cited.fact(claim.id)
    metric = claim.metric or ""
    if metric.lower().startswith(("improve", "reduction", "regression")):
        return p.get("point", "claim_no_metric", figure=claim.figure)
    return p.get("point", "claim", metric=p.metric(metric), figure=claim.figure)


def _context_points(d: Dossier, p: Phrases, cited: Cited) -> list[str]:
    points = []
    if d.reverts:
        points.append(p.get("point", "revert", number=d.reverts))
    if d.series:
        points.append(p.get("point", "series", index=d.series.index, total=d.series.total))
    renamed = [f for f in d.files if (f.status == "renamed" and f.previous_path) or f.moved_from]
    if renamed and (
        d.kind in (Kind.REFACTOR, Kind.TEST, Kind.CI) or 2 * len(renamed) >= len(d.files)
    ):
        f = renamed[0]
        cited.fact(f.id)
        before = f.previous_path or f.moved_from or ""
        old, new = cited.name(before), cited.name(f.path, f.path)
        same_name = PurePosixPath(before).name == PurePosixPath(f.path).name
        if len(renamed) > 1:
            points.append(p.get("point", "renames", count=len(renamed), old=old, new=new))
        else:
            points.append(p.get("point", "move" if same_name else "rename", old=old, new=new))
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


def focus_points(d: Dossier, a: Assessment, p: Phrases, cited: Cited) -> list[str]:
    names = display_names(d.files)
    points = _context_points(d, p, cited)
    groups = _main_symbols(d)
    for group in groups:
        points.append(_symbol_point(group, d, p, cited, names))
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


def render_focus(points: list[str], p: Phrases) -> str:
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

"""Focus points: two to four concrete places to read, each anchored on real code names."""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import PurePosixPath

from prdigest.core.models import (
    Assessment,
    Dossier,
    EditFact,
    FileFact,
    Kind,
    Level,
    Role,
    SalientFact,
    SignalKind,
    SymbolFact,
    TechniqueFact,
    TestFact,
)
from prdigest.write.template.phrases import Cited, Phrases, code, display_names, file_name
from prdigest.write.template.title import RELATIVE, STRONG_METRIC, title_claim


@dataclass(frozen=True)
class Point:
    """A focus point's wordings, fullest first: a shorter one names less, for the paragraph
    to fit. ``spare``: the shorter ones drop a rewritten expression, not a name."""

    texts: tuple[str, ...]
    spare: bool = False
    thin: bool = False  # names that no definition carries: fewer of them before a point goes
    path: str = ""  # the file a line-count point stands for, or the file a rewrite is in


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


MAX_SYMBOL_FILES = 3
MAX_SYMBOLS_PER_FILE = 5  # the paragraph's length trims them (a shorter wording names fewer)


def _main_symbols(d: Dossier, carrier: str | None) -> list[list[SymbolFact]]:
    """Source symbols worth naming, grouped by file (≤ 3 files, ≤ 5 names each): by salience
    (``analyze.salience``), the file of the most salient name first, then the file that
    carries the change (:func:`_carrying_file`); by lines changed for a dossier without a
    ranking. ``carrier``: that file's path, if any."""
    by_id = {s.id: s for s in d.symbols}
    ranked = [
        by_id[x.symbol]
        for x in d.salient
        if x.kind == "symbol" and x.symbol in by_id and not _demoted(x, d)
    ]
    if not d.salient:
        ranked = sorted((s for s in d.symbols if _nameable(s)), key=lambda s: -s.lines_changed)
    by_file: dict[str, list[SymbolFact]] = {}
    for s in ranked:
        if not _nameable(s):
            continue
        by_file.setdefault(s.path, []).append(s)
    groups = list(by_file.values())
    at = next((i for i, g in enumerate(groups) if g[0].path == carrier), None)
    if at is not None and at > 1:  # second, after the most salient file's names
        groups.insert(1, groups.pop(at))
    return groups[:MAX_SYMBOL_FILES]


CARRYING_SHARE = 0.4  # of the source lines changed: the file a reader must open


def _carrying_file(d: Dossier) -> str | None:
    """The source file that holds the most of the PR's source lines, when it holds at least
    :data:`CARRYING_SHARE` of them (a new kernel, the rewritten module): its names are
    said before a list of used names or a second test."""
    files = [f for f in d.files if f.role is Role.SOURCE and not f.generated and f.lines_seen]
    total = sum(f.lines_seen for f in files)
    if not files or not total:
        return None
    top = max(files, key=lambda f: f.lines_seen)
    return top.path if top.lines_seen >= CARRYING_SHARE * total else None


def _nameable(s: SymbolFact) -> bool:
    if s.in_test or s.kind in ("step", "field") or not s.lines_changed:
        return False
    if s.change == "removed" and s.relocated:
        return False  # said where it arrives ("moved from …"), not as a deletion
    return not (s.name in GENERIC_NAMES and not s.parent)


DEMOTED = ("helper", "duplicate", "kernel")


def _demoted(x: SalientFact, d: Dossier) -> bool:
    """A logging helper, a copy or a kernel is named only when nothing better is there."""
    if not any(r in DEMOTED for r in x.reasons):
        return False
    return any(y.kind == "symbol" and not any(r in DEMOTED for r in y.reasons) for y in d.salient)


REASON_ORDER = ("in_title", "in_body", "extension_point", "tested", "test_named", "cross_file")


def _reason_tag(name: str, d: Dossier, p: Phrases) -> str:
    """Why a name matters, in words its salience reasons back ("" when none is worth saying)."""
    fact = next((x for x in d.salient if x.name == name), None)
    if fact is None or name in GENERIC_NAMES:  # the body's `__init__` may be another class's
        return ""
    reason = next((r for r in REASON_ORDER if r in fact.reasons), None)
    if reason is None:
        return ""
    return p.w.paren[0] + p.get("reason", reason, files=fact.files) + p.w.paren[1]


MAX_PARAMETERS = 3  # more than that is a new signature: the names would crowd the point


def _signature_changed(s: SymbolFact) -> bool:
    return 0 < len(s.parameters_added) + len(s.parameters_removed) <= MAX_PARAMETERS


def _signature_tag(s: SymbolFact, p: Phrases, cited: Cited) -> str:
    """How a modified function's parameters changed, in parentheses ("" when they did not, or
    when too many changed to list)."""
    if not _signature_changed(s):
        return ""
    added, removed = s.parameters_added, s.parameters_removed
    said_added = p.listing([cited.name(x, s.path, s.line) for x in added])
    said_removed = p.listing([cited.name(x, s.path, None) for x in removed])
    if added and removed:
        text = p.get("signature", "both", added=said_added, removed=said_removed)
    else:
        text = p.get("signature", "added" if added else "removed", names=said_added or said_removed)
    return p.w.paren[0] + text + p.w.paren[1]


def _overrides(s: SymbolFact, d: Dossier) -> bool:
    """A method a class gains whose name another class of its file also defines in this diff
    (a subclass override, or the base's): new in its class, not new in the file."""
    return (
        bool(s.parent)
        and s.change == "added"
        and any(
            x.name == s.name and x.path == s.path and x.parent not in (None, s.parent)
            for x in d.symbols
        )
    )


def _symbol_name(s: SymbolFact, d: Dossier, p: Phrases, cited: Cited) -> tuple[str | None, str]:
    """The class a name is said with (None: said alone) and the name as shown."""
    line = s.line if s.change != "removed" else None
    name = cited.name(s.name, s.path, line)
    if _said_with_class(s, d):
        return cited.name(s.parent or "", s.path, None), name
    return None, name


def _said_with_class(s: SymbolFact, d: Dossier) -> bool:
    """A method whose name alone says nothing: generic, short (`np`, `cpu`) or an override."""
    short = len(s.name) <= 3
    return bool(s.parent) and (s.name in GENERIC_NAMES or short or _overrides(s, d))


def _said_with_owners(items: list[tuple[str | None, str]], p: Phrases) -> str:
    """Names joined, those of one class said once with it (`C` 的 `cpu`、`np` 与 `uva`)."""
    runs: list[tuple[str | None, list[str]]] = []
    for owner, name in items:
        if owner is not None and runs and runs[-1][0] == owner:
            runs[-1][1].append(name)
        else:
            runs.append((owner, [name]))
    said = [
        p.get("symbol", "of", parent=owner, name=p.join(names)) if owner else names[0]
        for owner, names in runs
    ]
    return p.join(said)


def _change_of(
    s: SymbolFact, p: Phrases, cited: Cited, names: dict[str, str]
) -> tuple[str, dict[str, str]]:
    """The phrase key for how a symbol changed, and what fills it (where it came from)."""
    reworked = "_reworked" if s.reworked else ""
    if s.renamed_from:
        origin = cited.name(s.renamed_from, s.moved_from or s.path)
        return "renamed" + reworked, {"origin": origin}
    if s.moved_from:
        return "moved" + reworked, {"origin": file_name(s.moved_from, names, cited)}
    if s.extracted_from:
        return "extracted", {"origin": cited.name(s.extracted_from, s.path)}
    if s.extracted:
        return "extracted_code", {}
    if s.replaces:  # a monkey patch: it takes the place of another module's or class's code
        return "replacing", {"target": cited.name(s.replaces, s.path)}
    return s.change, {}


_CLASS_WORTH_NAMING = ("in_title", "in_body", "extension_point")


def _said_by_its_methods(s: SymbolFact, group: list[SymbolFact], d: Dossier) -> bool:
    """A changed class whose changed methods are named too: the methods say where, the class
    adds only its name (unless the title or body talks about the class, or it is a base to
    extend)."""
    if s.kind not in ("class", "struct") or s.change != "modified":
        return False
    if not any(x.parent == s.name and x.change != "removed" for x in group):
        return False
    fact = next((x for x in d.salient if x.symbol == s.id), None)
    return not (fact and any(r in _CLASS_WORTH_NAMING for r in fact.reasons))


def _symbol_point(
    group: list[SymbolFact],
    d: Dossier,
    p: Phrases,
    cited: Cited,
    names: dict[str, str],
) -> Point | None:
    group = [s for s in group if s.name not in cited.refs]  # named by an earlier point
    added_classes = {s.name for s in group if s.kind in ("class", "struct") and s.change == "added"}
    # a new class implies its methods, except one the title or body talks about (a hook)
    group = [s for s in group if s.parent not in added_classes or _talked_about(s, d)]
    group = [s for s in group if not _said_by_its_methods(s, group, d)]
    # `C` 的 `forward` names the class already: `C` is not said again beside it
    said_with_method = {s.parent for s in group if s.name in GENERIC_NAMES and s.parent}
    group = [
        s for s in group if s.name not in said_with_method or s.kind not in ("class", "struct")
    ]
    group = group[:MAX_SYMBOLS_PER_FILE]
    if not group:  # a new class said here implies its methods; said earlier, they are named
        return None
    return Point(
        tuple(_symbol_text(group[:size], d, p, cited, names) for size in range(len(group), 0, -1))
    )


def _talked_about(s: SymbolFact, d: Dossier) -> bool:
    """A method the title or body names, said alone: not one said only with its class (a
    generic or short name, an override), which would name the new class twice."""
    if _said_with_class(s, d):
        return False
    fact = next((x for x in d.salient if x.symbol == s.id), None)
    return fact is not None and any(r in ("in_title", "in_body") for r in fact.reasons)


def _symbol_text(
    group: list[SymbolFact],
    d: Dossier,
    p: Phrases,
    cited: Cited,
    names: dict[str, str],
) -> str:
    by_change: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[str | None, str]]] = {}
    tagged = False
    for s in group:
        cited.fact(s.id)
        owner, shown = _symbol_name(s, d, p, cited)
        signature = _signature_tag(s, p, cited)
        tag = "" if tagged or signature else _reason_tag(s.name, d, p)
        tagged = tagged or bool(tag)
        shown += signature or tag
        change, extra = _change_of(s, p, cited, names)
        if not any((owner, shown) in items for items in by_change.values()):  # said once
            by_change.setdefault((change, tuple(extra.items())), []).append((owner, shown))
    parts = [
        p.get("symbol", change, name=_said_with_owners(items, p), **dict(extra))
        for (change, extra), items in by_change.items()
    ]
    return p.get(
        "symbol",
        "in_file",
        file=file_name(group[0].path, names, cited),
        names=p.word("symbol", "change_sep").join(parts),
    )


def _file_point(d: Dossier, p: Phrases, cited: Cited, names: dict[str, str]) -> Point | None:
    """The file with most lines changed and its counts, unless the rewrite point names it."""
    candidates = [f for f in d.files if f.role is not Role.TEST and not f.generated] or list(
        d.files
    )
    if not candidates:
        return None
    top = max(candidates, key=lambda f: f.additions + f.deletions)
    if any(e.path == top.path for e in _sayable_edits(d)[:1]):
        return None
    cited.fact(top.id)
    text = p.get(
        "symbol",
        "file_only",
        file=file_name(top.path, names, cited),
        additions=top.additions,
        deletions=top.deletions,
    )
    return Point((text,), path=top.path)


MAX_WITHDRAWN_SHOWN = 3


def _withdrawn_point(d: Dossier, p: Phrases, cited: Cited, names: dict[str, str]) -> Point | None:
    """For a PR that changes no source and mostly deletes whole files (tests, docs, CI configs
    taken offline), those files, most lines first: what went is the change, not the largest
    file that stays. A file whose text or tests went to another file is not among them."""
    went_on = (
        {f.moved_from for f in d.files}
        | {t.moved_from for t in d.tests}
        | {s.path for s in d.symbols if s.moved_to}
    )
    gone = [
        f
        for f in d.files
        if f.status == "removed" and f.deletions and f.path not in went_on and not f.moved_from
    ]
    if d.source_lines_changed() or len(gone) < 2:
        return None
    if sum(f.deletions for f in gone) < sum(f.additions for f in d.files):
        return None  # more was written than taken away: the new files are the change
    gone.sort(key=lambda f: -f.deletions)
    shown = gone[:MAX_WITHDRAWN_SHOWN]
    for f in shown:
        cited.fact(f.id)
    said = [
        p.get("symbol", "file_gone", file=file_name(f.path, names, cited), deletions=f.deletions)
        for f in shown
    ]
    texts: tuple[str, ...]
    if len(shown) == len(gone):  # "all of them": no shorter wording names fewer
        texts = (p.get("point", "withdrawn_all", count=len(gone), files=p.join(said)),)
    else:
        texts = tuple(
            p.get("point", "withdrawn_some", count=len(gone), files=p.join(said[:size]))
            for size in range(len(said), 0, -1)
        )
    return Point(texts, path=shown[0].path)


def _signal_point(d: Dossier, kind: SignalKind, key: str, p: Phrases, cited: Cited) -> Point | None:
    found = [s for s in d.signals if s.kind is kind][:2]
    if not found:
        return None
    for s in found:
        cited.fact(s.id)
    shown = [cited.name(s.detail, s.path or "", s.line) for s in found]
    return Point(
        tuple(p.get("point", key, names=p.listing(shown[:n])) for n in range(len(shown), 0, -1))
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
    elif key == "monkeypatch" and q.label.endswith(("setenv", "delenv")):
        key = "monkeypatch_env"  # an environment variable set for the test, no dependency
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
            "test_renamed_reworked" if first.reworked else "test_renamed",
            name=cited.name(first.name, first.path, first.line),
            origin=cited.name(first.renamed_from, first.moved_from or first.path),
        )
    same = [t for t in moved if t.moved_from == first.moved_from]
    return p.get(
        "point",
        "tests_moved" if len(same) > 2 else "tests_moved_all",  # a count only for the unnamed
        names=p.join([cited.name(t.name, t.path, t.line) for t in same[:2]]),
        count=len(same),
        origin=cited.name(first.moved_from or "", first.moved_from or ""),
    )


def _test_point(d: Dossier, p: Phrases, cited: Cited) -> Point | None:
    new_tests = [t for t in d.tests if not (t.moved_from or t.renamed_from or t.existed)]
    if not new_tests:  # what the tests became says more than how a test file works
        relocated = _relocated_tests_point(d, p, cited)
        if relocated or not d.techniques:
            return Point((relocated,)) if relocated else None
    unique = list({t.name: t for t in new_tests}.values())[:2]
    for t in unique:
        cited.fact(t.id)
    shown = [cited.name(t.name, t.path, t.line) for t in unique]
    techniques = []
    for q in d.techniques:
        if shown and not _used_by(q, unique):
            continue  # said of the named new tests, so only what each of them does
        if not shown and q.path != d.techniques[0].path:
            continue  # said of the one test file named, so only what that file does
        label = (
            cited.name(q.label, q.path, q.line)
            if q.technique not in ("shell_stub", "hypothesis", "subprocess")
            else ""
        )
        if shown and q.asserts_calls and not _asserted_by(q, unique):
            q = q.model_copy(update={"asserts_calls": False})  # others in the file assert
        phrase = technique_phrase(q, p, label)
        if phrase is None:
            cited.refs.pop(q.label, None)
            continue
        cited.fact(q.id)
        techniques.append(phrase)
        if len(techniques) == 3:
            break
    if not shown and not techniques:
        return None
    sizes = [(len(shown), n) for n in range(len(techniques), -1, -1)]
    sizes += [(n, 0) for n in range(len(shown) - 1, 0, -1)]
    variants = [_tests_text(d, p, cited, shown[:a], techniques[:b]) for a, b in sizes]
    return Point(tuple(v for v in variants if v))


def _used_by(q: TechniqueFact, tests: list[TestFact]) -> bool:
    """Whether every one of these tests uses the technique — "新增的测试 A 与 B，用 X …" says it
    of both (unknown scopes: not claimed)."""
    if q.used_in is None:
        return False
    return all(t.path == q.path and t.name in q.used_in for t in tests)


def _asserted_by(q: TechniqueFact, tests: list[TestFact]) -> bool:
    """Whether every one of these tests asserts on the calls a mock recorded (a fake's asserts
    are the class's, read through any test that uses it)."""
    if q.technique != "mock":
        return True
    return q.asserted_in is not None and all(t.name in q.asserted_in for t in tests)


def _tests_text(
    d: Dossier, p: Phrases, cited: Cited, shown: list[str], techniques: list[str]
) -> str:
    key = "test_one" if len(shown) == 1 else "tests"  # English says "test" for one
    names = p.join(shown)
    if not names:
        if not techniques:
            return ""
        key = "tests_file"
        names = cited.name(PurePosixPath(d.techniques[0].path).name, d.techniques[0].path)
    how = (
        p.get("point", "tests_how", techniques=p.word("point", "technique_sep").join(techniques))
        if techniques
        else p.get("point", "tests_plain")
    )
    return p.get("point", key, names=names, how=(p.word("point", "tests_sep") + how) if how else "")


def _renamed_field(new: SymbolFact, old: SymbolFact) -> bool:
    """A field the same class lost under a name alike (``_mtp_spec_dummy_capture`` →
    ``_spec_dummy_capture``): the field was renamed, not added."""
    if (new.path, new.parent) != (old.path, old.parent):
        return False
    a, b = sorted((new.name.strip("_"), old.name.strip("_")), key=len)
    # one name inside the other, most of it (not `quant` inside `dispatch_with_quant`)
    return (a in b and len(a) >= 0.6 * len(b)) or SequenceMatcher(None, a, b).ratio() >= 0.8


def _field_point(d: Dossier, p: Phrases, cited: Cited, names: dict[str, str]) -> str | None:
    """New state: annotated fields a class gains (often the heart of a fix)."""
    new_classes = {
        s.name for s in d.symbols if s.kind in ("class", "struct") and s.change == "added"
    }
    gone = [s for s in d.symbols if s.kind == "field" and s.change == "removed"]
    fields = [
        s
        for s in d.symbols
        if s.kind == "field"
        and s.change == "added"
        and not s.in_test
        and s.parent not in new_classes  # a new class's fields come with it
        and not any(_renamed_field(s, old) for old in gone)
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
    renamed = _relocated_files(d)
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
        elif not f.previous_path:  # found by its text, not git's rename: most of it moved
            points.append(p.get("point", "moved_content", old=old, new=new))
        else:
            points.append(p.get("point", "move" if same_name else "rename", old=old, new=new))
    return points


def _ci_led(d: Dossier) -> bool:
    """Whether the CI files carry the change (at least as many lines as the source)."""
    ci = sum(f.lines_seen for f in d.files if f.role is Role.CI)
    return ci >= d.source_lines_changed()


def _steps_point(d: Dossier, p: Phrases, cited: Cited) -> str | None:
    """The CI steps or workflow jobs the PR adds or changes (two at most)."""
    steps = [s for s in d.symbols if s.kind == "step"][:2]
    if not steps:
        return None
    for s in steps:
        cited.fact(s.id)
    added = all(s.change == "added" for s in steps)
    return p.get(
        "point",
        "step_added" if added else "step",
        names=p.listing([cited.name(s.name, s.path, s.line) for s in steps]),
    )


def _edit_text(e: EditFact, p: Phrases, cited: Cited) -> str:
    cited.fact(e.id)
    return p.get(
        "point",
        "edit_pair",
        before=cited.name(e.before, e.path),
        after=cited.name(e.after, e.path, e.line),
    )


MAX_EDIT_CHARS = 80  # a longer rewrite costs a point's worth of names: the reader opens the file
MAX_LONG_EDIT_CHARS = 140  # … unless the paragraph has room left for it (see long_edit_point)


def _sayable_edits(d: Dossier, limit: int = MAX_EDIT_CHARS) -> list[EditFact]:
    """The rewrites short enough for a point; a changed default is the follow-up's to say."""
    defaults = {(s.path, s.line) for s in d.signals if s.kind is SignalKind.DEFAULT_CHANGED}
    return [
        e
        for e in d.edits
        if len(e.before) + len(e.after) <= limit and (e.path, e.line) not in defaults
    ]


def _edit_point(
    d: Dossier, p: Phrases, cited: Cited, names: dict[str, str], limit: int = MAX_EDIT_CHARS
) -> Point | None:
    """The expression the change rewrote in place (at most two of one file)."""
    edits = _sayable_edits(d, limit)
    if not edits:
        return None
    first = edits[0]
    # a second rewrite is said under the first's definition only when it sits in it too
    same = [e for e in edits[1:3] if (e.path, e.symbol) == (first.path, first.symbol)][:1]
    file = file_name(first.path, names, cited)
    where = p.get("point", "edit_file", file=file)
    if first.symbol:
        where = p.get("point", "edit_in", file=file, symbol=cited.name(first.symbol, first.path))
    pair = [first, *same]
    texts = [_edit_text(e, p, cited) for e in pair]
    return Point(
        tuple(
            p.get("point", "edit", where=where, pairs=p.word("point", "edit_sep").join(texts[:n]))
            for n in range(len(texts), 0, -1)
        ),
        spare=True,
        path=first.path,
    )


def long_edit_point(d: Dossier, p: Phrases, cited: Cited) -> Point | None:
    """A rewrite too long for a focus point of its own (up to 140 characters), for a paragraph
    that has room left once the rest fits — often a small PR's whole change. None when a
    shorter rewrite was a focus point already."""
    if any(len(e.before) + len(e.after) <= MAX_EDIT_CHARS for e in d.edits):
        return None
    return _edit_point(d, p, cited, display_names(d.files), MAX_LONG_EDIT_CHARS)


# two kinds at most, in this order: code that only moved or was re-indented says least
NAME_KEYS = ("named", "tested", "titled", "introduced", "gone", "relocated")
MAX_NAMES_PER_KIND = 6


def _names_point(
    d: Dossier, p: Phrases, cited: Cited, quoted: frozenset[str] = frozenset()
) -> Point | None:
    """Identifiers the change is about that no definition names: the ones the body talks
    about, the ones the new tests exercise too, new ones, gone ones (two kinds at most); not
    the ones the paragraph's quote of the body says (``quoted``)."""
    chosen: dict[str, list[SalientFact]] = {}
    identifiers = {y.name for y in d.salient if y.kind == "identifier"}
    for x in d.salient:
        if x.kind != "identifier" or x.name in cited.refs or x.name in quoted:
            continue
        if x.name.startswith("self.") and x.name.rsplit(".", 1)[-1] in identifiers:
            continue  # an attribute chain is said by its attribute, which the change also uses
        if any(y.endswith("." + x.name) and not y.startswith("self.") for y in identifiers):
            continue  # the bare name of a call already named with its module
        if x.name.endswith("()") and x.name[:-2] in identifiers:
            continue  # `f()` where `f` is named too
        if any(r in DEMOTED for r in x.reasons):
            continue
        if "in_body" in x.reasons:
            key = "named"
        elif "in_title" in x.reasons:
            key = "titled"
        elif "tested" in x.reasons and x.change != "gone":
            key = "tested"
        elif "relocated" in x.reasons:
            key = "relocated"
        elif x.change in ("introduced", "gone"):
            key = x.change
        else:
            continue
        chosen.setdefault(key, []).append(x)
    picked: list[tuple[str, str]] = []  # (kind, shown name), in the order they are said
    for key in [k for k in NAME_KEYS if chosen.get(k)][:2]:
        for x in chosen[key][:MAX_NAMES_PER_KIND]:
            cited.fact(x.id)
            shown = cited.name(x.name, x.path, x.line if x.change != "gone" else None)
            picked.append((key, shown))
    if not picked:
        return None
    texts = tuple(_names_text(picked[:size], p) for size in range(len(picked), 0, -1))
    return Point(texts, thin=True)


def _names_text(picked: list[tuple[str, str]], p: Phrases) -> str:
    by_key: dict[str, list[str]] = {}
    for key, shown in picked:
        by_key.setdefault(key, []).append(shown)
    parts = [
        p.get("point", f"names_{key}", names=p.listing(items)) for key, items in by_key.items()
    ]
    return p.word("point", "edit_sep").join(parts)


def _first_copies(d: Dossier) -> tuple[str, list[FileFact]]:
    """The file whose change others repeat, and those copies ("" and none if none): a source
    file's before a test's (the copies of code a point names are what a reader must know of:
    the same fix in a second backend), else the first."""
    originals = [f.duplicate_of for f in d.files if f.duplicate_of]
    if not originals:
        return "", []
    roles = {f.path: f.role for f in d.files}
    original = next((o for o in originals if roles.get(o) is Role.SOURCE), originals[0])
    return original, [f for f in d.files if f.duplicate_of == original]


MAX_COPIES_NAMED = 2  # more copies are counted


def _copies_note(d: Dossier, p: Phrases, cited: Cited, names: dict[str, str]) -> str | None:
    original, same = _first_copies(d)
    if not same:
        return None
    file = file_name(original, names, cited)
    if len(same) <= MAX_COPIES_NAMED:
        others = p.listing([file_name(f.path, names, cited) for f in same])
        return p.get("point", "copies_named", file=file, others=others)
    return p.get("point", "copies", file=file, count=len(same))


MAX_OTHER_FILES = 3
_NOT_READ = frozenset({"__init__.py", "CMakeLists.txt"})  # a package marker or a build list


@dataclass(frozen=True)
class OtherFiles:
    """The other-files sentence's files, most lines first: each as said (with the definition
    its change sits in), its path and its name as a paragraph shows it. Made before the
    paragraph is trimmed to length, it holds the files its points name too; ``room`` is how
    many it says, as many as the points did not name then. :meth:`unnamed_in` picks them
    from those the final text does not name: a file whose point was dropped is said in the
    place of a smaller one, not hidden in the count, and the sentence keeps its length."""

    said: tuple[str, ...]
    paths: tuple[str, ...]
    names: tuple[str, ...]
    room: int = 0
    # per file, its wording with the most telling definition and that name, for a text that
    # does not say the name (a point that named it went)
    telling: tuple[tuple[str, str] | None, ...] = ()

    def unnamed_in(self, text: str, most: int = MAX_OTHER_FILES) -> OtherFiles:
        keep = [i for i, name in enumerate(self.names) if name not in text]
        keep = keep[: min(most, self.room)]
        said: list[str] = []
        for i in keep:  # a name the sentence said for one file is not said for the next
            said.append(self._wording(i, text + " ".join(said)))
        return OtherFiles(
            tuple(said),
            tuple(self.paths[i] for i in keep),
            tuple(self.names[i] for i in keep),
            len(keep),
        )

    def _wording(self, i: int, text: str) -> str:
        better = self.telling[i] if i < len(self.telling) else None
        return better[0] if better is not None and better[1] not in text else self.said[i]


MAX_CANDIDATES = MAX_OTHER_FILES + 5  # room for the files the points name (five at most)


def other_files(
    d: Dossier, p: Phrases, cited: Cited, skip: frozenset[str] = frozenset()
) -> OtherFiles:
    """The other changed files a reader opens, for a PR whose points name few of them: source,
    test and config files (not ``skip``: test files whose tests the points name), most lines
    first, Python before kernels when Python carries the change; a docs or CI change's own
    files when no source changed. Those the final paragraph names are left out when it is
    said (:meth:`OtherFiles.unnamed_in`)."""
    names = display_names(d.files)
    python = d.python_carries()
    moved_away = {f.moved_from for f in d.files if f.moved_from}  # said where its text went
    eligible = [
        f
        for f in d.files
        if not (f.generated or f.duplicate_of or f.binary)
        and f.path not in moved_away
        and f.additions + f.deletions
        and PurePosixPath(f.path).name not in _NOT_READ
        and f.path not in skip
    ]
    read: tuple[Role, ...] = (Role.SOURCE, Role.TEST, Role.CONFIG)
    if not d.source_lines_changed():  # no runtime code: the docs and CI files are the change
        read += (Role.DOCS, Role.CI, Role.BUILD)
    candidates = [f for f in eligible if f.role in read]
    candidates.sort(key=lambda f: (python and f.language == "cpp", -(f.additions + f.deletions)))
    shown = candidates[:MAX_CANDIDATES]
    fresh = [f for f in shown if names.get(f.path, f.path) not in cited.refs]
    for f in shown:
        cited.fact(f.id)
    wordings = [_file_with_owner(f.path, d, p, cited, names) for f in shown]
    return OtherFiles(
        tuple(said for said, _telling in wordings),
        tuple(f.path for f in shown),
        tuple(code(names.get(f.path, f.path)) for f in shown),
        min(len(fresh), MAX_OTHER_FILES),
        tuple(telling for _said, telling in wordings),
    )


def render_other_files(others: OtherFiles, rest: int, p: Phrases) -> str:
    """The sentence, with the count of changed files the paragraph does not name."""
    key = "other_files_more" if rest else "other_files"
    return p.get("point", key, files=p.join(list(others.said)), count=rest) + p.stop


def _relocated_files(d: Dossier) -> list[FileFact]:
    return [f for f in d.files if (f.status == "renamed" and f.previous_path) or f.moved_from]


def unnamed_files(
    d: Dossier, text: str, also: tuple[str, ...] = (), p: Phrases | None = None
) -> int:
    """How many changed files ``text`` names nowhere (by the name it gives them), not counting
    ``also`` (the files a sentence still to come names), nor the moved files a "N 个文件换了
    位置" point counts when ``text`` holds it (it names one of them and their number), nor the
    copies a "… 与另外 N 个文件中的同一改动" point counts (or names) when ``text`` holds it."""
    names = display_names(d.files)
    moved = _relocated_files(d)
    counted = len(moved) > 1 and moved[0].path in text and f"{len(moved)} " in text
    covered = {f.path for f in moved} if counted else set()
    copies = _copies_note(d, p, Cited(), names) if p is not None else None
    if copies and copies in text:
        covered |= {f.path for f in _first_copies(d)[1]}
    return sum(
        1
        for f in d.files
        if f.path not in also
        and f.path not in covered
        and code(names[f.path]) not in text
        and f.path not in text  # a move names a file by its whole path
    )


def _file_with_owner(
    path: str, d: Dossier, p: Phrases, cited: Cited, names: dict[str, str]
) -> tuple[str, tuple[str, str] | None]:
    """A file and, in brackets, the definition its change sits in (the most salient one, else
    the one with most lines changed), when the paragraph has not named it; a deleted file
    is said as deleted, a new one as new ("还改了" alone would say it was there before).
    Second: the file said with its most telling definition when a point names that one too
    (a point that may go), and that name as shown; None when it is the same wording, or a
    longer one (the room a point or another file needs)."""
    shown = file_name(path, names, cited)
    # a file whose text came from another is no new file (the moves point says where from)
    status = next((f.status for f in d.files if f.path == path and not f.moved_from), "")
    if status == "removed":
        return p.get("symbol", "file_removed", file=shown), None  # its definitions went with it
    scores = {x.symbol: x.score for x in d.salient if x.symbol}
    owners = [s for s in d.symbols if s.path == path and _nameable(s)]
    owners = sorted(
        (s for s in owners if s.name not in GENERIC_NAMES),
        key=lambda s: (scores.get(s.id, float("-inf")), s.lines_changed),
        reverse=True,
    )
    fresh = [s for s in owners if s.name not in cited.refs]
    if fresh:
        said = _owned(shown, status, fresh[0], p, cited)
    else:
        said = p.get("symbol", "file_added", file=shown) if status == "added" else shown
    if not owners or (fresh and owners[0] is fresh[0]):
        return said, None
    if cited.refs[owners[0].name].path != path:
        return said, None  # the name a point gave another file's definition: its link is there
    telling = _owned(shown, status, owners[0], p, cited)
    if len(telling) > len(said):
        return said, None  # a longer wording takes the room a point or a file needs
    return said, (telling, code(owners[0].name))


def _owned(shown: str, status: str, owner: SymbolFact, p: Phrases, cited: Cited) -> str:
    cited.fact(owner.id)
    line = owner.line if owner.change != "removed" else None
    said = cited.name(owner.name, owner.path, line)
    if status == "added":
        return p.get("symbol", "file_added_with", file=shown, owner=said)
    if owner.change == "removed":  # the change is that it is gone, not something inside it
        return p.get("symbol", "file_owner_removed", file=shown, owner=said)
    return shown + p.w.paren[0] + said + p.w.paren[1]


def _one(text: str | None) -> Point | None:
    return Point((text,)) if text else None


MAX_POINTS = {True: 5, False: 4}  # deep entries, the others; the paragraph's length trims them


def focus_points(
    d: Dossier, a: Assessment, p: Phrases, cited: Cited, quoted: frozenset[str] = frozenset()
) -> list[Point]:
    """Up to five places to read, the most telling first: what the PR rewrote, the most
    salient definitions, the new tests, the names the body talks about (not those its quote
    says, ``quoted``), new state and knobs; each with its shorter wordings (fewer names), for
    the paragraph to fit."""
    names = display_names(d.files)
    ranked: list[tuple[float, Point | None]] = [(0, _one(x)) for x in _context_points(d, p, cited)]
    if _ci_led(d):  # a step tweak beside more source lines is no place to read
        ranked.append((0, _one(_steps_point(d, p, cited))))
    carrier = _carrying_file(d)
    groups = _main_symbols(d, carrier)
    edit = _edit_point(d, p, cited, names)
    ranked.append((1, edit))
    ranked.append((1, _one(_field_point(d, p, cited, names))))  # new state, before its class
    ranked += [(1, _symbol_point(g, d, p, cited, names)) for g in groups[:1]]
    carrying = len(groups) > 1 and groups[1][0].path == carrier
    withdrawn = _withdrawn_point(d, p, cited, names)
    ranked.append((1, withdrawn))
    if not groups and not withdrawn:
        ranked.append((1, _file_point(d, p, cited, names)))
    ranked.append((2, _test_point(d, p, cited)))
    if carrying:  # the file that carries the change, before the names no definition holds
        ranked.append((2, _symbol_point(groups[1], d, p, cited, names)))
    ranked.append((2 if edit else 1, _names_point(d, p, cited, quoted)))
    for kind, key in ((SignalKind.ENV_VAR, "env_var"), (SignalKind.CONFIG_FLAG, "config_flag")):
        ranked.append((3, _signal_point(d, kind, key, p, cited)))
    ranked += [(2, _symbol_point(g, d, p, cited, names)) for g in groups[1 + carrying :]]
    if (d.kind is Kind.PERF or (a.level is Level.MUST_READ and d.kind is not Kind.FIX)) and (
        title_claim(d) is None  # a figure already in the title need not be repeated
    ):
        ranked.append((4, _one(_claim_point(d, p, cited))))
    ranked.append((5, _one(_copies_note(d, p, cited, names))))
    points = [point for _rank, point in sorted(ranked, key=lambda x: x[0]) if point]
    return points[: MAX_POINTS[a.level in (Level.MUST_READ, Level.WORTH_READING)]]


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

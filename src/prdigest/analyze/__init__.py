"""Analyze: a pure function from a PR record (and a repo preset) to a :class:`Dossier`.

No I/O, no settings: everything the stage needs is passed in. The submodules each own one
kind of fact (patches, code, body, discussion, signals, classify); this module wires them and
numbers the facts so that every fact id is unique within the dossier.

It runs at two depths: ``full`` (every fact) and ``triage`` (without the facts only a
paragraph's writer reads, :data:`~prdigest.core.models.FULL_ONLY`: the salience ranking and
in-place edits, two thirds of the analyzer's time). Triage, titles and the neighbour lists
read the same facts at either depth; a digest analyzes every PR at triage depth and only the
PRs it writes a paragraph for in full.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Iterator, Sequence

from prdigest.analyze import body, design, discussion, moves, salience, signals
from prdigest.analyze.classify import classify_areas, classify_kind
from prdigest.analyze.code import (
    extract_symbols,
    extract_techniques,
    extract_tests,
    language_of,
    replaced_targets,
)
from prdigest.analyze.patches import ParsedPatch, parse_patch
from prdigest.core.models import (
    ANALYZER_VERSION,
    Coverage,
    Depth,
    DiffCoverage,
    Dossier,
    EditFact,
    FileFact,
    Provenance,
    RationaleFact,
    Role,
    SalientFact,
    SymbolFact,
    TechniqueFact,
    TestFact,
    python_carries,
)
from prdigest.core.presets import Preset
from prdigest.core.records import PullRequest

__all__ = ["analyze", "coverage_of", "enrich"]

MAX_SYMBOLS = 200  # a vendored or generated file can define thousands; keep the dossier small
_TEST_FILE = re.compile(
    r"(?:^|/)(?:test_[^/]*|[^/]*_test\.\w+|conftest\.py|[^/]*\.(?:test|spec)\.\w+)$"
)


def is_test_file(fact: FileFact) -> bool:
    """A test by role, or by name even where the preset gives another role (CI script tests)."""
    return fact.role is Role.TEST or bool(_TEST_FILE.search(fact.path)) or "/tests/" in fact.path


def coverage_of(pr: PullRequest) -> Coverage:
    """How much of the PR the record shows: full diff, part of it, or metadata only."""
    discussion_known = pr.reviews is not None or pr.review_threads is not None
    checks_known = pr.checks is not None
    if not pr.files:
        return Coverage(
            diff=DiffCoverage.NONE,
            discussion=discussion_known,
            checks=checks_known,
            note="no file list",
        )
    # a pure rename, an empty new file or a mode change has no patch by nature: nothing missing
    missing = [
        f.path
        for f in pr.files
        if f.patch is None and not f.binary and (f.additions or f.deletions)
    ]
    listed_short = pr.changed_files is not None and pr.changed_files > len(pr.files)
    if missing and len(missing) == sum(1 for f in pr.files if f.additions or f.deletions):
        return Coverage(
            diff=DiffCoverage.NONE,
            discussion=discussion_known,
            checks=checks_known,
            note="file list without patches",
        )
    if missing or listed_short:
        note = f"{len(missing)} file(s) without patch" if missing else ""
        if listed_short:
            note = (
                note + "; " if note else ""
            ) + f"{len(pr.files)} of {pr.changed_files} files listed"
        return Coverage(
            diff=DiffCoverage.PARTIAL, discussion=discussion_known, checks=checks_known, note=note
        )
    return Coverage(diff=DiffCoverage.FULL, discussion=discussion_known, checks=checks_known)


def _file_facts(pr: PullRequest, preset: Preset) -> list[FileFact]:
    facts = []
    for index, change in enumerate(pr.files or (), start=1):
        role, generated = preset.role_of(change.path)
        facts.append(
            FileFact(
                id=f"f{index}",
                provenance=Provenance(kind="file", ref=change.path),
                path=change.path,
                previous_path=change.previous_path,
                status=change.status,
                role=role,
                language=language_of(change.path),
                additions=change.additions,
                deletions=change.deletions,
                binary=change.binary,
                has_patch=change.patch is not None,
                generated=generated,
            )
        )
    return facts


def _code_facts(
    parsed: list[tuple[FileFact, ParsedPatch]],
) -> tuple[list[SymbolFact], list[TestFact], list[TechniqueFact], moves.Moves]:
    per_file: list[list[SymbolFact]] = []
    tests: list[TestFact] = []
    techniques: list[TechniqueFact] = []
    for fact, patch in parsed:
        if patch.error or fact.generated:
            continue
        is_test = is_test_file(fact)
        per_file.append(
            extract_symbols(
                patch, language=fact.language, in_test=is_test, status=fact.status, first_id=1
            )
        )
        tests += extract_tests(
            patch, language=fact.language, is_test_file=is_test, first_id=len(tests) + 1
        )
        if is_test or any(t.path == fact.path for t in tests):
            techniques += extract_techniques(
                patch, first_id=len(techniques) + 1, language=fact.language
            )
    symbols = [
        s.model_copy(update={"id": f"s{i}"})
        for i, s in enumerate(_fair_share(per_file, MAX_SYMBOLS), start=1)
    ]
    found = moves.detect(
        parsed,
        (
            (s.path, s.name, s.kind, s.parent, s.change)
            for s in symbols
            if s.language != "python" and s.kind not in ("step", "field", "constant")
        ),
    )
    test_names = {(t.path, t.name) for t in tests}
    classes: dict[tuple[str, str, str], set[str | None]] = {}
    for s in symbols:
        classes.setdefault((s.path, s.name, s.change), set()).add(s.parent)
    symbols = [
        _marked_tested(
            _relocated(s, found, len(classes[(s.path, s.name, s.change)]) > 1), test_names
        )
        for s in symbols
    ]
    symbols = _with_replaced(symbols, parsed)
    tests = [_relocated_test(t, found) for t in tests]
    return symbols, tests, _unique_techniques(techniques), found


def _with_replaced(
    symbols: list[SymbolFact], parsed: Sequence[tuple[FileFact, ParsedPatch]]
) -> list[SymbolFact]:
    """New functions with the attribute of another module or class the PR sets to them."""
    if not any(s.change == "added" and s.language == "python" for s in symbols):
        return symbols
    targets = {f.path: replaced_targets(p) for f, p in parsed if f.language == "python"}
    return [
        s.model_copy(update={"replaces": target})
        if s.change == "added"
        and s.kind in ("function", "method")
        and not s.in_test
        and (target := targets.get(s.path, {}).get(s.name))
        else s
        for s in symbols
    ]


def _fair_share(per_file: list[list[SymbolFact]], cap: int) -> list[SymbolFact]:
    """At most ``cap`` symbols, each file keeping its first ones up to an equal share, so a
    vendored kernel with hundreds of definitions cannot crowd out the Python files after it."""
    if sum(len(group) for group in per_file) <= cap:
        return [s for group in per_file for s in group]
    share = 0
    while sum(min(len(group), share + 1) for group in per_file) <= cap:
        share += 1
    return [s for group in per_file for s in group[:share]]


def _marked_tested(symbol: SymbolFact, test_names: set[tuple[str, str]]) -> SymbolFact:
    """The symbol as a test when a test of its file has its name (copied only then)."""
    if symbol.in_test or (symbol.path, symbol.name) not in test_names:
        return symbol
    return symbol.model_copy(update={"in_test": True})


def _relocated(symbol: SymbolFact, found: moves.Moves, exact: bool = False) -> SymbolFact:
    """The symbol with where it came from (added side) or went (removed side), if it moved;
    ``exact``: other classes of its file have a definition of its name on its side, so only
    its own class's entry is its."""
    if symbol.change == "added":
        origin = found.origin(symbol.path, symbol.parent, symbol.name, exact)
        if origin is not None:
            return symbol.model_copy(
                update={
                    "moved_from": origin.path if origin.path != symbol.path else None,
                    "renamed_from": origin.name if origin.name != symbol.name else None,
                    "reworked": origin.alike < moves.REWORKED_BELOW,
                }
            )
        source = found.extracted.get((symbol.path, symbol.parent, symbol.name))
        if source is not None:
            return symbol.model_copy(update={"extracted": True, "extracted_from": source or None})
    elif symbol.change == "removed":
        target = found.destination(symbol.path, symbol.parent, symbol.name, exact)
        if target is not None:
            return symbol.model_copy(
                update={
                    "moved_to": target.path if target.path != symbol.path else None,
                    "renamed_to": target.name if target.name != symbol.name else None,
                }
            )
    return symbol


def _relocated_test(test: TestFact, found: moves.Moves) -> TestFact:
    origin = next(
        (
            o
            for (path, _parent, name), o in found.added.items()
            if (path, name) == (test.path, test.name)
        ),
        None,
    )
    if origin is None:
        return test
    return test.model_copy(
        update={
            "moved_from": origin.path if origin.path != test.path else None,
            "renamed_from": origin.name if origin.name != test.name else None,
            "reworked": origin.alike < moves.REWORKED_BELOW,
        }
    )


def _unique_techniques(found: list[TechniqueFact]) -> list[TechniqueFact]:
    """One fact per technique across the PR (the first file that uses it), ids renumbered; the
    evidence is the PR's: the most cases any file gives, an assert on calls in any file."""
    seen: dict[str, TechniqueFact] = {}
    for fact in found:
        first = seen.setdefault(fact.technique, fact)
        if first is not fact:
            cases = [c for c in (first.cases, fact.cases) if c is not None]
            seen[fact.technique] = first.model_copy(
                update={
                    "cases": max(cases) if cases else None,
                    "asserts_calls": first.asserts_calls or fact.asserts_calls,
                    "asserted_in": _union(first.asserted_in, fact.asserted_in),
                    "sleeps": first.sleeps or fact.sleeps,
                }
            )
    return [
        fact.model_copy(update={"id": f"q{i}"}) for i, fact in enumerate(seen.values(), start=1)
    ]


def _union(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if a is None and b is None else tuple(sorted(set(a or ()) | set(b or ())))


def _narrow(tags: tuple[str, ...], subject: str, preset: Preset) -> tuple[str, ...]:
    """The preset's audience-confining words that the title's tags or words name."""
    words = {t.lower() for t in tags} | {w.lower() for w in re.findall(r"[\w./+-]+", subject)}
    return tuple(term for term in preset.narrow if term.lower() in words)


def _with_relaid(
    files: list[FileFact], parsed: Sequence[tuple[FileFact, ParsedPatch]]
) -> list[FileFact]:
    """The source files whose patch lays lines out again in place, with their count."""
    relaid = {
        fact.path: n for fact, patch in parsed if fact.role is Role.SOURCE and (n := patch.relaid)
    }
    if not relaid:
        return files
    return [
        f.model_copy(update={"relaid": relaid[f.path]}) if f.path in relaid else f for f in files
    ]


def _parsed(pr: PullRequest, files: Sequence[FileFact]) -> list[tuple[FileFact, ParsedPatch]]:
    # Docs and generated files carry no symbols or line signals worth their parsing (on a long
    # history they are almost half the patch lines); their text still counts for stale bodies.
    return [
        (fact, parse_patch(fact.path, change.patch))
        for fact, change in zip(files, pr.files or (), strict=True)
        if change.patch and fact.role is not Role.DOCS and not fact.generated
    ]


def _ranked(
    pr: PullRequest,
    files: Sequence[FileFact],
    parsed: Sequence[tuple[FileFact, ParsedPatch]],
    symbols: Sequence[SymbolFact],
    tests: Sequence[TestFact],
) -> tuple[list[SalientFact], list[EditFact]]:
    """The facts only a paragraph's writer reads: the salience ranking and in-place edits."""
    context = salience.Context(
        title=pr.title,
        body=pr.body or "",
        python_carries=python_carries(files),
    )
    return salience.rank(parsed, symbols, tests, context, is_test_file)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cycle collector off while one PR is analyzed: the analysis makes millions of
    short-lived tuples, AST nodes and models and few cycles, and collections they set off cost
    a tenth of its time. A collector turned off by the caller stays off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def enrich(dossier: Dossier, pr: PullRequest) -> Dossier:
    """The full dossier of ``pr`` from its triage-depth one (made from the same record): the
    patches parsed again and ranked, the dossier's other facts reused. Equal to
    ``analyze(pr, preset)``; a full dossier is returned as it is."""
    if dossier.depth == "full":
        return dossier
    with _collector_paused():
        return _enriched(dossier, pr)


def _enriched(dossier: Dossier, pr: PullRequest) -> Dossier:
    # the files as salience saw them in analyze: duplicates marked, moves not yet known
    files = [f.model_copy(update={"moved_from": None}) for f in dossier.files]
    salient, edits = _ranked(pr, files, _parsed(pr, files), dossier.symbols, dossier.tests)
    return dossier.model_copy(
        update={"salient": tuple(salient), "edits": tuple(edits), "depth": "full"}
    )


_SPAN = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`")


def _seen_in_diff(found: list[RationaleFact], pr: PullRequest) -> tuple[RationaleFact, ...]:
    """The body's reasons, each marked when it names code none of which the diff shows (a
    reason given for an earlier version, or for code elsewhere)."""
    texts: list[str] | None = None
    out = []
    for fact in found:
        names = _SPAN.findall(fact.text)
        if names:
            if texts is None:  # the patches, and the files' names (a reason may name one)
                texts = [f.patch for f in pr.files or () if f.patch]
                texts.append("\n".join(f.path for f in pr.files or ()))
            if not any(name.rsplit(".", 1)[-1] in text for name in names for text in texts):
                fact = fact.model_copy(update={"code_unseen": True})
        out.append(fact)
    return tuple(out)


def analyze(
    pr: PullRequest, preset: Preset, *, pr_version: str = "", depth: Depth = "full"
) -> Dossier:
    """Every fact about one PR that later stages may use, each with its provenance; at
    ``depth="triage"`` without the facts only a paragraph's writer reads (module docstring)."""
    with _collector_paused():
        return _analyzed(pr, preset, pr_version=pr_version, depth=depth)


def _analyzed(pr: PullRequest, preset: Preset, *, pr_version: str, depth: Depth) -> Dossier:
    def is_bot(login: str | None, author_type: str | None) -> bool:
        return preset.is_bot(login, author_type)

    tags, subject = body.split_title(pr.title)
    files = _file_facts(pr, preset)
    parsed = _parsed(pr, files)
    copies = salience.duplicates(parsed)
    if copies:  # the same change in several files: one copy carries the facts
        files = [
            f.model_copy(update={"duplicate_of": copies[f.path]}) if f.path in copies else f
            for f in files
        ]
        by_path = {f.path: f for f in files}
        parsed = [(by_path[fact.path], patch) for fact, patch in parsed]
    symbols, tests, techniques, found_moves = _code_facts(parsed)
    files = [
        f.model_copy(update={"moved_from": found_moves.files[f.path]})
        if f.path in found_moves.files
        else f
        for f in files
    ]
    files = _with_relaid(files, parsed)
    salient, edits = ([], []) if depth == "triage" else _ranked(pr, files, parsed, symbols, tests)
    added_source = [
        line.text for fact, patch in parsed if fact.role is Role.SOURCE for line in patch.added()
    ]
    kind, kind_evidence = classify_kind(tags, subject, files, preset, added_source)
    sections = body.extract_sections(pr.body)
    threads = discussion.threads(pr, is_bot)
    commits = discussion.commits(pr, is_bot)
    remarks = discussion.remarks(pr, is_bot)
    checks = discussion.checks_summary(pr)
    coverage = coverage_of(pr)
    found_signals = signals.detect(
        parsed,
        files=files,
        tests=tests,
        sections=sections,
        threads=threads,
        checks=checks,
        coverage=coverage,
        kind=kind,
        body=pr.body,
        env_prefixes=preset.env_prefixes,
        commits=commits,
        remarks=remarks,
        is_test=is_test_file,
        moves=found_moves,
        patch_texts=[change.patch for change in pr.files or () if change.patch],
    )
    return Dossier(
        repo=pr.repo,
        number=pr.number,
        title=pr.title,
        subject=subject,
        tags=tags,
        url=pr.html_url,
        author=pr.author,
        merged_at=pr.merged_at,
        merge_commit_sha=pr.merge_commit_sha,
        head_sha=pr.head_sha,
        labels=pr.labels or (),
        additions=pr.additions if pr.additions is not None else sum(f.additions for f in files),
        deletions=pr.deletions if pr.deletions is not None else sum(f.deletions for f in files),
        changed_files=pr.changed_files if pr.changed_files is not None else len(files),
        kind=kind,
        kind_evidence=kind_evidence,
        areas=tuple(classify_areas(tags, files, preset)),
        files=tuple(files),
        symbols=tuple(symbols),
        tests=tuple(tests),
        techniques=tuple(techniques),
        sections=tuple(sections),
        claims=tuple(body.extract_claims(pr.body)),
        rationale=_seen_in_diff(body.extract_rationale(pr.body, sections), pr),
        design=tuple(design.detect(parsed)),
        edits=tuple(edits),
        comparisons=tuple(body.extract_comparisons(pr.body, sections)),
        testing=body.testing_of(sections),
        user_facing=body.user_facing_of(sections)[0],
        salient=tuple(salient),
        narrow=_narrow(tags, subject, preset),
        documented_knobs=signals.documented_knobs(
            [
                change.patch
                for fact, change in zip(files, pr.files or (), strict=True)
                if change.patch and fact.role is Role.DOCS and signals.is_reference_doc(fact.path)
            ],
            preset.env_prefixes,
        ),
        reviewers=tuple(discussion.reviewers(pr, is_bot)),
        threads=tuple(threads),
        remarks=tuple(remarks),
        issues=tuple(discussion.issues(pr)),
        commits=tuple(commits),
        signals=tuple(found_signals),
        checks=checks,
        coverage=coverage,
        series=body.series_of(pr.title),
        reverts=body.reverted_pr(pr.title, pr.body),
        analyzer_version=ANALYZER_VERSION,
        pr_version=pr_version,
        depth=depth,
    )

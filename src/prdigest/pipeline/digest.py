"""The digest of a window: plan (read), compute (pure), persist (write).

* :func:`plan` reads, in one place, everything the window needs from the store: the records,
  and the dossiers, assessments and entries already derived from them.
* :func:`compute` turns the plan into a :class:`~prdigest.core.models.Digest` without touching
  the store: it analyzes and assesses what is not cached (or stale), ranks and selects, and
  hands every entry that is not cached to the writer in one batch.
* :func:`persist` writes, in one place, what compute produced (dossiers, assessments, the
  cacheable entries and the cost of model calls).

Each derived artefact is reused only while the versions it was derived from hold (record
content, analyzer, preset, triage, writer, language and its locale), so a re-run over an
unchanged window recomputes nothing and calls no model.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from prdigest.analyze import analyze
from prdigest.core.errors import NotFoundError
from prdigest.core.locale import DEFAULT_LANG, check_lang, locale
from prdigest.core.models import (
    ANALYZER_VERSION,
    AreaGroup,
    AreaText,
    Assessment,
    Digest,
    DigestItem,
    Dossier,
    Entry,
    Level,
    PRHead,
    UsageRecord,
    Window,
)
from prdigest.core.presets import Preset, load_preset
from prdigest.core.records import PullRequest
from prdigest.store import Store, content_hash
from prdigest.store.artefacts import Cached
from prdigest.triage import assess, rank, select, triage_version
from prdigest.write import Writer, WriteRequest

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class DigestOptions:
    repo: str
    window: Window
    top: int = 8
    lang: str = DEFAULT_LANG
    preset_path: Path | None = None


@dataclass(frozen=True)
class DigestRun:
    """A digest and what writing it took: token usage of model calls and notes for the user."""

    digest: Digest
    usage: tuple[UsageRecord, ...] = ()
    notes: tuple[str, ...] = ()
    written: int = 0  # entries written in this run (the rest came from the store)

    @property
    def prompt_tokens(self) -> int:
        return sum(u.prompt_tokens for u in self.usage)

    @property
    def completion_tokens(self) -> int:
        return sum(u.completion_tokens for u in self.usage)

    @property
    def calls(self) -> int:
        return sum(u.calls for u in self.usage)

    @property
    def fallbacks(self) -> int:
        return sum(1 for i in self.digest.all_items() if i.entry.fallback)


@dataclass(frozen=True)
class Analyzed:
    pr: PullRequest
    pr_hash: str
    dossier: Dossier
    assessment: Assessment
    areas: dict[str, AreaText] = field(default_factory=dict)  # explain: names of its areas


# -- plan -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What a window's digest needs, read from the store."""

    options: DigestOptions
    preset: Preset
    records: tuple[PullRequest, ...]
    cached: Cached


def plan(store: Store, options: DigestOptions) -> Plan:
    check_lang(options.lang)
    preset = load_preset(options.repo, options.preset_path)
    window = options.window
    records = tuple(store.records.in_window(options.repo, window.since, window.until))
    cached = store.artefacts.cached(
        options.repo, [r.number for r in records], ANALYZER_VERSION, preset.key, triage_version()
    )
    return Plan(options, preset, records, cached)


# -- compute ----------------------------------------------------------------------------------


@dataclass
class Fresh:
    """The artefacts made for a digest that the store does not have yet."""

    dossiers: list[tuple[Dossier, str]] = field(default_factory=list)  # (dossier, pr hash)
    assessments: list[tuple[Assessment, str]] = field(default_factory=list)
    entries: list[tuple[Entry, str, str]] = field(default_factory=list)  # (entry, key, pr hash)


@dataclass(frozen=True)
class Computed:
    run: DigestRun
    fresh: Fresh


def analyzed(pr: PullRequest, preset: Preset, cached: Cached, fresh: Fresh) -> Analyzed:
    """Dossier and assessment of one PR: the cached ones while current, else new ones (which
    are added to ``fresh``)."""
    pr_hash = content_hash(pr)
    dossier = cached.dossier(pr.number, pr_hash)
    assessment = cached.assessment(pr.number, pr_hash) if dossier is not None else None
    if dossier is None:
        dossier = analyze(pr, preset, pr_version=pr.version_key)
        fresh.dossiers.append((dossier, pr_hash))
    if assessment is None:
        assessment = assess(dossier, bots=preset.bots)
        fresh.assessments.append((assessment, pr_hash))
    return Analyzed(pr, pr_hash, dossier, assessment)


def entry_key(item: Analyzed, preset: Preset, writer: Writer, lang: str, paragraph: bool) -> str:
    parts = [
        item.pr_hash,
        ANALYZER_VERSION,
        preset.key,
        triage_version(),
        writer.key,
        lang,
        locale(lang).key,
        "p" if paragraph else "t",
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def area_text(preset: Preset, area: str | None, lang: str) -> AreaText | None:
    rule = preset.area_by_id(area) if area else None
    return rule.text(lang) if rule is not None else None


def _head(item: Analyzed) -> PRHead:
    d, a = item.dossier, item.assessment
    return PRHead(
        repo=d.repo,
        number=d.number,
        title=d.title,
        url=d.url,
        author=d.author,
        additions=d.additions,
        deletions=d.deletions,
        merged_at=d.merged_at,
        merge_commit_sha=d.merge_commit_sha,
        kind=d.kind,
        area=a.area,
        coverage=d.coverage.label,
        discussion=d.coverage.discussion,
    )


def _group_others(
    items: list[DigestItem], names: dict[str, str], lang: str
) -> tuple[AreaGroup, ...]:
    groups: dict[str | None, list[DigestItem]] = {}
    for item in items:
        groups.setdefault(item.pr.area if item.pr.area in names else None, []).append(item)
    other = locale(lang).say("text", "other_area")

    def name(area: str | None) -> str:
        return names[area] if area is not None else other

    ordered = sorted(groups.items(), key=lambda kv: (kv[0] is None, -len(kv[1]), name(kv[0])))
    return tuple(
        AreaGroup(
            area=area, name=name(area), items=tuple(sorted(members, key=lambda i: i.pr.number))
        )
        for area, members in ordered
    )


@dataclass(frozen=True)
class Written:
    entries: dict[int, Entry]
    usage: tuple[UsageRecord, ...] = ()
    notes: tuple[str, ...] = ()
    count: int = 0  # entries the writer wrote in this run


def _write(
    plan: Plan, writer: Writer, items: dict[int, Analyzed], chosen: set[int], fresh: Fresh
) -> Written:
    """Cached entries, and one writer batch for all the others."""
    lang = plan.options.lang
    entries: dict[int, Entry] = {}
    misses: list[WriteRequest] = []
    hashes: dict[int, str] = {}
    for assessment in rank([x.assessment for x in items.values()]):
        item = items[assessment.number]
        selected = assessment.number in chosen
        key = entry_key(item, plan.preset, writer, lang, selected)
        cached = plan.cached.entry(item.pr.number, key)
        if cached is not None:
            entries[assessment.number] = cached
            continue
        area = area_text(plan.preset, assessment.area, lang)
        misses.append(WriteRequest(item.pr, item.dossier, assessment, selected, key, area))
        hashes[assessment.number] = item.pr_hash
    if not misses:
        return Written(entries)
    result = writer.write_batch(misses, lang=lang)
    for request in misses:
        number = request.dossier.number
        entries[number] = result.entries[number]
        if number in result.cacheable:
            fresh.entries.append((entries[number], request.entry_key, hashes[number]))
    return Written(entries, result.usage, result.notes, len(misses))


def compute(plan: Plan, writer: Writer, progress: Progress | None = None) -> Computed:
    """The digest of a planned window: every merged PR, the best ``top`` with a paragraph."""
    options, preset = plan.options, plan.preset
    fresh = Fresh()
    total = len(plan.records) * 2
    items: dict[int, Analyzed] = {}
    for done, pr in enumerate(plan.records, start=1):
        items[pr.number] = analyzed(pr, preset, plan.cached, fresh)
        if progress:
            progress(done, total)
    assessments = [x.assessment for x in items.values()]
    chosen = {a.number for a in select(assessments, options.top)}
    written = _write(plan, writer, items, chosen, fresh)
    if progress:
        progress(total, total)
    ranked = [
        DigestItem(
            pr=_head(items[a.number]),
            assessment=a,
            entry=written.entries[a.number],
            selected=a.number in chosen,
        )
        for a in rank(assessments)
    ]
    used = {i.pr.area for i in ranked if i.pr.area}
    names = {area: text.name for area in used if (text := area_text(preset, area, options.lang))}
    digest = Digest(
        repo=options.repo,
        window=options.window,
        lang=options.lang,
        selected=tuple(i for i in ranked if i.selected),
        others=_group_others([i for i in ranked if not i.selected], names, options.lang),
        total=len(ranked),
        counts={
            level.value: sum(1 for i in ranked if i.assessment.level is level) for level in Level
        },
        areas=dict(sorted(names.items())),
    )
    run = DigestRun(digest, written.usage, written.notes, written=written.count)
    return Computed(run, fresh)


# -- persist ----------------------------------------------------------------------------------


def persist(store: Store, plan: Plan, computed: Computed, writer: Writer) -> None:
    """Write what compute made, in one transaction, and the run's model usage."""
    _store_fresh(store, plan.preset, computed.fresh)
    if computed.run.usage:
        store.usage.put(uuid.uuid4().hex, plan.options.repo, writer.key, computed.run.usage)


# -- the stage as callers use it --------------------------------------------------------------


def run_digest(
    store: Store, options: DigestOptions, writer: Writer, progress: Progress | None = None
) -> DigestRun:
    """Plan, compute and persist one window's digest; the digest and what writing it cost."""
    planned = plan(store, options)
    computed = compute(planned, writer, progress)
    persist(store, planned, computed, writer)
    return computed.run


def build_digest(
    store: Store, options: DigestOptions, writer: Writer, progress: Progress | None = None
) -> Digest:
    """The digest of one window: every merged PR, the best ``top`` with a paragraph."""
    return run_digest(store, options, writer, progress).digest


# -- what the store must hold before a window is digested --------------------------------------


def sync_command(repo: str, window: Window) -> str:
    """The command that fills the store with a window's PRs (for messages)."""
    if ".." not in window.label:
        span = f"-d {window.label}"
    else:
        span = f"--since {window.since.isoformat()} --until {window.until.isoformat()}"
    return f"prdigest sync -r {repo} {span} [--git CLONE]"


def require_repo(store: Store, repo: str, window: Window) -> None:
    """A :class:`NotFoundError` unless the store holds records of ``repo``: a repository that
    was never synced (or a typo) must not print an empty digest."""
    known = store.records.repos()
    if repo in known:
        return
    stored = ", ".join(known) or "none"
    raise NotFoundError(
        f"no records of {repo} in the store {store.location} (it has: {stored}); "
        f"fill it with `{sync_command(repo, window)}`"
    )


def require_records(store: Store, repo: str, window: Window) -> None:
    """A :class:`NotFoundError` unless the store holds PRs of ``repo`` merged in ``window``."""
    require_repo(store, repo, window)
    if not store.records.in_window(repo, window.since, window.until):
        raise NotFoundError(
            f"no stored PRs of {repo} merged in {window.label} in the store {store.location}; "
            f"if that window was never synced, fill it with `{sync_command(repo, window)}`"
        )


def empty_window_note(store: Store, digest: Digest) -> str | None:
    """What to tell a user whose digest is empty: the window may never have been synced."""
    if digest.total:
        return None
    return (
        f"no PRs of {digest.repo} merged in {digest.window.label} are in the store "
        f"{store.location}; if that window was never synced: "
        f"`{sync_command(digest.repo, digest.window)}`"
    )


def explain(
    store: Store,
    repo: str,
    number: int,
    preset_path: Path | None = None,
    lang: str = DEFAULT_LANG,
) -> Analyzed:
    """Dossier and assessment of one stored PR (``prdigest explain``), with its areas' names
    in ``lang``."""
    preset = load_preset(repo, preset_path)
    pr = store.records.get(repo, number)
    cached = store.artefacts.cached(repo, [number], ANALYZER_VERSION, preset.key, triage_version())
    fresh = Fresh()
    item = analyzed(pr, preset, cached, fresh)
    _store_fresh(store, preset, fresh)
    names = {a.id: text for a in item.dossier.areas if (text := area_text(preset, a.id, lang))}
    return replace(item, areas=names)


def _store_fresh(store: Store, preset: Preset, fresh: Fresh) -> None:
    store.artefacts.put_all(
        preset.key,
        ANALYZER_VERSION,
        dossiers=fresh.dossiers,
        assessments=fresh.assessments,
        entries=fresh.entries,
    )

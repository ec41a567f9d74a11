"""The digest stage: records of a window → dossiers → assessments → entries → :class:`Digest`.

Each derived artefact is looked up in the store first and computed only when the versions it
was derived from changed (record content, analyzer, preset, triage, writer, language), so a
re-run over an unchanged window recomputes nothing.

A writer that implements :class:`~prdigest.write.BatchWriter` (the LLM writer) gets all entries
that are not cached in one call, so it can batch and parallelise requests; :func:`run_digest`
then also returns what the writing cost. Other writers are called one entry at a time.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from prdigest.analyze import analyze
from prdigest.core.models import (
    ANALYZER_VERSION,
    TRIAGE_VERSION,
    AreaGroup,
    Assessment,
    Digest,
    DigestItem,
    Dossier,
    Entry,
    Level,
    PRHead,
    Window,
)
from prdigest.core.presets import Preset, load_preset
from prdigest.core.records import PullRequest
from prdigest.store import Store, content_hash
from prdigest.triage import assess, rank, select
from prdigest.write import BatchResult, BatchWriter, Lang, UsageRecord, Writer, WriteRequest

Progress = Callable[[int, int], None]
OTHER_AREA = {"zh": "其他", "en": "other"}


@dataclass(frozen=True)
class DigestOptions:
    repo: str
    window: Window
    top: int = 8
    lang: Lang = "zh"
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


def analyze_stored(store: Store, pr: PullRequest, preset: Preset) -> Analyzed:
    """Dossier and assessment of one PR, from the store when still current."""
    pr_hash = content_hash(pr)
    dossier = store.get_dossier(pr.repo, pr.number, pr_hash, ANALYZER_VERSION, preset.key)
    if dossier is None:
        dossier = analyze(pr, preset, pr_version=pr.version_key)
        store.put_dossier(dossier, pr_hash, preset.key)
    assessment = store.get_assessment(
        pr.repo, pr.number, pr_hash, ANALYZER_VERSION, preset.key, TRIAGE_VERSION
    )
    if assessment is None:
        assessment = assess(dossier)
        store.put_assessment(assessment, pr_hash, ANALYZER_VERSION, preset.key)
    return Analyzed(pr, pr_hash, dossier, assessment)


def entry_key(item: Analyzed, preset: Preset, writer: Writer, lang: Lang, paragraph: bool) -> str:
    parts = [
        item.pr_hash,
        ANALYZER_VERSION,
        preset.key,
        TRIAGE_VERSION,
        writer.key,
        lang,
        "p" if paragraph else "t",
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def _entry(
    store: Store, item: Analyzed, preset: Preset, writer: Writer, lang: Lang, paragraph: bool
) -> Entry:
    key = entry_key(item, preset, writer, lang, paragraph)
    cached = store.get_entry(item.pr.repo, item.pr.number, key)
    if cached is not None:
        return cached
    entry = writer.write(item.dossier, item.assessment, lang=lang, paragraph=paragraph)
    store.put_entry(entry, key, item.pr_hash)
    return entry


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
        area_en=a.area_en,
        coverage=d.coverage.label,
        discussion=d.coverage.discussion,
    )


def _group_others(items: list[DigestItem], lang: Lang) -> tuple[AreaGroup, ...]:
    groups: dict[str, list[DigestItem]] = {}
    for item in items:
        area = (item.pr.area if lang == "zh" else item.pr.area_en) or OTHER_AREA[lang]
        groups.setdefault(area, []).append(item)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0] == OTHER_AREA[lang], -len(kv[1]), kv[0]))
    return tuple(
        AreaGroup(area=area, items=tuple(sorted(members, key=lambda i: i.pr.number)))
        for area, members in ordered
    )


def _batch_entries(
    store: Store,
    analyzed: dict[int, Analyzed],
    chosen: set[int],
    preset: Preset,
    writer: BatchWriter,
    lang: Lang,
) -> tuple[dict[int, Entry], BatchResult | None]:
    """Cached entries, and one batch call for all the others (stored when cacheable)."""
    entries: dict[int, Entry] = {}
    misses: list[WriteRequest] = []
    for assessment in rank([x.assessment for x in analyzed.values()]):
        item = analyzed[assessment.number]
        selected = assessment.number in chosen
        key = entry_key(item, preset, writer, lang, selected)
        cached = store.get_entry(item.pr.repo, item.pr.number, key)
        if cached is not None:
            entries[assessment.number] = cached
        else:
            misses.append(WriteRequest(item.pr, item.dossier, assessment, selected, key))
    if not misses:
        return entries, None
    result = writer.write_batch(misses, lang=lang)
    for request in misses:
        number = request.dossier.number
        entries[number] = result.entries[number]
        if number in result.cacheable:
            store.put_entry(entries[number], request.entry_key, analyzed[number].pr_hash)
    return entries, result


def build_digest(
    store: Store, options: DigestOptions, writer: Writer, progress: Progress | None = None
) -> Digest:
    """The digest of one window: every merged PR, the best ``top`` with a paragraph."""
    return run_digest(store, options, writer, progress).digest


def run_digest(
    store: Store, options: DigestOptions, writer: Writer, progress: Progress | None = None
) -> DigestRun:
    """:func:`build_digest`, with the cost of writing (stored too) and notes for the user."""
    preset = load_preset(options.repo, options.preset_path)
    records = store.prs_in_window(options.repo, options.window.since, options.window.until)
    analyzed: dict[int, Analyzed] = {}
    for done, pr in enumerate(records, start=1):
        analyzed[pr.number] = analyze_stored(store, pr, preset)
        if progress:
            progress(done, len(records) * 2)
    chosen = {a.number for a in select([x.assessment for x in analyzed.values()], options.top)}
    batch: BatchResult | None = None
    entries: dict[int, Entry] = {}
    if isinstance(writer, BatchWriter):
        entries, batch = _batch_entries(store, analyzed, chosen, preset, writer, options.lang)
    items: dict[int, DigestItem] = {}
    for done, assessment in enumerate(rank([x.assessment for x in analyzed.values()]), start=1):
        item = analyzed[assessment.number]
        selected = assessment.number in chosen
        entry = entries.get(assessment.number) or _entry(
            store, item, preset, writer, options.lang, selected
        )
        items[assessment.number] = DigestItem(
            pr=_head(item), assessment=assessment, entry=entry, selected=selected
        )
        if progress:
            progress(len(records) + done, len(records) * 2)
    ranked = [items[a.number] for a in rank([x.assessment for x in analyzed.values()])]
    selected_items = tuple(i for i in ranked if i.selected)
    counts = {level.value: sum(1 for i in ranked if i.assessment.level is level) for level in Level}
    digest = Digest(
        repo=options.repo,
        window=options.window,
        lang=options.lang,
        selected=selected_items,
        others=_group_others([i for i in ranked if not i.selected], options.lang),
        total=len(ranked),
        counts=counts,
    )
    if batch is None:
        return DigestRun(digest)
    if batch.usage:
        store.put_llm_usage(uuid.uuid4().hex, options.repo, writer.key, batch.usage)
    return DigestRun(digest, batch.usage, batch.notes, written=len(batch.entries))


def explain(store: Store, repo: str, number: int, preset_path: Path | None = None) -> Analyzed:
    """Dossier and assessment of one stored PR (``prdigest explain``)."""
    preset = load_preset(repo, preset_path)
    return analyze_stored(store, store.get_pr(repo, number), preset)

"""The digest of a window, streamed: index → triage → select → write → assemble.

A window of any size is processed PR by PR, holding only what ranking and the digest need
(each PR's head, verdict and record hash), so memory is one batch plus the digest itself
(docs/scale.md has the figures):

* **index** — the window's PR numbers and record hashes (one query), and every assessment
  still current for them, with the PR's head (one query): a cached re-run reads nothing else;
* **triage** — the PRs without a current assessment, in batches of :data:`BATCH`: their
  records and cached dossiers are read (one query each per batch), the missing dossiers
  analyzed at triage depth (without the facts only a paragraph needs, see
  :mod:`prdigest.analyze`), every PR assessed, and the batch's dossiers, assessments and heads
  stored in one transaction before the next batch is read;
* **select** — rank and select over the verdicts alone;
* **write** — stored entries by their keys (one query for the window); the missing ones in
  batches of :data:`WRITE_BATCH`, their records and dossiers read again for the writer (a
  selected PR's triage-depth dossier enriched to full and stored), each batch's cacheable
  entries stored in one transaction;
* **assemble** — the :class:`~prdigest.core.models.Digest`, and the run's model usage stored.

Each derived artefact is reused only while the versions it was derived from hold (record
content, analyzer, preset, triage, writer, language and its locale), so a re-run over an
unchanged window recomputes nothing and calls no model.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from prdigest.analyze import analyze, enrich
from prdigest.core.errors import ConfigError, NotFoundError
from prdigest.core.locale import DEFAULT_LANG, check_lang, locale
from prdigest.core.models import (
    ANALYZER_VERSION,
    AreaGroup,
    AreaText,
    Assessment,
    Depth,
    Digest,
    DigestItem,
    Dossier,
    Entry,
    Level,
    PRHead,
    UsageRecord,
    Window,
)
from prdigest.core.names import repo_problem
from prdigest.core.presets import Preset, load_preset
from prdigest.core.records import PullRequest
from prdigest.store import Store, content_hash
from prdigest.triage import assess, rank, select, triage_version
from prdigest.write import Writer, WriteRequest, same_day
from prdigest.write.template import TemplateWriter, repeated, says_all, sentences

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class DigestOptions:
    repo: str
    window: Window
    top: int = 8
    lang: str = DEFAULT_LANG
    preset_path: Path | None = None

    def __post_init__(self) -> None:
        problem = repo_problem(self.repo)
        if problem is not None:  # the name becomes site directories and URLs
            raise ConfigError(problem, key="repo")


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
        """HTTP attempts (retries and timed-out requests included)."""
        return sum(u.calls for u in self.usage)

    @property
    def requests(self) -> int:
        """Model requests: first attempts and repairs."""
        return sum(u.requests for u in self.usage)

    @property
    def fallbacks(self) -> int:
        return sum(1 for i in self.digest.all_items() if i.entry.fallback)

    def outcomes(self, purpose: str = "paragraph") -> dict[str, int]:
        """How this run's writes ended, by outcome (``model``, ``repaired``, ``fixed`` …)."""
        found: dict[str, int] = {}
        for u in self.usage:
            if u.purpose == purpose:
                found[u.outcome] = found.get(u.outcome, 0) + 1
        return found

    @property
    def titles(self) -> tuple[int, int]:
        """Titles accepted from the model and titles asked for, in this run."""
        rows = [u for u in self.usage if u.purpose == "titles"]
        return sum(u.accepted for u in rows), sum(u.asked for u in rows)


@dataclass(frozen=True)
class Analyzed:
    pr: PullRequest
    pr_hash: str
    dossier: Dossier
    assessment: Assessment
    areas: dict[str, AreaText] = field(default_factory=dict)  # explain: names of its areas
    entries: tuple[Entry, ...] = ()  # explain: the newest stored entries, newest first


BATCH = 100  # PRs triaged per store transaction
WRITE_BATCH = 150  # entries per writer batch and transaction (the LLM writer's titles per request)


@dataclass(frozen=True, slots=True)
class Triaged:
    """What ranking and the digest keep of one PR: its head, verdict and record hash."""

    head: PRHead
    assessment: Assessment
    pr_hash: str


def _chunks(numbers: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(numbers), size):
        yield numbers[start : start + size]


def _current_dossier(found: tuple[str, str] | None, pr_hash: str) -> Dossier | None:
    if found is None or found[0] != pr_hash:
        return None
    return Dossier.model_validate_json(found[1])


def _full_or_triage(
    found: tuple[str, str] | None, pr: PullRequest, pr_hash: str, preset: Preset, *, full: bool
) -> tuple[Dossier, bool]:
    """The dossier of ``pr`` at the depth asked for (any stored one serves triage; a stored
    triage-depth one is enriched to full), and whether it is new (to be stored)."""
    dossier = _current_dossier(found, pr_hash)
    if dossier is None:
        depth: Depth = "full" if full else "triage"
        return analyze(pr, preset, pr_version=pr.version_key, depth=depth), True
    if full and dossier.depth != "full":
        return enrich(dossier, pr), True
    return dossier, False


@dataclass
class _Window:
    """One digest run's fixed inputs."""

    store: Store
    options: DigestOptions
    preset: Preset
    index: list[tuple[int, str]]  # (number, record hash), oldest merge first
    progress: Progress | None

    @property
    def total(self) -> int:
        return len(self.index) * 2  # triage, then write

    def report(self, done: int) -> None:
        if self.progress:
            self.progress(done, self.total)


def _triage(run: _Window) -> dict[int, Triaged]:
    """Every PR's head and verdict: the current stored ones, the rest computed and stored in
    batches (see the module docstring). Ordered as the index."""
    options, preset = run.options, run.preset
    window, triage = options.window, triage_version()
    hashes = dict(run.index)
    found: dict[int, Triaged] = {}
    for number, payload, head in run.store.artefacts.window_triaged(
        options.repo, window.since, window.until, ANALYZER_VERSION, preset.key, triage
    ):
        found[number] = Triaged(
            PRHead.model_validate_json(head),
            Assessment.model_validate_json(payload),
            hashes[number],
        )
    run.report(len(found))
    missing = [number for number, _ in run.index if number not in found]
    for chunk in _chunks(missing, BATCH):
        found.update(_triage_batch(run, chunk, hashes))
        run.report(len(found))
    return {number: found[number] for number, _ in run.index}


def _triage_batch(run: _Window, chunk: Sequence[int], hashes: dict[int, str]) -> dict[int, Triaged]:
    """One batch triaged and stored in one transaction. Its records and dossiers live in this
    frame only, so they are released before the next batch is read (memory: docs/scale.md)."""
    options, preset, store = run.options, run.preset, run.store
    dossiers = store.artefacts.dossiers_of(options.repo, chunk, ANALYZER_VERSION, preset.key)
    current = {n: _current_dossier(dossiers.get(n), hashes[n]) for n in chunk}
    records = store.records.load(options.repo, [n for n, d in current.items() if d is None])
    fresh_dossiers: list[tuple[Dossier, str]] = []
    fresh: list[tuple[Assessment, str]] = []
    heads: dict[int, str] = {}
    done: dict[int, Triaged] = {}
    for number in chunk:
        dossier = current[number]
        if dossier is None:
            pr = records[number]
            dossier = analyze(pr, preset, pr_version=pr.version_key, depth="triage")
            fresh_dossiers.append((dossier, hashes[number]))
        assessment = assess(dossier, bots=preset.bots)
        pr_head = _head(dossier, assessment)
        fresh.append((assessment, hashes[number]))
        heads[number] = pr_head.model_dump_json()
        done[number] = Triaged(pr_head, assessment, hashes[number])
    store.artefacts.put_all(
        preset.key, ANALYZER_VERSION, dossiers=fresh_dossiers, assessments=fresh, heads=heads
    )
    return done


def entry_key(pr_hash: str, preset: Preset, writer: Writer, lang: str, paragraph: bool) -> str:
    parts = [
        pr_hash,
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


def _head(d: Dossier, a: Assessment) -> PRHead:
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


@dataclass
class Written:
    entries: dict[int, Entry] = field(default_factory=dict)
    usage: list[UsageRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    count: int = 0  # entries the writer wrote in this run


def _requests(
    run: _Window,
    writer: Writer,
    triaged: dict[int, Triaged],
    chosen: set[int],
    keys: dict[int, str],
    chunk: Sequence[int],
) -> list[WriteRequest]:
    """Write requests of a batch: records and dossiers read again (current: the triage pass
    stored them; one missing after all is analyzed again). A selected PR gets a full dossier:
    the stored one if it is full, else its triage-depth one enriched and stored (a paragraph
    is never written from a triage-depth dossier)."""
    options, preset = run.options, run.preset
    records = run.store.records.load(options.repo, chunk)
    stored = run.store.artefacts.dossiers_of(options.repo, chunk, ANALYZER_VERSION, preset.key)
    dossiers: dict[int, Dossier] = {}
    fresh: list[tuple[Dossier, str]] = []
    for number in chunk:
        pr_hash = triaged[number].pr_hash
        dossier, new = _full_or_triage(
            stored.get(number), records[number], pr_hash, preset, full=number in chosen
        )
        dossiers[number] = dossier
        if new:
            fresh.append((dossier, pr_hash))
    run.store.artefacts.put_all(preset.key, ANALYZER_VERSION, dossiers=fresh)
    # the batch's other PRs on the same code (and their titles, for the borrowed-title check)
    nearby = same_day(list(dossiers.values()))
    requests = []
    for number in chunk:
        item = triaged[number]
        area = area_text(preset, item.assessment.area, options.lang)
        requests.append(
            WriteRequest(
                records[number],
                dossiers[number],
                item.assessment,
                number in chosen,
                keys[number],
                area,
                nearby[number],
            )
        )
    return requests


def _planned_writes(
    run: _Window, writer: Writer, triaged: dict[int, Triaged], chosen: set[int]
) -> tuple[dict[int, str], Written, list[int]]:
    """Every PR's entry key, the stored entries, and the PRs still to write (most important
    first)."""
    options, preset, lang = run.options, run.preset, run.options.lang
    keys = {
        number: entry_key(item.pr_hash, preset, writer, lang, number in chosen)
        for number, item in triaged.items()
    }
    window = options.window
    stored = run.store.artefacts.window_entries(options.repo, window.since, window.until, keys)
    written = Written({n: Entry.model_validate_json(raw) for n, raw in stored.items()})
    ranked = rank([item.assessment for item in triaged.values()])
    return keys, written, [a.number for a in ranked if a.number not in written.entries]


def _write(run: _Window, writer: Writer, triaged: dict[int, Triaged], chosen: set[int]) -> Written:
    """Stored entries by key; the others written in batches, most important first."""
    keys, written, misses = _planned_writes(run, writer, triaged, chosen)
    done = len(triaged) + len(written.entries)
    run.report(done)
    for chunk in _chunks(misses, WRITE_BATCH):
        requests = _requests(run, writer, triaged, chosen, keys, chunk)
        _write_batch(run, writer, requests, triaged, written)
        del requests  # its records and dossiers go before the next batch is read
        done += len(chunk)
        run.report(done)
    if isinstance(writer, TemplateWriter):
        _vary_repeats(run, writer, triaged, chosen, keys, written)
    return written


VARIANT_TRIES = 24  # other phrase variants tried for an entry that repeats a phrase (~1 ms each)


def _vary_repeats(
    run: _Window,
    writer: TemplateWriter,
    triaged: dict[int, Triaged],
    chosen: set[int],
    keys: dict[int, str],
    written: Written,
) -> None:
    """No sentence twice in one digest: a paragraph that repeats a sentence of a paragraph
    before it (in digest order) is written again with other phrase variants, and the one that
    repeats fewest (the first of them) is kept and stored under its key, so a re-run reads it
    as it is (all such entries in one write). A phrase without variants can still repeat."""
    lang = run.options.lang
    said: set[str] = set()
    varied = []
    for assessment in rank([triaged[number].assessment for number in chosen]):
        number = assessment.number
        entry = written.entries[number]
        if repeated(entry.paragraph, said, lang):
            [request] = _requests(run, writer, triaged, chosen, keys, [number])
            best = _least_repeating(writer, request, entry, said, lang)
            if best is not entry:
                entry = written.entries[number] = best
                varied.append((entry, keys[number], triaged[number].pr_hash))
        said |= sentences(entry.paragraph, lang)
    if varied:
        run.store.artefacts.put_all(run.preset.key, ANALYZER_VERSION, entries=varied)


def _least_repeating(
    writer: TemplateWriter, request: WriteRequest, first: Entry, said: set[str], lang: str
) -> Entry:
    """``first`` or the entry of ``request`` with the phrase variants that repeat fewest of
    ``said`` (the first of them) and still say every name and quote ``first`` says."""
    number = request.dossier.number
    best, fewest = first, len(repeated(first.paragraph, said, lang))
    for variant in range(1, VARIANT_TRIES + 1):
        if not fewest:
            break
        entry = writer.write_batch([replace(request, variant=variant)], lang=lang).entries[number]
        count = len(repeated(entry.paragraph, said, lang))
        if count < fewest and says_all(entry.paragraph, first.paragraph):
            best, fewest = entry, count
    return best


def _write_batch(
    run: _Window,
    writer: Writer,
    requests: list[WriteRequest],
    triaged: dict[int, Triaged],
    written: Written,
) -> None:
    """One batch written, its cacheable entries stored in one transaction."""
    result = writer.write_batch(requests, lang=run.options.lang)
    cacheable = []
    for request in requests:
        number = request.dossier.number
        written.entries[number] = result.entries[number]
        if number in result.cacheable:
            entry = result.entries[number]
            cacheable.append((entry, request.entry_key, triaged[number].pr_hash))
    run.store.artefacts.put_all(run.preset.key, ANALYZER_VERSION, entries=cacheable)
    written.usage += result.usage
    written.notes += [n for n in result.notes if n not in written.notes]
    written.count += len(requests)


def pending_requests(
    store: Store, options: DigestOptions, writer: Writer
) -> Iterator[list[WriteRequest]]:
    """The window's entries that ``writer`` has not written yet, as the batches of requests a
    digest would hand it (triage runs and is stored as for a digest): what a batch engine sends
    to the model instead (:mod:`prdigest.write.llm.batch`)."""
    check_lang(options.lang)
    preset = load_preset(options.repo, options.preset_path)
    window = options.window
    index = store.records.window_hashes(options.repo, window.since, window.until)
    run = _Window(store, options, preset, index, None)
    triaged = _triage(run)
    chosen = {a.number for a in select([t.assessment for t in triaged.values()], options.top)}
    keys, _, misses = _planned_writes(run, writer, triaged, chosen)
    for chunk in _chunks(misses, WRITE_BATCH):
        yield _requests(run, writer, triaged, chosen, keys, chunk)


def _assemble(
    options: DigestOptions,
    preset: Preset,
    triaged: dict[int, Triaged],
    entries: dict[int, Entry],
    chosen: set[int],
) -> Digest:
    ranked = [
        DigestItem(
            pr=triaged[a.number].head,
            assessment=a,
            entry=entries[a.number],
            selected=a.number in chosen,
        )
        for a in rank([item.assessment for item in triaged.values()])
    ]
    used = {i.pr.area for i in ranked if i.pr.area}
    names = {area: text.name for area in used if (text := area_text(preset, area, options.lang))}
    return Digest(
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


# -- the stage as callers use it --------------------------------------------------------------


def run_digest(
    store: Store, options: DigestOptions, writer: Writer, progress: Progress | None = None
) -> DigestRun:
    """One window's digest, streamed (see the module docstring), and what writing it cost."""
    check_lang(options.lang)
    preset = load_preset(options.repo, options.preset_path)
    window = options.window
    index = store.records.window_hashes(options.repo, window.since, window.until)
    run = _Window(store, options, preset, index, progress)
    triaged = _triage(run)
    chosen = {a.number for a in select([t.assessment for t in triaged.values()], options.top)}
    written = _write(run, writer, triaged, chosen)
    run.report(run.total)
    digest = _assemble(options, preset, triaged, written.entries, chosen)
    if written.usage:
        store.usage.put(uuid.uuid4().hex, options.repo, writer.key, written.usage)
    return DigestRun(digest, tuple(written.usage), tuple(written.notes), written=written.count)


def pending_writes(store: Store, options: DigestOptions, writer: Writer) -> list[WriteRequest]:
    """What a digest run would hand to ``writer`` — the entries the store does not have, most
    important first — without writing any (``--dry-run``; verdicts are stored as usual)."""
    return [r for batch in pending_requests(store, options, writer) for r in batch]


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
    """Full dossier and assessment of one stored PR (``prdigest explain``), with its areas'
    names in ``lang``; what was not stored yet is stored (a stored triage-depth dossier is
    replaced by the full one)."""
    preset = load_preset(repo, preset_path)
    pr = store.records.get(repo, number)
    pr_hash = content_hash(pr)
    stored = store.artefacts.dossiers_of(repo, [number], ANALYZER_VERSION, preset.key)
    dossier, new = _full_or_triage(stored.get(number), pr, pr_hash, preset, full=True)
    fresh = [(dossier, pr_hash)] if new else []
    assessment = assess(dossier, bots=preset.bots)
    store.artefacts.put_all(
        preset.key,
        ANALYZER_VERSION,
        dossiers=fresh,
        assessments=[(assessment, pr_hash)],
        heads={number: _head(dossier, assessment).model_dump_json()},
    )
    names = {a.id: text for a in dossier.areas if (text := area_text(preset, a.id, lang))}
    entries = tuple(store.artefacts.latest_entries(repo, number))
    return Analyzed(pr, pr_hash, dossier, assessment, names, entries)

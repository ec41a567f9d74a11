"""``prdigest run-all``: every configured repository, sync → digest → site → publish.

A run is idempotent per day: syncing upserts records (unchanged ones are not rewritten), the
digest is stored only when it changed, the site rewrites only changed files and the delivery log
keeps a channel from getting the same digest twice. Deliveries that failed in an earlier run are
tried again and reported. One repository failing (a bad file, an unavailable source) is
reported and does not stop the others.

Sources and writers are looked up in :class:`Hooks`, keyed by the config's ``source`` and
``writer`` values. The library's defaults are ``jsonl`` and ``template``, which need no
credentials; ``github``, ``git`` and ``llm`` start as :class:`Unavailable` placeholders and are
filled in by the CLI (``prdigest.cli.publish.build_hooks``), where credentials from the
environment are at hand — the library itself never reads the environment.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import NoReturn

from prdigest.core.errors import ConfigError, ImportLineError, NotFoundError, PrdigestError
from prdigest.core.models import Window
from prdigest.pipeline.config import Config, RepoConfig, report_window
from prdigest.pipeline.digest import DigestOptions, build_digest
from prdigest.publish.deliver import Channel, DeliveryOutcome, deliver, retry_failed
from prdigest.publish.site.builder import SiteOptions, SiteReport, build_site
from prdigest.sources.jsonl import read_records
from prdigest.store import Store, UpsertResult
from prdigest.store.publish import StoredDigest
from prdigest.write import Writer
from prdigest.write.template import TemplateWriter

log = logging.getLogger("prdigest.pipeline.run_all")
BATCH = 200


@dataclass(frozen=True)
class SyncOutcome:
    result: UpsertResult
    problems: tuple[str, ...] = ()  # e.g. bad lines of an import, each naming its line


SyncHook = Callable[[Store, RepoConfig, Window], SyncOutcome]
WriterFactory = Callable[[RepoConfig], Writer]


class Unavailable:
    """A placeholder for a source or writer that this build does not include."""

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name

    def __call__(self, *args: object) -> NoReturn:
        raise ConfigError(
            f"{self.kind} {self.name!r} is not available in this build", key=self.kind
        )

    def __repr__(self) -> str:
        return f"Unavailable({self.kind!r}, {self.name!r})"


@dataclass
class Hooks:
    sources: dict[str, SyncHook]
    writers: dict[str, WriterFactory]


def sync_jsonl(store: Store, repo: RepoConfig, window: Window) -> SyncOutcome:
    """Import the repository's records from its JSONL file (``path``); bad lines are reported."""
    assert repo.path is not None  # the config requires it for this source
    result, problems, batch = UpsertResult(), [], []
    skipped = 0
    for item in read_records(repo.path):
        if isinstance(item, ImportLineError):
            problems.append(str(item))
            continue
        if item.repo != repo.name:
            skipped += 1
            continue
        batch.append(item)
        if len(batch) >= BATCH:
            result += store.upsert_prs(batch)
            batch = []
    result += store.upsert_prs(batch)
    if skipped:
        log.info("%s: %d record(s) of other repositories skipped", repo.path, skipped)
    return SyncOutcome(result, tuple(problems))


def _template_writer(repo: RepoConfig) -> Writer:
    return TemplateWriter()


def default_hooks() -> Hooks:
    """What this build can do; the placeholders name what it cannot."""
    sources: dict[str, SyncHook] = {
        "jsonl": sync_jsonl,
        "github": Unavailable("source", "github"),
        "git": Unavailable("source", "git"),
    }
    writers: dict[str, WriterFactory] = {
        "template": _template_writer,
        "llm": Unavailable("writer", "llm"),
    }
    return Hooks(sources=sources, writers=writers)


def available(hooks: Hooks) -> dict[str, list[str]]:
    """Which config values the hooks can serve (``config check`` reports the others)."""
    return {
        "source": [n for n, h in hooks.sources.items() if not isinstance(h, Unavailable)],
        "writer": [n for n, h in hooks.writers.items() if not isinstance(h, Unavailable)],
    }


@dataclass
class RepoRun:
    repo: str
    label: str | None = None
    sync: SyncOutcome | None = None
    digest: StoredDigest | None = None
    deliveries: list[DeliveryOutcome] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return (
            self.error is None
            and not (self.sync and self.sync.problems)
            and all(d.ok for d in self.deliveries)
        )


@dataclass
class RunReport:
    repos: list[RepoRun] = field(default_factory=list)
    site: SiteReport | None = None
    site_error: str | None = None
    retried: list[DeliveryOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            all(r.ok for r in self.repos)
            and self.site_error is None
            and all(d.ok for d in self.retried)
        )


def _lookup(table: Mapping[str, Callable[..., object]], kind: str, name: str, index: int) -> None:
    if name not in table:
        raise ConfigError(f"no {kind} named {name!r} in this build", key=f"repos[{index}].{kind}")


def _digest_repo(
    store: Store, config: Config, index: int, hooks: Hooks, day: date | None, now: datetime
) -> RepoRun:
    repo = config.repos[index]
    run = RepoRun(repo=repo.name)
    try:
        window = report_window(repo, day, now)
        run.label = window.label
        _lookup(hooks.sources, "source", repo.source, index)
        _lookup(hooks.writers, "writer", repo.writer, index)
        run.sync = hooks.sources[repo.source](store, repo, window)
        writer = hooks.writers[repo.writer](repo)
        options = DigestOptions(
            repo=repo.name, window=window, top=repo.top, lang=repo.lang, preset_path=repo.preset
        )
        run.digest = store.put_digest(build_digest(store, options, writer))
    except PrdigestError as exc:
        run.error = str(exc)
    return run


def run_all(
    store: Store,
    config: Config,
    *,
    channels: Mapping[str, Channel],
    hooks: Hooks | None = None,
    day: date | None = None,
    now: datetime | None = None,
    only: str | None = None,
    publish: bool = True,
) -> RunReport:
    """Run the daily pipeline for every configured repository (or ``only`` one)."""
    hooks = hooks or default_hooks()
    now = now or datetime.now(UTC)
    indexes = [i for i, r in enumerate(config.repos) if only is None or r.name == only]
    if only is not None and not indexes:
        config.repo(only)  # raises a ConfigError listing the configured repositories
    report = RunReport()
    for index in indexes:
        report.repos.append(_digest_repo(store, config, index, hooks, day, now))
    site = config.site
    options = SiteOptions(
        out_dir=site.dir,
        base_url=site.base_url,
        title=site.title,
        lang=site.lang,
        feed_entries=site.feed_entries,
    )
    try:
        report.site = build_site(store, options)
    except PrdigestError as exc:
        report.site_error = str(exc)
    if not publish:
        return report
    handled: set[tuple[str, str, str, str]] = set()
    for index, run in zip(indexes, report.repos, strict=True):
        if run.digest is None:
            continue
        for name in config.channels_for(config.repos[index]):
            outcome = deliver(store, channels[name], run.digest, base_url=site.base_url)
            run.deliveries.append(outcome)
            handled.add((name, run.digest.repo, run.digest.label, run.digest.lang))
    report.retried = retry_failed(
        store,
        channels,
        base_url=site.base_url,
        repos=[config.repos[i].name for i in indexes],
        skip=handled,
    )
    return report


def publish_stored(
    store: Store,
    config: Config,
    channels: Mapping[str, Channel],
    names: list[str],
    *,
    repo: str | None = None,
    label: str | None = None,
    force: bool = False,
) -> list[DeliveryOutcome]:
    """``prdigest publish``: deliver stored digests (the newest, or ``label``'s) to channels.

    Each configured repository goes to the channels it is routed to; the delivery log still
    keeps a channel from getting a digest twice unless ``force`` is given.
    """
    for name in names:
        if name not in channels:
            known = ", ".join(sorted(channels)) or "none"
            raise ConfigError(f"no channel named {name!r} (configured: {known})", key="--to")
    repos = [config.repo(repo)] if repo else list(config.repos)
    pairs = [(n, r) for n in names for r in repos if n in config.channels_for(r)]
    if not pairs:
        raise ConfigError("no configured repository goes to these channels", key="--to")
    outcomes = []
    for name, repo_config in pairs:
        found = store.list_digests(repo_config.name, label=label, lang=repo_config.lang)
        if not found:
            when = f"for {label}" if label else "yet"
            raise NotFoundError(
                f"no stored digest of {repo_config.name} {when} (make one with `prdigest run-all`)"
            )
        outcomes.append(
            deliver(store, channels[name], found[0], base_url=config.site.base_url, force=force)
        )
    return outcomes

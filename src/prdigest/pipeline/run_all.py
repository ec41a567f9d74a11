"""``prdigest run-all``: every configured repository, sync → digest → site → publish.

A run is idempotent per day: syncing upserts records (unchanged ones are not rewritten), the
digest is stored only when it changed, the site rewrites only changed files and the delivery log
keeps a channel from getting the same digest twice. Deliveries that failed in an earlier run are
tried again and reported. One repository failing (a bad file, an unavailable source) is
reported and does not stop the others.

Sources and writers come from the registry (:mod:`.registry`) by the config's ``source`` and
``writer`` values. Credentials are read from ``env``, the mapping the CLI hands in (its process
environment): the library itself never reads the environment.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from prdigest.core.errors import (
    ConfigError,
    DeliveryError,
    NotFoundError,
    PrdigestError,
    RunLockedError,
)
from prdigest.core.models import Digest, Window
from prdigest.core.window import local_day
from prdigest.pipeline.config import Config, RepoConfig
from prdigest.pipeline.credentials import Environment
from prdigest.pipeline.digest import DigestOptions, build_digest
from prdigest.pipeline.registry import SourceSpec, WriterSpec, make_writer, sync_repo
from prdigest.publish.channels import Channel
from prdigest.publish.deliver import DeliveryOutcome, deliver, retry_failed
from prdigest.publish.site.builder import SiteReport, build_site
from prdigest.publish.summary import hello_summary
from prdigest.sources.base import SyncReport
from prdigest.sources.git.source import GitDetails
from prdigest.store import Store
from prdigest.store.digests import StoredDigest

log = logging.getLogger("prdigest.schedule")


def source_spec(repo: RepoConfig) -> SourceSpec:
    return SourceSpec(repo=repo.name, source=repo.source, path=repo.path, fetch=repo.fetch)


def writer_spec(repo: RepoConfig, config: Config | None = None) -> WriterSpec:
    llm = config.llm.settings() if config is not None else {}
    return WriterSpec(writer=repo.writer, model=repo.model, llm=llm)


@dataclass
class RepoRun:
    repo: str
    label: str | None = None
    sync: SyncReport | None = None
    digest: StoredDigest | None = None
    deliveries: list[DeliveryOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. a clone that could not be fetched
    error: str | None = None
    locked: RunLockedError | None = None  # another run of this repository holds the lock

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
    site_skipped: str | None = None  # why the site was left as it was
    retried: list[DeliveryOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            all(r.ok for r in self.repos)
            and self.site_error is None
            and not (self.site and self.site.refused)
            and all(d.ok for d in self.retried)
        )


Day = date | str | None  # a date, "today" / "yesterday" / "YYYY-MM-DD", or None: yesterday


def window_of(repo: RepoConfig, day: Day, now: datetime) -> Window:
    """The window a run digests for ``repo``; a relative day is taken in its time zone."""
    if isinstance(day, str):
        day = local_day(day, repo.timezone, now)
    return repo.window_for(day, now)


def stored_label(repo: RepoConfig, label: str, now: datetime) -> str:
    """A stored digest's label from what a user typed: a day (relative or ISO) is the label of
    the window ending that day (one day, or the week for ``window = "week"``); others as given."""
    if ".." in label:
        return label
    return window_of(repo, label, now).label


def _digest_repo(
    store: Store, config: Config, index: int, env: Environment, day: Day, now: datetime
) -> RepoRun:
    repo = config.repos[index]
    run = RepoRun(repo=repo.name)
    try:
        window = window_of(repo, day, now)
        run.label = window.label
        run.sync = sync_repo(store, source_spec(repo), window, env)
        if isinstance(run.sync.details, GitDetails):
            run.warnings += run.sync.details.warnings
        if run.sync.stopped is not None:
            raise run.sync.stopped  # stored work is kept; the next run resumes
        writer = make_writer(writer_spec(repo, config), env)
        options = DigestOptions(
            repo=repo.name, window=window, top=repo.top, lang=repo.lang, preset_path=repo.preset
        )
        run.digest = store.digests.put(build_digest(store, options, writer))
    except ConfigError as exc:
        # the source checks its path as the options of `sync --git` name it; here it is a key
        if exc.key in ("--git", "--branch"):
            run.error = f"repos[{index}].path ({repo.name}): {exc.detail}"
        else:
            run.error = str(exc)
    except PrdigestError as exc:
        run.error = str(exc)
    return run


def run_all(
    store: Store,
    config: Config,
    *,
    channels: Mapping[str, Channel],
    env: Environment | None = None,
    day: Day = None,
    now: datetime | None = None,
    only: str | None = None,
    publish: bool = True,
) -> RunReport:
    """Run the daily pipeline for every configured repository (or ``only`` one)."""
    env = env if env is not None else {}
    now = now or datetime.now(UTC)
    indexes = [i for i, r in enumerate(config.repos) if only is None or r.name == only]
    if only is not None and not indexes:
        config.repo(only)  # raises a ConfigError listing the configured repositories
    report = RunReport()
    with ExitStack() as held:  # each repository's lock, until its deliveries are done
        for index in indexes:
            name = config.repos[index].name
            try:
                held.enter_context(store.lock(name))
            except RunLockedError as exc:
                report.repos.append(RepoRun(repo=name, error=str(exc), locked=exc))
                continue
            report.repos.append(_digest_repo(store, config, index, env, day, now))
        _build_site(store, config, report)
        if publish:
            _deliver_all(store, config, channels, indexes, report)
    return report


def _build_site(store: Store, config: Config, report: RunReport) -> None:
    """Rebuild the site, unless no repository of this run produced a digest: a run whose every
    sync failed (or found another run in progress) never publishes a site built from nothing."""
    if report.repos and all(run.digest is None for run in report.repos):
        report.site_skipped = (
            "no repository produced a digest in this run; the site is left as it was"
        )
        return
    options = config.site.options()
    try:
        with store.lock(f"site:{options.out_dir.resolve()}", what=f"the site {options.out_dir}"):
            report.site = build_site(store.digests, options)
    except PrdigestError as exc:
        report.site_error = str(exc)


def _deliver_all(
    store: Store,
    config: Config,
    channels: Mapping[str, Channel],
    indexes: list[int],
    report: RunReport,
) -> None:
    site = config.site
    handled: set[tuple[str, str, str, str]] = set()
    for index, run in zip(indexes, report.repos, strict=True):
        if run.digest is None:
            continue
        for name in config.channels_for(config.repos[index]):
            if run.digest.total == 0 and skips_empty(config, config.repos[index], name):
                run.deliveries.append(skipped_empty(name, run.digest))
                continue
            outcome = deliver(
                store.digests,
                store.deliveries,
                channels[name],
                run.digest,
                base_url=site.base_url,
                mode=config.delivery_mode(name),
            )
            run.deliveries.append(outcome)
            handled.add((name, run.digest.repo, run.digest.label, run.digest.lang))
    report.retried = retry_failed(
        store.digests,
        store.deliveries,
        channels,
        base_url=site.base_url,
        repos=[run.repo for run in report.repos if run.locked is None],
        skip=handled,
        modes={name: config.delivery_mode(name) for name in channels},
    )


def skipped_empty(channel: str, stored: StoredDigest) -> DeliveryOutcome:
    return DeliveryOutcome(channel, stored.repo, stored.label, stored.lang, "skipped_empty", 0)


def skips_empty(config: Config, repo: RepoConfig, channel: str) -> bool:
    """Whether ``channel`` gets nothing for an empty window of ``repo`` (its own setting, else
    the repository's)."""
    own = config.channels[channel].skip_empty
    return repo.skip_empty if own is None else own


@dataclass(frozen=True)
class Target:
    """One delivery ``publish`` would make: a channel, a repository, its stored digest."""

    channel: str
    repo: RepoConfig
    stored: StoredDigest

    @property
    def empty(self) -> bool:
        return self.stored.total == 0


def _check_names(channels: Mapping[str, Channel], names: list[str]) -> None:
    for name in names:
        if name not in channels:
            known = ", ".join(sorted(channels)) or "none"
            raise ConfigError(f"no channel named {name!r} (configured: {known})", key="--to")


def _routes(config: Config, names: list[str], repo: str | None) -> list[tuple[str, RepoConfig]]:
    repos = [config.repo(repo)] if repo else list(config.repos)
    pairs = [(n, r) for n in names for r in repos if n in config.channels_for(r)]
    if not pairs:
        raise ConfigError("no configured repository goes to these channels", key="--to")
    return pairs


def publish_targets(
    store: Store,
    config: Config,
    channels: Mapping[str, Channel],
    names: list[str],
    *,
    repo: str | None = None,
    label: str | None = None,
    now: datetime | None = None,
) -> list[Target]:
    """What ``publish`` sends: for each named channel and each repository routed to it, the
    stored digest (the newest, or ``label``'s); a missing one is a :class:`NotFoundError`."""
    _check_names(channels, names)
    now = now or datetime.now(UTC)
    targets = []
    for name, repo_config in _routes(config, names, repo):
        wanted = stored_label(repo_config, label, now) if label else None
        found = store.digests.query(repo_config.name, label=wanted, lang=repo_config.lang)
        if not found:
            when = f"for {wanted}" if wanted else "yet"
            raise NotFoundError(
                f"no stored digest of {repo_config.name} ({repo_config.lang}) {when} in the "
                f"store {store.location} (make one with `prdigest run-all`, `prdigest run` or "
                "`prdigest digest`)"
            )
        targets.append(Target(name, repo_config, found[0]))
    return targets


def publish_stored(
    store: Store,
    config: Config,
    channels: Mapping[str, Channel],
    names: list[str],
    *,
    repo: str | None = None,
    label: str | None = None,
    force: bool = False,
    now: datetime | None = None,
) -> list[DeliveryOutcome]:
    """``prdigest publish``: deliver stored digests (the newest, or ``label``'s) to channels.

    Each configured repository goes to the channels it is routed to; the delivery log still
    keeps a channel from getting a digest twice unless ``force`` is given.
    """
    outcomes = []
    for target in publish_targets(store, config, channels, names, repo=repo, label=label, now=now):
        if target.empty and not force and skips_empty(config, target.repo, target.channel):
            outcomes.append(skipped_empty(target.channel, target.stored))
            continue
        outcomes.append(
            deliver(
                store.digests,
                store.deliveries,
                channels[target.channel],
                target.stored,
                base_url=config.site.base_url,
                force=force,
                mode=config.delivery_mode(target.channel),
            )
        )
    return outcomes


@dataclass(frozen=True)
class HelloOutcome:
    channel: str
    error: str | None = None


def send_hello(
    config: Config, channels: Mapping[str, Channel], names: list[str], now: datetime | None = None
) -> list[HelloOutcome]:
    """``prdigest publish --test``: a short hello to each channel, naming the repositories
    routed to it; nothing is stored or logged."""
    _check_names(channels, names)
    now = now or datetime.now(UTC)
    outcomes = []
    for name in names:
        repos = [r for r in config.repos if name in config.channels_for(r)]
        lang = repos[0].lang if repos else config.site.lang
        first = repos[0] if repos else config.repos[0]
        window = first.window_for(None, now)
        digest = Digest(
            repo=first.name, window=window, lang=lang, selected=(), others=(), total=0, counts={}
        )
        base = config.site.options().base_url
        summary = hello_summary(digest, name, [r.name for r in repos] or ["-"], base)
        try:
            channels[name].send(summary)
        except DeliveryError as exc:
            outcomes.append(HelloOutcome(name, exc.message))
            continue
        outcomes.append(HelloOutcome(name))
    return outcomes

"""Publish commands: site, serve, publish, config check, run-all.

This is where secrets enter: the config names environment variables, and :func:`channel_secrets`
reads their values into :class:`~prdigest.core.secrets.Secret` objects for the channels.
Nothing here prints a secret; outcomes are reported by channel name.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import httpx

from prdigest.cli import (
    DbTarget,
    F,
    as_lang,
    checked_repo,
    cli,
    db_option,
    default_db,
    info,
    make_window,
    shown_target,
    store_origin,
    verbosity,
)
from prdigest.core.errors import ConfigFileError, PublishError
from prdigest.core.locale import DEFAULT_LANG, available
from prdigest.core.secrets import Secret
from prdigest.core.window import DAY_HELP, DEFAULT_TZ, local_day
from prdigest.pipeline.config import DEFAULT_CONFIG, Config, SiteConfig, load_config
from prdigest.pipeline.configcheck import check_file
from prdigest.pipeline.digest import DigestOptions, build_digest, require_records
from prdigest.pipeline.run_all import (
    RepoRun,
    RunReport,
    Target,
    publish_stored,
    publish_targets,
    run_all,
    send_hello,
    skips_empty,
)
from prdigest.publish.channels import Channel, make_channel, secret_fields
from prdigest.publish.channels.base import ChannelConfigBase
from prdigest.publish.channels.email import EmailConfig
from prdigest.publish.deliver import DeliveryOutcome
from prdigest.publish.preview import preview, summary_of
from prdigest.publish.site.builder import SiteOptions, SiteReport, build_site
from prdigest.publish.site.serve import make_server, url_of
from prdigest.store import Store, open_store
from prdigest.write.template import TemplateWriter

HTTP_TIMEOUT = 10.0


def config_option(func: F) -> F:
    option = click.option(
        "-c",
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help=f"Config file (default: $PRDIGEST_CONFIG or ./{DEFAULT_CONFIG}).",
    )
    return option(func)


def config_file(path: Path | None) -> Path:
    return path or Path(os.environ.get("PRDIGEST_CONFIG") or DEFAULT_CONFIG)


def optional_config(path: Path | None) -> Config | None:
    """The config when one was named or sits at the default place; else ``None``."""
    target = config_file(path)
    if path is None and not os.environ.get("PRDIGEST_CONFIG") and not target.exists():
        return None
    return load_config(target)


@contextmanager
def store_for(db: DbTarget | None, config: Config | None) -> Iterator[Store]:
    """``--db``, else the config's ``db``, else ``$PRDIGEST_DB``, else the user data dir."""
    target: str | Path
    if db is not None:
        target = db
    elif config is not None and config.db:
        target = config.db
    else:
        target = default_db()
    store = open_store(target, create_dirs=target == default_db())
    try:
        yield store
    finally:
        store.close()


def channel_secrets(channel: ChannelConfigBase) -> dict[str, Secret]:
    """The values of the environment variables a channel names (only those that are set)."""
    values: dict[str, Secret] = {}
    for field in secret_fields(channel):
        var = getattr(channel, field, None)
        if var and os.environ.get(var):
            values[field] = Secret(os.environ[var])
    return values


def build_channels(config: Config, client: httpx.Client) -> dict[str, Channel]:
    return {
        name: make_channel(name, channel, channel_secrets(channel), client=client)
        for name, channel in config.channels.items()
    }


def site_options(config: Config | None, out: Path | None, base_url: str | None) -> SiteOptions:
    if config is not None:
        return config.site.options(out, base_url)
    if out is None:
        raise click.UsageError("give --out DIR (or a config file with [site] dir)")
    return SiteConfig(dir=out).options(base_url=base_url)


def _site_line(report: SiteReport) -> str:
    removed = (
        f", {report.removed_temp} leftover temp file(s) removed" if report.removed_temp else ""
    )
    return (
        f"site: {report.digests} digest(s), {len(report.written)} file(s) written, "
        f"{report.unchanged} unchanged{removed} → {report.out_dir}"
    )


def _site_problems(report: SiteReport) -> list[str]:
    return [f"site: refused {reason}" for reason in report.refused]


@cli.command()
@click.option(
    "-o",
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Site directory (default: the config's [site] dir).",
)
@click.option("--base-url", help="Public URL of the site, for links in feeds.")
@click.option(
    "-r",
    "--repo",
    callback=checked_repo,
    help="Also digest this repository's window first and store it.",
)
@click.option("-d", "--date", "day", help=f"With --repo: the local day ({DAY_HELP}).")
@click.option("--since", help="With --repo: window start.")
@click.option("--until", help="With --repo: window end, exclusive.")
@click.option("--tz", default=DEFAULT_TZ, show_default=True, help="With --repo: time zone.")
@click.option(
    "--top",
    default=8,
    show_default=True,
    type=click.IntRange(0, 200),
    help="With --repo: most PRs that get a paragraph.",
)
@click.option(
    "--lang",
    default=DEFAULT_LANG,
    show_default=True,
    type=click.Choice(available()),
    help="With --repo: language of the digest.",
)
@config_option
@db_option
def site(
    out: Path | None,
    base_url: str | None,
    repo: str | None,
    day: str | None,
    since: str | None,
    until: str | None,
    tz: str,
    top: int,
    lang: str,
    config_path: Path | None,
    db: DbTarget | None,
) -> None:
    """Build the static site (pages, feeds, JSON) from the stored digests.

    
    Examples:
      prdigest site -o public
      prdigest site -o public --base-url https://example.org/digests/
      prdigest site -o public -r vllm-project/vllm -d yesterday
      prdigest site -c prdigest.toml
    """
    config = optional_config(config_path)
    options = site_options(config, out, base_url)
    with store_for(db, config) as store:
        if repo:
            window = make_window(day, since, until, tz)
            require_records(store, repo, window)
            digest_options = DigestOptions(repo=repo, window=window, top=top, lang=as_lang(lang))
            with store.lock(repo):
                store.digests.put(build_digest(store, digest_options, TemplateWriter()))
        with store.lock(f"site:{options.out_dir.resolve()}", what=f"the site {options.out_dir}"):
            report = build_site(store.digests, options)
        location = store.location
    info(_site_line(report), err=False)
    if not report.digests:
        info(
            f"note: the store {location} holds no digest; `prdigest digest`, `prdigest run` "
            "and `prdigest run-all` store the digests they make"
        )
    for line in _site_problems(report):
        click.echo(f"Error: {line}", err=True)
    if report.refused:
        raise PublishError(f"{len(report.refused)} stored digest(s) refused (see above)")


@cli.command()
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="The built site (default: the config's [site] dir, else ./site).",
)
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port on 127.0.0.1 (0: any free port).",
)
@config_option
def serve(directory: Path | None, port: int, config_path: Path | None) -> None:
    """Serve the built site on http://127.0.0.1 for a quick look.

    
    Examples:
      prdigest serve --dir public
      prdigest serve --dir public --port 0
    """
    if directory is None:
        config = optional_config(config_path)
        directory = config.site.dir if config is not None else Path("site")
    server = make_server(directory, port)
    # SIGTERM (a service manager, or a shell whose background jobs ignore SIGINT) stops it as
    # Ctrl-C does
    signal.signal(signal.SIGTERM, _interrupt)
    click.echo(f"Serving {directory} at {url_of(server)} (Ctrl-C to stop)")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _outcome_line(outcome: DeliveryOutcome) -> str:
    target = f"{outcome.repo} {outcome.label}" + (
        f" ({outcome.lang})" if outcome.lang != DEFAULT_LANG else ""
    )
    if outcome.status == "sent":
        again = f" (after {outcome.attempts - 1} failed attempt(s))" if outcome.retry else ""
        return f"  sent          {outcome.channel}: {target}{again}"
    if outcome.status == "already_sent":
        return f"  already sent  {outcome.channel}: {target}"
    if outcome.status == "skipped_empty":
        return f"  skipped       {outcome.channel}: {target}: no PRs merged in the window"
    if outcome.status == "unknown":
        return f"  UNKNOWN       {outcome.channel}: {target}: {outcome.error}"
    return (
        f"  FAILED        {outcome.channel}: {target}: {outcome.error} "
        f"(attempt {outcome.attempts}; retried on the next run)"
    )


@cli.command()
@click.option(
    "--to",
    "targets",
    multiple=True,
    required=True,
    help="Channel name from the config, repeatable ('all': every channel).",
)
@click.option("-r", "--repo", callback=checked_repo, help="Only this configured repository.")
@click.option(
    "-d",
    "--date",
    "label",
    help=f"The stored digest's day ({DAY_HELP}) or window label (default: the newest).",
)
@click.option("--force", is_flag=True, help="Send even if the channel already has it.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the exact payload of each delivery instead of sending it (no secrets needed).",
)
@click.option(
    "--test",
    "hello",
    is_flag=True,
    help="Send each channel a short test message instead of a digest (nothing is logged).",
)
@config_option
@db_option
def publish(
    targets: tuple[str, ...],
    repo: str | None,
    label: str | None,
    force: bool,
    dry_run: bool,
    hello: bool,
    config_path: Path | None,
    db: DbTarget | None,
) -> None:
    """Deliver stored digests to chat or e-mail channels from the config.

    
    Examples:
      prdigest publish --to team
      prdigest publish --to all -r vllm-project/vllm -d yesterday
      prdigest publish --to team --force -c prdigest.toml
      prdigest publish --to team --dry-run
      prdigest publish --to all --test
    """
    config = load_config(config_file(config_path))
    names = list(config.channels) if "all" in targets else list(dict.fromkeys(targets))
    if dry_run and hello:
        raise click.UsageError("give --dry-run or --test, not both")
    if hello:
        _send_hello(config, names)
        return
    if dry_run:
        _dry_run(config, names, repo, label, db)
        return
    with httpx.Client(timeout=HTTP_TIMEOUT) as client, store_for(db, config) as store:
        channels = build_channels(config, client)
        outcomes = publish_stored(
            store, config, channels, names, repo=repo, label=label, force=force
        )
    for outcome in outcomes:
        click.echo(_outcome_line(outcome))
    failed = sum(1 for o in outcomes if not o.ok)
    if failed:
        raise PublishError(f"{failed} delivery(ies) failed; they are retried by the next run")


DRY_RUN_SECRET = "prdigest-dry-run-placeholder"  # stands in for every secret: nothing is sent


def _dry_run(
    config: Config, names: list[str], repo: str | None, label: str | None, db: DbTarget | None
) -> None:
    """Each delivery ``publish`` would make, as the exact payload, on stdout."""
    with httpx.Client() as client, store_for(db, config) as store:
        channels = {
            name: make_channel(
                name,
                channel,
                {field: Secret(DRY_RUN_SECRET) for field in secret_fields(channel)},
                client=client,
            )
            for name, channel in config.channels.items()
        }
        targets = publish_targets(store, config, channels, names, repo=repo, label=label)
        for target in targets:
            click.echo(_dry_run_header(config, store, target))
            summary = summary_of(store.digests, target.stored, config.site.base_url)
            click.echo(preview(channels[target.channel], summary), nl=False)


def _dry_run_header(config: Config, store: Store, target: Target) -> str:
    """``--- team (feishu, signed when sent): owner/name 2026-06-10 [what publish would do]``."""
    stored, channel = target.stored, config.channels[target.channel]
    state = []
    sent = store.deliveries.get(target.channel, stored.repo, stored.label, stored.lang)
    if sent is not None and sent.status == "sent":
        state.append("already sent: publish skips it unless --force")
    if target.empty and skips_empty(config, target.repo, target.channel):
        state.append("no PRs merged: publish skips it unless --force")
    signed = ", signed when sent" if getattr(channel, "secret_env", None) else ""
    note = f" [{'; '.join(state)}]" if state else ""
    kind = getattr(channel, "type", "?")
    return f"--- {target.channel} ({kind}{signed}): {stored.repo} {stored.label}{note}"


def _send_hello(config: Config, names: list[str]) -> None:
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        outcomes = send_hello(config, build_channels(config, client), names)
    for outcome in outcomes:
        if outcome.error is None:
            info(f"  sent test     {outcome.channel}", err=False)
        else:
            click.echo(f"  FAILED        {outcome.channel}: {outcome.error}")
    failed = sum(1 for o in outcomes if o.error is not None)
    if failed:
        raise PublishError(f"{failed} test message(s) failed")


@cli.group("config")
def config_group() -> None:
    """Check the configuration file (prdigest.toml).

    
    Examples:
      prdigest config check
      prdigest config check -c /srv/prdigest/prdigest.toml
    """


def _describe(config: Config) -> list[str]:
    lines = []
    for repo in config.repos:
        routes = ", ".join(config.channels_for(repo)) or "no channels"
        lines.append(
            f"  repo {repo.name}: {repo.source} → {repo.writer} writer, {repo.window} in "
            f"{repo.timezone}, top {repo.top}, {repo.lang} → {routes}"
        )
    for name, channel in config.channels.items():
        extra = ""
        if isinstance(channel, EmailConfig):
            extra = f" via {channel.host}:{channel.effective_port} ({channel.security})"
        elif getattr(channel, "secret_env", None):
            extra = " (signed)"
        lines.append(f"  channel {name}: {getattr(channel, 'type', '?')}{extra}")
    lines.append(f"  site: {config.site.dir} ({config.site.base_url or 'no base_url'})")
    return lines


@config_group.command("check")
@config_option
def config_check(config_path: Path | None) -> None:
    """Validate the config file: every problem at once, each naming its key.

    
    Examples:
      prdigest config check
      prdigest config check -c /srv/prdigest/prdigest.toml
    """
    path = config_file(config_path)
    found = check_file(path, os.environ)
    for warning in found.warnings:
        click.echo(f"warning: {warning}", err=True)
    if found.problems:
        raise ConfigFileError(str(path), found.problems)
    config: Config = found.config
    info(f"{path}: OK", err=False)
    for line in _describe(config):
        info(line, err=False)
    target = config.db or default_db()
    origin = "the config's db" if config.db else store_origin()
    info(f"  store: {shown_target(target)} ({origin}; --db takes precedence)", err=False)


def _run_lines(report: RunReport) -> list[str]:
    lines = []
    for run in report.repos:
        head = f"{run.repo} {run.label or ''}".rstrip()
        if run.error:
            lines.append(f"{head}: FAILED: {run.error}")
            continue
        parts = []
        if run.sync is not None:
            r = run.sync.stored
            parts.append(f"synced {r.new} new, {r.updated} updated, {r.unchanged} unchanged")
        if run.digest is not None:
            state = "stored" if run.digest.changed else "unchanged"
            parts.append(f"digest {state} ({run.digest.total} PRs)")
        lines.append(f"{head}: " + " · ".join(parts))
        lines += [f"  warning: {w}" for w in run.warnings]
        lines += [f"  problem: {p}" for p in (run.sync.problems if run.sync else ())]
        lines += [_outcome_line(d) for d in run.deliveries]
    if report.retried:
        lines.append("earlier failed deliveries:")
        lines += [_outcome_line(d) for d in report.retried]
    if report.site is not None:
        lines.append(_site_line(report.site))
        lines += _site_problems(report.site)
    if report.site_error:
        lines.append(f"site: FAILED: {report.site_error}")
    if report.site_skipped:
        lines.append(f"site: not rebuilt: {report.site_skipped}")
    return lines


def _problem_count(report: RunReport) -> int:
    count = sum(1 for r in report.repos if r.error) + (1 if report.site_error else 0)
    count += len(report.site.refused) if report.site else 0
    count += sum(len(r.sync.problems) for r in report.repos if r.sync)
    count += sum(1 for r in report.repos for d in r.deliveries if not d.ok)
    return count + sum(1 for d in report.retried if not d.ok)


@cli.command("run-all")
@config_option
@click.option(
    "-d",
    "--date",
    "day",
    help=f"The local day in each repository's time zone ({DAY_HELP}; default: yesterday).",
)
@click.option("-r", "--repo", callback=checked_repo, help="Only this configured repository.")
@click.option("--no-publish", is_flag=True, help="Sync, digest and build the site; post nothing.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the run's summary as JSON (per repository and channel) instead of lines.",
)
@db_option
def run_all_command(
    config_path: Path | None,
    day: str | None,
    repo: str | None,
    no_publish: bool,
    as_json: bool,
    db: DbTarget | None,
) -> None:
    """Sync, digest, build the site and deliver, for every configured repository.

    
    Examples:
      prdigest run-all
      prdigest run-all -c /srv/prdigest/prdigest.toml -d 2026-06-10
      prdigest run-all -r vllm-project/vllm --no-publish
      prdigest run-all --json > run.json
    """
    config = load_config(config_file(config_path))
    when = _checked_day(day)
    with httpx.Client(timeout=HTTP_TIMEOUT) as client, store_for(db, config) as store:
        report = run_all(
            store,
            config,
            channels=build_channels(config, client),
            env=os.environ,
            day=when,
            only=repo,
            publish=not no_publish,
        )
    if as_json:
        click.echo(json.dumps(run_summary(report), ensure_ascii=False, indent=2))
    else:
        for line in _run_lines(report):
            if verbosity() >= 0 or "FAILED" in line or "problem:" in line or "warning:" in line:
                click.echo(line)
    problems = _problem_count(report)
    locked = [run.locked for run in report.repos if run.locked is not None]
    if locked and problems == len(locked):
        raise locked[0]  # only another run in progress: exit 11, naming it
    if problems:
        raise PublishError(f"{problems} problem(s) in this run (see above)")


def _delivery_json(outcome: DeliveryOutcome) -> dict[str, object]:
    return {
        "channel": outcome.channel,
        "repo": outcome.repo,
        "label": outcome.label,
        "lang": outcome.lang,
        "status": outcome.status,
        "attempts": outcome.attempts,
        "error": outcome.error,
    }


def _repo_json(run: RepoRun) -> dict[str, object]:
    sync = run.sync
    return {
        "repo": run.repo,
        "label": run.label,
        "ok": run.ok,
        "error": run.error,
        "synced": None
        if sync is None
        else {
            "found": sync.found,
            "new": sync.stored.new,
            "updated": sync.stored.updated,
            "unchanged": sync.stored.unchanged,
            "problems": list(sync.problems),
        },
        "stored": None
        if run.digest is None
        else {"lang": run.digest.lang, "prs": run.digest.total, "changed": run.digest.changed},
        "warnings": run.warnings,
        "channels": [_delivery_json(d) for d in run.deliveries],
    }


def run_summary(report: RunReport) -> dict[str, object]:
    """``run-all --json``: per repository and channel what was synced, stored, sent, skipped
    and failed, with totals; the format is documented in docs/publish.md."""
    outcomes = [d for r in report.repos for d in r.deliveries] + list(report.retried)
    statuses = [d.status for d in outcomes]
    synced = [r.sync.stored for r in report.repos if r.sync is not None]
    site = report.site
    return {
        "ok": report.ok,
        "problems": _problem_count(report),
        "totals": {
            "synced": sum(s.new + s.updated for s in synced),
            "stored": sum(1 for r in report.repos if r.digest is not None and r.digest.changed),
            "sent": statuses.count("sent"),
            "already_sent": statuses.count("already_sent"),
            "skipped": statuses.count("skipped_empty"),
            "failed": statuses.count("failed") + sum(1 for r in report.repos if r.error),
        },
        "repos": [_repo_json(r) for r in report.repos],
        "retried": [_delivery_json(d) for d in report.retried],
        "site": None
        if site is None
        else {
            "dir": str(site.out_dir),
            "digests": site.digests,
            "written": len(site.written),
            "unchanged": site.unchanged,
        },
        "site_error": report.site_error,
    }


def _checked_day(value: str | None) -> str | None:
    """``--date`` as typed, once its form is checked (each repository resolves it in its zone)."""
    if value is not None:
        local_day(value)
    return value

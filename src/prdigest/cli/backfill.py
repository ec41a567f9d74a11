"""``backfill``: the digest of every day of a range, resumable, by one or several workers."""

from __future__ import annotations

import os
import socket
from datetime import timedelta
from pathlib import Path

import click

from prdigest.cli import DbTarget, as_lang, checked_repo, cli, db_option, info, opened
from prdigest.cli.core import WriterChoice
from prdigest.cli.git import git_options
from prdigest.cli.llm import writer_options
from prdigest.core.errors import PrdigestError
from prdigest.core.locale import DEFAULT_LANG, available
from prdigest.core.window import DEFAULT_TZ, local_day
from prdigest.pipeline.backfill import DEFAULT_LEASE, BackfillOptions, DayDone, backfill
from prdigest.pipeline.registry import SourceSpec


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{rest:02d}"


def _say(done: DayDone) -> None:
    p = done.progress
    what = f"failed: {done.error}" if done.error else f"{done.prs} PR(s)"
    eta = f", ETA {_clock(done.eta_s)}" if done.eta_s is not None and p.left else ""
    info(
        f"{done.day}: {what} in {done.seconds:.1f} s — {p.done}/{p.total} day(s) done, "
        f"{p.failed} failed, {p.claimed} in progress{eta}"
    )


@cli.command("backfill")
@click.option(
    "-r", "--repo", required=True, callback=checked_repo, help="Repository as owner/name."
)
@click.option("--since", required=True, help="First day, YYYY-MM-DD.")
@click.option("--until", required=True, help="Day after the last one (exclusive), YYYY-MM-DD.")
@click.option("--tz", default=DEFAULT_TZ, show_default=True, help="Time zone of the days.")
@click.option(
    "--lang",
    default=DEFAULT_LANG,
    show_default=True,
    type=click.Choice(available()),
    help="Language of the digests.",
)
@click.option(
    "--top",
    default=8,
    show_default=True,
    type=click.IntRange(0, 200),
    help="How many PRs of a day get a paragraph.",
)
@git_options
@click.option(
    "--github", "from_github", is_flag=True, help="Sync each day from GitHub first (GITHUB_TOKEN)."
)
@click.option(
    "--worker",
    help="This worker's name (default: host:pid); a worker started again "
    "under its name takes back its unfinished day at once.",
)
@click.option(
    "--lease",
    "lease_min",
    default=int(DEFAULT_LEASE.total_seconds() // 60),
    show_default=True,
    type=click.IntRange(1, None),
    help="Minutes after which another worker may take a day a dead worker claimed.",
)
@writer_options
@db_option
def backfill_command(
    repo: str,
    since: str,
    until: str,
    tz: str,
    lang: str,
    top: int,
    git_path: Path | None,
    branch: str | None,
    from_github: bool,
    worker: str | None,
    lease_min: int,
    writer: str,
    style: Path | None,
    budget_tokens: int | None,
    max_cost_tokens: int | None,
    dry_run: bool,
    db: DbTarget | None,
) -> None:
    """Digest every day of a range and store the digests; resumable, and several workers may
    share one (PostgreSQL) database: each day is digested by one of them.

    \b
    Examples:
      prdigest backfill -r vllm-project/vllm-ascend --since 2026-01-01 --until 2026-07-01 --git .
      prdigest backfill -r vllm-project/vllm --since 2026-01-01 --until 2026-02-01 --worker w1

    Start the same command as several workers (or a job array with --worker task-N) on one
    PostgreSQL database to split the days.
    """
    if dry_run:
        raise click.UsageError("--dry-run is for digest and run; backfill writes every day")
    first, end = local_day(since, tz), local_day(until, tz)
    if end <= first:
        raise click.UsageError("--until must be a later day than --since")
    if git_path is not None and from_github:
        raise click.UsageError("give --git or --github, not both")
    source = None
    if git_path is not None:
        source = SourceSpec(repo=repo, source="git", path=git_path, branch=branch)
    elif from_github:
        source = SourceSpec(repo=repo, source="github")
    options = BackfillOptions(
        repo=repo,
        since=first,
        until=end,
        tz=tz,
        worker=worker or f"{socket.gethostname()}:{os.getpid()}",
        top=top,
        lang=as_lang(lang),
        source=source,
        lease=timedelta(minutes=lease_min),
    )
    choice = WriterChoice(writer, style, budget_tokens, max_cost_tokens).make()
    with opened(db) as store:
        report = backfill(store, options, choice, os.environ, _say)
    progress = report.progress
    assert progress is not None  # set when backfill returns
    click.echo(
        f"backfill {repo} {first}..{end} ({tz}): {progress.done}/{progress.total} day(s) done, "
        f"{len(report.days)} by this worker ({options.worker}), {progress.failed} failed"
    )
    for day, error in report.failed:
        click.echo(f"Error: {day}: {error}", err=True)
    if report.failed:
        raise SystemExit(PrdigestError.exit_code)

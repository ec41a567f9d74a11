"""``sync`` and ``run``: store a window's PRs from GitHub or, with ``--git``, from a local clone.

``run`` is ``sync`` followed by ``digest`` over the same window (the sync summary goes to
stderr, the digest to stdout or ``--out``). Without ``--git`` the source is GitHub and needs
``GITHUB_TOKEN``; with ``--git PATH`` it is the clone's first-parent history (no token, no
network, no review data).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from prdigest.cli import (
    DbTarget,
    as_lang,
    cli,
    db_option,
    digest_options,
    make_window,
    opened,
    progress_bar,
    window_options,
)
from prdigest.cli.core import Output, WriterChoice, dry_run_report, no_store_option, write_digest
from prdigest.cli.git import git_options
from prdigest.cli.github import github_options
from prdigest.cli.llm import writer_options
from prdigest.core.models import Window
from prdigest.core.names import check_repo
from prdigest.pipeline.digest import DigestOptions
from prdigest.pipeline.registry import SourceSpec, sync_repo


def _spec(
    repo: str, git_path: Path | None, branch: str | None, github: dict[str, object]
) -> SourceSpec:
    if git_path is not None:
        return SourceSpec(repo=repo, source="git", path=git_path, branch=branch)
    if branch is not None:
        raise click.UsageError("--branch needs --git (GitHub syncs merged PRs of every base)")
    check_repo(repo)
    return SourceSpec(
        repo=repo,
        source="github",
        api_url=github["api_url"],  # type: ignore[arg-type]
        graphql_url=github["graphql_url"],  # type: ignore[arg-type]
        batch_size=github["batch_size"],  # type: ignore[arg-type]
        max_wait=github["max_wait"],  # type: ignore[arg-type]
    )


def _sync(
    window: Window,
    repo: str,
    db: DbTarget | None,
    git_path: Path | None,
    branch: str | None,
    github: dict[str, object],
    *,
    summary_to_stderr: bool,
) -> None:
    """Sync and print the summary; a GitHub sync's summary goes to stderr behind "synced",
    and an error that stopped it after the listing is raised after the summary."""
    spec = _spec(repo, git_path, branch, github)
    label = "git log" if spec.source == "git" else "sync"
    with opened(db) as store, store.lock(repo), progress_bar(label) as progress:
        report = sync_repo(store, spec, window, os.environ, progress)
    if spec.source == "git":
        for line in report.lines():
            click.echo(line, err=summary_to_stderr)
        return
    click.echo(f"synced {report.lines()[0]}", err=True)
    if report.stopped is not None:
        raise report.stopped


@cli.command()
@window_options
@git_options
@github_options
@db_option
def sync(
    repo: str,
    day: str | None,
    since: str | None,
    until: str | None,
    tz: str,
    git_path: Path | None,
    branch: str | None,
    db: DbTarget | None,
    **github: object,
) -> None:
    """Store the PRs merged in a window, from GitHub (resumable) or from a local clone (--git).

    
    Examples:
      GITHUB_TOKEN=… prdigest sync -r vllm-project/vllm -d yesterday
      prdigest sync --git ./vllm-ascend -r vllm-project/vllm-ascend -d 2026-07-10
      prdigest sync --git ./ascend -r vllm-project/vllm-ascend --since 2026-07-01 --until 2026-07-08
    """
    window = make_window(day, since, until, tz)
    _sync(window, repo, db, git_path, branch, github, summary_to_stderr=False)


@cli.command()
@window_options
@git_options
@github_options
@digest_options
@writer_options
@no_store_option
@db_option
def run(
    repo: str,
    day: str | None,
    since: str | None,
    until: str | None,
    tz: str,
    git_path: Path | None,
    branch: str | None,
    top: int,
    fmt: str,
    lang: str,
    out: Path | None,
    preset_path: Path | None,
    writer: str,
    style: Path | None,
    budget_tokens: int | None,
    max_cost_tokens: int | None,
    no_store: bool,
    dry_run: bool,
    db: DbTarget | None,
    **github: object,
) -> None:
    """Sync a window (GitHub, or a clone with --git), then write and store its digest.

    
    Examples:
      GITHUB_TOKEN=… prdigest run -r vllm-project/vllm -d yesterday
      prdigest run --git ./vllm-ascend -r vllm-project/vllm-ascend -d 2026-07-10 -f md -o day.md
    """
    window = make_window(day, since, until, tz)
    _sync(window, repo, db, git_path, branch, github, summary_to_stderr=True)
    options = DigestOptions(
        repo=repo, window=window, top=top, lang=as_lang(lang), preset_path=preset_path
    )
    choice = WriterChoice(writer, style, budget_tokens, max_cost_tokens)
    if dry_run:
        dry_run_report(options, choice, db)
        return
    write_digest(options, choice, Output(db, fmt, out, store=not no_store), synced=True)

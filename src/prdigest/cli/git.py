"""The git source for ``sync --git`` and ``run --git``: options and the sync summary.

A local clone only: no token, no network.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from prdigest.cli import (
    opened,
    progress_bar,
)
from prdigest.core.models import Window
from prdigest.sources.git import GitSyncResult
from prdigest.sources.git import sync_git as sync_from_git

F = TypeVar("F", bound=Callable[..., Any])


def git_options(func: F) -> F:
    options = [
        click.option(
            "--git",
            "git_path",
            default=None,
            type=click.Path(file_okay=False, path_type=Path),
            help="Read the PRs from this local clone instead of GitHub (no token needed).",
        ),
        click.option(
            "--branch",
            help="With --git: branch whose first-parent history is read "
            "(default: the clone's origin/HEAD, else HEAD).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def summary_lines(result: GitSyncResult, window: Window) -> list[str]:
    """What a sync did, for people: counts first, then the commits that were not PRs."""
    where = f"{result.repo} ({result.branch}) {window.label} ({window.tz})"
    if result.commits == 0:
        line = f"{where}: no commits in the window, 0 PRs found"
        if result.newest_commit_at is not None:
            newest = result.newest_commit_at.astimezone(window.since.tzinfo)
            line += f"; the newest commit on {result.branch} is from {newest:%Y-%m-%d %H:%M}"
            if newest < window.until:
                line += " (update the clone for later days: git fetch / git pull)"
        return [line]
    stored = result.stored
    lines = [
        f"{where}: {result.commits} commit(s), {result.found} PR(s) found; "
        f"stored {stored.new} new, {stored.updated} updated, {stored.unchanged} unchanged"
    ]
    if result.kept:
        lines.append(f"  {result.kept} PR(s) already stored from a richer source, left unchanged")
    if result.skipped:
        lines.append(f"  {result.skipped} commit(s) skipped (not a PR):")
        lines += [
            f"    {s.sha[:10]} {s.subject[:72]} — {s.reason}" for s in result.skipped_examples
        ]
        if result.skipped > len(result.skipped_examples):
            lines.append(f"    … and {result.skipped - len(result.skipped_examples)} more")
    return lines


def sync_from_clone(
    git_path: Path, branch: str | None, repo: str, window: Window, db: Path | None, *, err: bool
) -> None:
    with opened(db) as store, progress_bar("git log") as progress:
        result = sync_from_git(
            store,
            git_path,
            repo,
            since=window.since,
            until=window.until,
            branch=branch,
            progress=progress,
        )
    for line in summary_lines(result, window):
        click.echo(line, err=err)

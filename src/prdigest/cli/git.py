"""Git-source commands: ``sync-git`` (store a window's PRs from a clone) and ``run-git``.

``run-git`` is ``sync-git`` followed by ``digest`` over the same window. Both read a local
clone only: no token, no network. (They are meant to become ``sync --git`` and ``run --git``
next to the GitHub source's ``sync``/``run``.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..digest import DigestOptions, build_digest
from ..models import Window
from ..render import render
from ..sources.git import GitSyncResult
from ..sources.git import sync_git as sync_from_git
from ..write.template import TemplateWriter
from . import (
    cli,
    db_option,
    digest_options,
    emit,
    make_window,
    opened,
    progress_bar,
    window_options,
)

F = TypeVar("F", bound=Callable[..., Any])


def git_options(func: F) -> F:
    options = [
        click.option(
            "--git",
            "git_path",
            required=True,
            type=click.Path(file_okay=False, path_type=Path),
            help="Path of a local clone of the repository.",
        ),
        click.option(
            "--branch",
            help="Branch whose first-parent history is read "
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


def _sync(
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


@cli.command("sync-git")
@git_options
@window_options
@db_option
def sync_git(
    git_path: Path,
    branch: str | None,
    repo: str,
    day: str | None,
    since: str | None,
    until: str | None,
    tz: str,
    db: Path | None,
) -> None:
    """Store the PRs merged in a window, read from a local clone (squash or merge commits)."""
    _sync(git_path, branch, repo, make_window(day, since, until, tz), db, err=False)


@cli.command("run-git")
@git_options
@window_options
@digest_options
@db_option
def run_git(
    git_path: Path,
    branch: str | None,
    repo: str,
    day: str | None,
    since: str | None,
    until: str | None,
    tz: str,
    top: int,
    fmt: str,
    lang: str,
    out: Path | None,
    preset_path: Path | None,
    db: Path | None,
) -> None:
    """Sync a window from a local clone, then print its digest (the sync summary goes to stderr)."""
    window = make_window(day, since, until, tz)
    _sync(git_path, branch, repo, window, db, err=True)  # stdout carries the digest
    options = DigestOptions(
        repo=repo,
        window=window,
        top=top,
        lang=lang,  # type: ignore[arg-type]
        preset_path=preset_path,
    )
    with opened(db) as store, progress_bar("digest") as progress:
        digest = build_digest(store, options, TemplateWriter(), progress)
    emit(render(digest, fmt), out)

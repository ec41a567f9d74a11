"""The git source: a window of a clone's first-parent history as PR records.

No token, no network. Records are read by :mod:`.reader` and stored by the one sync loop
(:func:`prdigest.sources.base.sync`), 200 to a transaction, so an interrupted sync keeps what
it stored and a re-run changes nothing that did not change. With ``known`` (the store's
lookup of merge commits), the commits whose PR is stored already are not read again: a re-run
lists the window's commits (headers only) and reads the diffs of the new ones alone. A git
record knows no discussion, so it never replaces a record stored from GitHub or an import
(``yields_to_others``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from prdigest.core.errors import SourceError
from prdigest.core.models import Window
from prdigest.core.names import check_repo
from prdigest.sources.base import Details, Fetched, Item, Progress, Skipped, SyncReport
from prdigest.sources.git.fetch import fetch
from prdigest.sources.git.reader import (
    Branch,
    KnownCommits,
    Stored,
    count_commits,
    newest_commit_at,
    read_branch,
    resolve_branch,
)

BATCH = 200
log = logging.getLogger("prdigest.sources.git")


@dataclass
class GitDetails:
    """What a git sync knows besides its records: the branch, and how old the clone is."""

    branch: str = ""
    commits: int = 0  # first-parent commits of the window
    known: int = 0  # of which the store holds the PR already: not read again
    newest_commit_at: datetime | None = None  # the branch tip, when the window was empty
    label: str = ""
    tz: str = ""
    until: datetime | None = None
    stopped: SourceError | None = None
    warnings: list[str] = field(default_factory=list)

    def lines(self, report: SyncReport) -> list[str]:
        """Counts first, then the commits that were not PRs."""
        return self._counts(report) + [f"  warning: {w}" for w in self.warnings]

    def _counts(self, report: SyncReport) -> list[str]:
        where = f"{report.repo} ({self.branch}) {self.label} ({self.tz})"
        if self.commits == 0:
            line = f"{where}: no commits in the window, 0 PRs found"
            if self.newest_commit_at is not None and self.until is not None:
                newest = self.newest_commit_at.astimezone(self.until.tzinfo)
                line += f"; the newest commit on {self.branch} is from {newest:%Y-%m-%d %H:%M}"
                if newest < self.until:
                    line += " (update the clone for later days: git fetch / git pull)"
            return [line]
        stored = report.stored
        lines = [
            f"{where}: {self.commits} commit(s), {report.found + self.known} PR(s) found; "
            f"stored {stored.new} new, {stored.updated} updated, "
            f"{stored.unchanged + self.known} unchanged"
        ]
        if self.known:
            lines.append(f"  {self.known} PR(s) already stored from their commit, not read again")
        if report.kept:
            lines.append(
                f"  {report.kept} PR(s) already stored from a richer source, left unchanged"
            )
        if report.skipped:
            lines.append(f"  {report.skipped} commit(s) skipped (not a PR):")
            lines += [
                f"    {s.ref[:10]} {s.subject[:72]} — {s.reason}" for s in report.skipped_examples
            ]
            if report.skipped > len(report.skipped_examples):
                more = report.skipped - len(report.skipped_examples)
                lines.append(f"    … and {more} more")
        return lines


@dataclass
class GitSource:
    """PRs merged into a branch of the clone at ``path`` (default: the remote's default)."""

    name: ClassVar[str] = "git"
    path: Path
    repo: str
    branch: str | None = None
    progress: Progress | None = None
    fetch: bool = False  # ``git fetch`` before reading (scheduled runs)
    environment: Mapping[str, str] = field(default_factory=dict)  # for git fetch (credentials)
    flush_every: int = BATCH
    yields_to_others: bool = True
    known: KnownCommits | None = None  # the store's lookup: commits stored need no re-read
    _details: GitDetails = field(default_factory=GitDetails)

    def read(self, window: Window | None) -> Iterator[Item]:
        check_repo(self.repo)
        target: Branch = resolve_branch(self.path, self.branch)
        since = window.since if window else None
        until = window.until if window else None
        details = self._details = GitDetails(
            branch=target.name,
            label=window.label if window else "",
            tz=window.tz if window else "",
            until=until,
        )
        if self.fetch:
            self._fetch(target, until)
        total = count_commits(self.path, target, since, until) if self.progress else 0
        items = read_branch(
            self.path, self.repo, target, since=since, until=until, known=self.known
        )
        for done, item in enumerate(items, start=1):
            details.commits += 1
            if isinstance(item, Stored):
                details.known += 1
            else:
                yield item if isinstance(item, Skipped) else Fetched(item)
            if self.progress:
                self.progress(done, total)
        if details.commits == 0:
            details.newest_commit_at = newest_commit_at(self.path, target)

    def _fetch(self, target: Branch, until: datetime | None) -> None:
        """Update the clone; offline, warn when its newest commit is older than the window."""
        outcome = fetch(self.path, target.ref, self.environment)
        if outcome.offline is None:
            return
        newest = newest_commit_at(self.path, target)
        if until is not None and newest is not None and newest < until:
            local = newest.astimezone(until.tzinfo)
            warning = (
                f"could not fetch {outcome.remote} for {self.path} ({outcome.offline}); the "
                f"clone's newest commit on {target.name} is from {local:%Y-%m-%d %H:%M}, before "
                "the window ends, so PRs merged since are missing"
            )
            self._details.warnings.append(warning)  # the run's summary reports it
        else:
            log.info("%s: offline (%s); the clone already covers the window", self.repo, outcome)

    def details(self) -> Details:
        return self._details

    def close(self) -> None:
        return None

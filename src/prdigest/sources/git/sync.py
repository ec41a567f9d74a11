"""Store the PRs of a window read from a clone; return what happened for the CLI to report.

Records are upserted in batches, so an interrupted sync keeps what it stored and a re-run
changes nothing that did not change. A record already stored from another source (GitHub, or
an import) is left alone: it knows the discussion, the git record does not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from prdigest.core.records import PullRequest
from prdigest.sources.git.reader import (
    Branch,
    SkippedCommit,
    check_repo_name,
    count_commits,
    newest_commit_at,
    read_branch,
    resolve_branch,
)
from prdigest.store import Store, UpsertResult

BATCH = 200
MAX_SKIPPED_SHOWN = 20
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class GitSyncResult:
    repo: str
    branch: str
    commits: int  # first-parent commits of the window
    found: int  # PRs read from them
    stored: UpsertResult
    kept: int  # PRs stored from a richer source, left as they were
    skipped: int  # commits that are not PRs
    skipped_examples: tuple[SkippedCommit, ...] = ()  # the first MAX_SKIPPED_SHOWN of them
    newest_commit_at: datetime | None = None  # the branch tip, when the window was empty


@dataclass
class _Tally:
    stored: UpsertResult = field(default_factory=UpsertResult)
    found: int = 0
    kept: int = 0
    skipped: list[SkippedCommit] = field(default_factory=list)
    skipped_count: int = 0


def _store_batch(store: Store, repo: str, batch: list[PullRequest], tally: _Tally) -> None:
    others = {
        n
        for n, source in store.sources_of(repo, (r.number for r in batch)).items()
        if source != "git"
    }
    tally.kept += len(others)
    tally.stored += store.upsert_prs(r for r in batch if r.number not in others)
    batch.clear()


def sync_git(
    store: Store,
    path: Path,
    repo: str,
    *,
    since: datetime | None,
    until: datetime | None,
    branch: str | None = None,
    progress: Progress | None = None,
) -> GitSyncResult:
    """Read the window's PRs from the clone at ``path`` and store them."""
    check_repo_name(repo)
    target: Branch = resolve_branch(path, branch)
    total = count_commits(path, target, since, until) if progress else 0
    tally = _Tally()
    batch: list[PullRequest] = []
    for done, item in enumerate(read_branch(path, repo, target, since=since, until=until), 1):
        if isinstance(item, SkippedCommit):
            tally.skipped_count += 1
            if len(tally.skipped) < MAX_SKIPPED_SHOWN:
                tally.skipped.append(item)
        else:
            tally.found += 1
            batch.append(item)
            if len(batch) >= BATCH:
                _store_batch(store, repo, batch, tally)
        if progress:
            progress(done, total)
    _store_batch(store, repo, batch, tally)
    commits = tally.found + tally.skipped_count
    newest = newest_commit_at(path, target) if commits == 0 else None
    return GitSyncResult(
        repo=repo,
        branch=target.name,
        commits=commits,
        found=tally.found,
        stored=tally.stored,
        kept=tally.kept,
        skipped=tally.skipped_count,
        skipped_examples=tuple(tally.skipped),
        newest_commit_at=newest,
    )

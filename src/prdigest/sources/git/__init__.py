"""Git source: merged PRs read straight from a local clone (DESIGN §2, issue 4).

Repositories that squash-merge keep each PR's title, number, description and full diff in
the default branch's history; true merges keep the merged range. No token, no network.

* :func:`read_prs` streams ``PullRequest`` records (and :class:`SkippedCommit` for commits
  that are not PRs) for a window of a branch's first-parent history — :mod:`.reader`;
* :func:`sync_git` stores them and returns a :class:`GitSyncResult` — :mod:`.sync`;
* :mod:`.logparse` parses ``git log -p`` bytes, :mod:`.message` reads commit messages,
  :mod:`.merges` finds a true merge's own commits, :mod:`.runner` runs git.
"""

from __future__ import annotations

from prdigest.sources.git.reader import Branch, SkippedCommit, read_prs, resolve_branch
from prdigest.sources.git.sync import GitSyncResult, sync_git

__all__ = ["Branch", "GitSyncResult", "SkippedCommit", "read_prs", "resolve_branch", "sync_git"]

"""Git source: merged PRs read straight from a local clone (DESIGN §2).

Repositories that squash-merge keep each PR's title, number, description and full diff in
the default branch's history; true merges keep the merged range. No token, no network.

* :class:`GitSource` — the source: a window of a branch's first-parent history — :mod:`.source`;
* :func:`read_prs` streams ``PullRequest`` records (and :class:`~prdigest.sources.base.Skipped`
  for commits that are not PRs) — :mod:`.reader`;
* :mod:`.logparse` parses ``git log -p`` bytes, :mod:`.message` reads commit messages,
  :mod:`.merges` finds a true merge's own commits, :mod:`.runner` runs git.
"""

from __future__ import annotations

from prdigest.sources.git.reader import Branch, read_prs, resolve_branch
from prdigest.sources.git.source import GitDetails, GitSource

__all__ = ["Branch", "GitDetails", "GitSource", "read_prs", "resolve_branch"]

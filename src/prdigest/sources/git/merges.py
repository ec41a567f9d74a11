"""The commits a true merge brought in, looked up for many merges with one ``git log``.

The commits of merge ``M`` (parents ``P1``, ``P2``…) are those reachable from ``P2…`` and not
from ``P1``. Asking git that per merge would cost one process per PR in a repository that
merges every PR, so the lookup works on a *chunk*: the ``CHUNK`` first-parent commits ending at
``M``. One ``git log M --not M~CHUNK`` lists every commit of the chunk with its parents; walking
that list from the oldest first-parent commit to the newest, with one shared "seen" set,
attributes each commit to the merge that brought it in (a commit seen before is already
reachable from that merge's ``P1``). Each commit is visited once per chunk.

The main history stream goes newest first, so the merges that follow ``M`` in the stream fall
in the same chunk and hit the cache; only the current chunk is kept.

Limits: a merge lists at most :data:`MAX_COMMITS` commits (GitHub's own limit for a PR's
commit list, oldest first); a chunk that would list more than :data:`MAX_HEADERS` commits (a
merge of a whole foreign history) is not attributed — its merges get no commit list.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from prdigest.sources.git import runner

CHUNK = 200
MAX_COMMITS = 250
MAX_HEADERS = 20_000
_FORMAT = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%cI%x1f%B"


@dataclass(frozen=True, slots=True)
class BranchCommit:
    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    committed_at: datetime
    message: str


def parse_headers(raw: bytes) -> dict[str, BranchCommit]:
    """Commits of a ``git log --format=_FORMAT`` output, by sha."""
    commits: dict[str, BranchCommit] = {}
    for record in raw.decode("utf-8", errors="replace").split("\x1e"):
        fields = record.split("\x1f", 5)
        if len(fields) != 6:
            continue
        sha, parents, name, email, committed, message = fields
        commits[sha] = BranchCommit(
            sha,
            tuple(parents.split()),
            name,
            email,
            datetime.fromisoformat(committed),
            message.strip(),
        )
    return commits


def _walk(starts: tuple[str, ...], graph: dict[str, BranchCommit], seen: set[str]) -> list[str]:
    """Commits reachable from ``starts`` inside ``graph`` and not in ``seen`` (which grows)."""
    found: list[str] = []
    stack = [sha for sha in starts if sha in graph]
    while stack:
        sha = stack.pop()
        if sha in seen:
            continue
        seen.add(sha)
        found.append(sha)
        stack.extend(p for p in graph[sha].parents if p in graph and p not in seen)
    return found


def attribute(tip: str, graph: dict[str, BranchCommit]) -> dict[str, tuple[BranchCommit, ...]]:
    """merge sha → its own commits (oldest first), for the merges on ``tip``'s first-parent line."""
    chain: list[str] = []
    sha: str | None = tip
    while sha is not None and sha in graph:
        chain.append(sha)
        parents = graph[sha].parents
        sha = parents[0] if parents else None
    seen: set[str] = set()
    result: dict[str, tuple[BranchCommit, ...]] = {}
    for sha in reversed(chain):  # oldest first: "seen" is then everything reachable from P1
        parents = graph[sha].parents
        if len(parents) > 1:
            own = sorted(
                (graph[s] for s in _walk(parents[1:], graph, seen)), key=lambda c: c.committed_at
            )
            result[sha] = tuple(own[:MAX_COMMITS])
        _walk((sha,), graph, seen)
    return result


class MergeCommits:
    """Lookup of a merge's own commits, one ``git log`` per chunk of first-parent history."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._cache: dict[str, tuple[BranchCommit, ...]] = {}

    def of(self, merge_sha: str) -> tuple[BranchCommit, ...] | None:
        """The merge's commits, oldest first; None when they cannot be told (see the limits)."""
        if merge_sha not in self._cache:
            self._cache = self._load(merge_sha)
        return self._cache.get(merge_sha)

    def _load(self, tip: str) -> dict[str, tuple[BranchCommit, ...]]:
        args = ["log", f"--format={_FORMAT}", f"--max-count={MAX_HEADERS + 1}", "--encoding=UTF-8"]
        code, out, _ = runner.run(self._path, *args, tip, "--not", f"{tip}~{CHUNK}", check=False)
        if code != 0:  # fewer than CHUNK first-parent ancestors: the chunk reaches the root
            _, out, _ = runner.run(self._path, *args, tip)
        graph = parse_headers(out)
        if len(graph) > MAX_HEADERS:
            return {}
        return attribute(tip, graph)

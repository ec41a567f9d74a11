"""Read merged PRs from a local clone: first-parent history of a branch → ``PullRequest``.

One ``git log --first-parent -p`` process streams the whole window; commits are parsed and
turned into records one at a time (a generator), so memory stays flat however long the
history. A true merge's diff is taken against its first parent (``--diff-merges=first-parent``),
which is exactly the merged range; its own commits come from :mod:`.merges` (one more
``git log`` per chunk of history, only when merges occur).

What a git-sourced record knows: number, title, body, author (see :mod:`.message`), merge
time (the committer date: GitHub commits the squash or merge when the PR is merged), files
with status, renames, binary flag, counts and patches, and the commit(s). What it does not:
reviews, review threads, comments, checks, linked issues and labels stay ``None`` (unknown),
so the coverage level says the discussion is unknown. ``created_at``/``updated_at`` are
unknown too.

``commits``: for a squash merge, the squash commit once per author (the commit author, then each
distinct ``Signed-off-by``/``Co-authored-by`` person), because git records co-authors only as
trailers and a record has a single ``author``; for a true merge, the merged commits themselves
(with their own authors), then the merge commit once per trailer person not already listed.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from prdigest.core.errors import ConfigError, SourceError
from prdigest.core.names import check_repo
from prdigest.core.records import SCHEMA_ID, Commit, FileChange, PullRequest
from prdigest.sources.base import Skipped
from prdigest.sources.git import runner
from prdigest.sources.git.logparse import LOG_FORMAT, RawCommit, parse_log
from prdigest.sources.git.merges import BranchCommit, MergeCommits
from prdigest.sources.git.message import (
    Person,
    PRMessage,
    authors,
    head_owner_and_branch,
    parse_message,
)
from prdigest.sources.gitdiff import FileDiff

# Fixed diff options: GitHub's three lines of context, renames found, no drivers or textconv.
_DIFF_OPTIONS = (
    "--first-parent",
    "--diff-merges=first-parent",
    "-p",
    "-M",
    "-U3",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--no-relative",
    "--submodule=short",
    "--inter-hunk-context=0",
    "--encoding=UTF-8",
    f"--format={LOG_FORMAT}",
)


@dataclass(frozen=True, slots=True)
class Branch:
    ref: str  # what git is asked for, e.g. "origin/main" or "main"
    name: str  # the base branch of the PRs, e.g. "main"


def resolve_branch(path: Path, branch: str | None) -> Branch:
    """The branch to read: the one asked for, else the remote's default, else ``HEAD``.

    ``origin/HEAD`` names the default branch of the repository the clone came from, which is
    where PRs are merged even when the working copy has another branch checked out.
    """
    runner.check_repository(path)
    ref = branch
    if ref is None:
        code, out, _ = runner.run(
            path, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD", check=False
        )
        ref = out.decode(errors="replace").strip() if code == 0 and out.strip() else "HEAD"
    code, _, _ = runner.run(
        path,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{ref}^{{commit}}",
        check=False,
    )
    if code != 0:
        if branch is None:
            raise ConfigError(f"{path} has no commits yet", key="--git")
        raise ConfigError(f"unknown branch {branch!r} in {path}", key="--branch")
    name = ref
    if ref == "HEAD":
        code, out, _ = runner.run(path, "symbolic-ref", "-q", "--short", "HEAD", check=False)
        name = out.decode(errors="replace").strip() if code == 0 else "HEAD"
    return Branch(ref=ref, name=name.removeprefix("origin/"))


def _window_args(path: Path, since: datetime | None, until: datetime | None) -> list[str]:
    args = []
    if since is not None:
        # Plain --since stops at the first older commit; with committer dates out of order
        # (rebased direct pushes) that would hide part of the window. --since-as-filter
        # (git 2.37+) looks at every commit instead; headers only, so it stays cheap.
        option = "--since-as-filter" if runner.version(path) >= (2, 37) else "--since"
        args.append(f"{option}={since.isoformat()}")
    if until is not None:
        args.append(f"--until={until.isoformat()}")
    return args


def count_commits(
    path: Path, branch: Branch, since: datetime | None = None, until: datetime | None = None
) -> int:
    """First-parent commits of the window (cheap: no diffs), for a progress total."""
    _, out, _ = runner.run(
        path,
        "rev-list",
        "--count",
        "--first-parent",
        *_window_args(path, since, until),
        branch.ref,
        "--",
    )
    return int(out.strip() or 0)


def newest_commit_at(path: Path, branch: Branch) -> datetime | None:
    """Committer date of the branch tip: tells a user whose window is empty how old the clone is."""
    _, out, _ = runner.run(path, "log", "-1", "--format=%cI", branch.ref, "--")
    text = out.decode().strip()
    return datetime.fromisoformat(text) if text else None


def _shallow_boundaries(path: Path) -> frozenset[str]:
    """Commits where a shallow clone's history is cut: their diff would be the whole tree."""
    _, out, _ = runner.run(path, "rev-parse", "--git-path", "shallow")
    shallow = path / out.decode().strip()  # relative to the directory git ran in, if not absolute
    try:
        return frozenset(shallow.read_text().split())
    except FileNotFoundError:
        return frozenset()


def _file_change(raw: FileDiff) -> FileChange:
    return FileChange(
        path=raw.path,
        previous_path=raw.previous_path,
        status=raw.status,
        additions=raw.additions,
        deletions=raw.deletions,
        binary=raw.binary,
        patch=raw.patch,
    )


def _squash_commits(commit: RawCommit, names: list[str]) -> tuple[Commit, ...]:
    subject = commit.message.split("\n", 1)[0]
    return tuple(
        Commit(sha=commit.sha, message=subject, author=name, committed_at=commit.committed_at)
        for name in names
    )


def _merge_parts(
    commit: RawCommit, message: PRMessage, repo: str, own: tuple[BranchCommit, ...] | None
) -> tuple[str | None, tuple[Commit, ...]]:
    """Author and commit list of a true merge (see the module docstring)."""
    owner, _ = head_owner_and_branch(message.head)
    listed = [
        Commit(
            sha=c.sha,
            message=c.message,
            committed_at=c.committed_at,
            author=Person(c.author_name, c.author_email).identity,
        )
        for c in own or ()
    ]
    if owner and owner.lower() != repo.split("/")[0].lower():
        author: str | None = owner  # "from alice/branch": alice's fork, alice's PR
    else:
        author = listed[0].author if listed else None
    known = {c.author.lower() for c in listed if c.author}
    extra = [name for name in authors(Person("", ""), message.people) if name.lower() not in known]
    subject = commit.message.split("\n", 1)[0]
    listed += [
        Commit(sha=commit.sha, message=subject, author=name, committed_at=commit.committed_at)
        for name in extra
    ]
    return author, tuple(listed)


def to_record(
    commit: RawCommit, repo: str, branch: Branch, merges: MergeCommits
) -> PullRequest | Skipped:
    """The PR a first-parent commit stands for, or why it is skipped."""
    message = parse_message(commit.message)
    subject = commit.message.split("\n", 1)[0]
    if message is None:
        return Skipped(commit.sha, subject, "no PR number in the subject")
    is_merge = len(commit.parents) > 1
    head_ref = head_owner_and_branch(message.head)[1] if message.merge else None
    if is_merge:
        author, commits = _merge_parts(commit, message, repo, merges.of(commit.sha))
    else:
        names = authors(Person(commit.author_name, commit.author_email), message.people)
        author, commits = (names[0] if names else None), _squash_commits(commit, names)
    try:
        record = PullRequest(
            schema_id=SCHEMA_ID,
            repo=repo,
            number=message.number,
            url=f"https://github.com/{repo}/pull/{message.number}",
            title=message.title,
            author=author,
            body=message.body,
            state="merged",
            base_ref=branch.name,
            head_ref=head_ref,
            head_sha=commit.parents[1] if is_merge else None,
            merge_commit_sha=commit.sha,
            merged_at=commit.committed_at,
            additions=commit.additions,
            deletions=commit.deletions,
            changed_files=commit.changed_files,
            files=tuple(_file_change(f) for f in commit.files),
            commits=commits,
            source="git",
        )
    except ValidationError as exc:  # e.g. a path git allows and the record does not
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        return Skipped(commit.sha, subject, f"invalid record ({where}: {problem['msg']})")
    return record


def read_prs(
    path: Path,
    repo: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    branch: str | None = None,
) -> Generator[PullRequest | Skipped, None, None]:
    """PRs merged into the branch in [since, until), newest first, as a stream.

    ``None`` bounds read the whole history. Commits that are not PRs come out as
    :class:`Skipped` so the caller can count them. A bad path, repository name or branch
    raises :class:`ConfigError` here, before anything is read.
    """
    check_repo(repo)
    target = resolve_branch(path, branch)
    items = read_branch(path, repo, target, since=since, until=until)
    return (item for item in items if not isinstance(item, Stored))  # none without ``known``


@dataclass(frozen=True, slots=True)
class Stored:
    """A commit of the window whose PR the store already holds: its diff was not read."""

    sha: str
    number: int


# merge commit shas → PR numbers of those the store already holds
KnownCommits = Callable[[Sequence[str]], Mapping[str, int]]


def list_commits(
    path: Path, target: Branch, since: datetime | None, until: datetime | None
) -> list[tuple[str, datetime]]:
    """(sha, committer date) of the window's first-parent commits, newest first: headers only,
    cheap next to the diffs."""
    args = ["--first-parent", "--format=%H %cI", *_window_args(path, since, until)]
    _, out, _ = runner.run(path, "log", *args, target.ref, "--")
    listed = []
    for line in out.decode().split("\n"):
        sha, _, date = line.partition(" ")
        if sha and date:
            listed.append((sha, datetime.fromisoformat(date)))
    return listed


def _in_window(moment: datetime, since: datetime | None, until: datetime | None) -> bool:
    # git's --until is inclusive and its --since relies on ordered dates: be exact here
    return (until is None or moment < until) and (since is None or moment >= since)


def _commits(
    path: Path,
    target: Branch,
    since: datetime | None,
    until: datetime | None,
    known: KnownCommits | None,
) -> Iterator[RawCommit | Stored]:
    """The window's commits with their diffs, except those ``known`` says are stored (which
    come out as :class:`Stored`, in their place, without their diff ever being read)."""
    if known is None:
        args = [*_DIFF_OPTIONS, *_window_args(path, since, until), target.ref, "--"]
        with runner.stream(path, "log", *args) as readline:
            yield from parse_log(readline)
        return
    listed = [
        (sha, at)
        for sha, at in list_commits(path, target, since, until)
        if _in_window(at, since, until)
    ]
    stored = known([sha for sha, _ in listed])
    wanted = [sha for sha, _ in listed if sha not in stored]
    if not wanted:
        yield from (Stored(sha, stored[sha]) for sha, _ in listed)
        return
    given = "".join(f"{sha}\n" for sha in wanted).encode()
    args = [*_DIFF_OPTIONS, "--no-walk=unsorted", "--stdin"]
    with runner.stream(path, "log", *args, stdin=given) as readline:
        parsed = parse_log(readline)
        for sha, _ in listed:
            if sha in stored:
                yield Stored(sha, stored[sha])
                continue
            commit = next(parsed, None)
            if commit is None or commit.sha != sha:
                raise SourceError(f"git log did not show commit {sha[:10]} in the order asked")
            yield commit


def read_branch(
    path: Path,
    repo: str,
    target: Branch,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    known: KnownCommits | None = None,
) -> Generator[PullRequest | Skipped | Stored, None, None]:
    """:func:`read_prs` for an already resolved branch; with ``known``, the commits whose PR
    is stored already are listed first and their diffs never read (:class:`Stored`)."""
    shallow = _shallow_boundaries(path)
    merges = MergeCommits(path)
    seen: set[int] = set()
    for commit in _commits(path, target, since, until, known):
        if isinstance(commit, Stored):
            seen.add(commit.number)  # the newer commit of a number stands, stored or not
            yield commit
            continue
        if True:
            if not _in_window(commit.committed_at, since, until):
                continue
            if commit.sha in shallow:
                subject = commit.message.split("\n", 1)[0]
                yield Skipped(commit.sha, subject, "history cut by a shallow clone")
                continue
            item = to_record(commit, repo, target, merges)
            if isinstance(item, PullRequest) and item.number in seen:
                # the same "(#N)" again, e.g. a cherry-pick applied twice: the newer one stands
                subject = commit.message.split("\n", 1)[0]
                item = Skipped(
                    commit.sha, subject, f"PR #{item.number} already read from a newer commit"
                )
            elif isinstance(item, PullRequest):
                seen.add(item.number)
            yield item

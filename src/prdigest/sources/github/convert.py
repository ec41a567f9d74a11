"""GitHub's GraphQL and REST JSON → ``prdigest.pr/v1`` records (pure functions).

GraphQL gives everything but the patch text; :class:`FileText` (from the ``.diff`` via
:mod:`.diff`, or from REST ``/files``) adds, per path, the hunks, the binary flag and the old
path of a rename. Decisions where GitHub and the record differ:

* ``author_type`` is the GraphQL ``__typename`` of the actor (``Bot`` for apps such as
  ``github-actions``); a deleted account ("ghost") has no author: ``author=None``.
* A commit's ``author`` is the GitHub login linked to the git author; a commit whose author
  e-mail belongs to no account has ``author=None`` (the git name is not a login).
* ``committed_at`` is the commit's ``committedDate``.
* A review thread's ``diff_hunk`` is the hunk of its first comment, as GitHub shows it.
* A ``CheckRun`` keeps its status and conclusion. A legacy ``StatusContext`` (Buildkite, Read
  the Docs …) becomes a check named by its context: ``SUCCESS``/``FAILURE``/``ERROR`` are
  ``COMPLETED`` with that conclusion; ``PENDING``/``EXPECTED`` keep the state as status and have
  no conclusion yet.
* No head-commit status at all (``statusCheckRollup: null``) means ``checks=()``: known empty.
* From REST ``/files``, ``binary`` is inferred: no ``patch`` and no changed lines in a file
  that was not just renamed or copied. (An empty file added without content looks the same;
  ``/files`` cannot tell them apart.)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prdigest.core.errors import UpstreamError
from prdigest.core.records import (
    Check,
    Comment,
    Commit,
    FileChange,
    FileStatus,
    LinkedIssue,
    PullRequest,
    Review,
    ReviewThread,
    parse_record,
)
from prdigest.sources.gitdiff import FileDiff

log = logging.getLogger(__name__)

ACTOR_TYPES = frozenset({"User", "Bot", "Organization", "Mannequin", "EnterpriseUserAccount"})
CHANGE_TYPES: dict[str, FileStatus] = {
    "ADDED": "added",
    "DELETED": "removed",
    "MODIFIED": "modified",
    "CHANGED": "modified",  # a type/mode change
    "RENAMED": "renamed",
    "COPIED": "copied",
}
REST_STATUSES: dict[str, FileStatus] = {
    "added": "added",
    "removed": "removed",
    "modified": "modified",
    "renamed": "renamed",
    "copied": "copied",
    "changed": "modified",
    "unchanged": "modified",
}
PR_STATES = {"MERGED": "merged", "CLOSED": "closed", "OPEN": "open"}
TERMINAL_STATUS_STATES = frozenset({"SUCCESS", "FAILURE", "ERROR"})


@dataclass(frozen=True, slots=True)
class FileText:
    """What the diff tells about one file beyond GraphQL's path and counts."""

    previous_path: str | None
    binary: bool
    patch: str | None


def file_texts_from_diff(files: tuple[FileDiff, ...]) -> dict[str, FileText]:
    return {f.path: FileText(f.previous_path, f.binary, f.patch) for f in files}


def file_texts_from_rest(items: list[Any]) -> dict[str, FileText]:
    """``GET /pulls/N/files`` items → path → :class:`FileText`."""
    texts: dict[str, FileText] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("filename"), str):
            raise UpstreamError("GitHub /files answered an item without a filename")
        status = REST_STATUSES.get(str(item.get("status")), "modified")
        patch = item.get("patch") if isinstance(item.get("patch"), str) else None
        changed = int(item.get("additions") or 0) + int(item.get("deletions") or 0)
        binary = patch is None and changed == 0 and status not in ("renamed", "copied")
        previous = item.get("previous_filename") if status in ("renamed", "copied") else None
        texts[item["filename"]] = FileText(previous, binary, patch)
    return texts


def _nodes(connection: Any) -> list[dict[str, Any]]:
    if not isinstance(connection, dict):
        return []
    return [node for node in connection.get("nodes") or [] if isinstance(node, dict)]


def _actor(raw: Any) -> tuple[str | None, str]:
    """(login, actor type) of an ``author`` object; ``(None, "User")`` for a deleted account."""
    if not isinstance(raw, dict):
        return None, "User"
    kind = raw.get("__typename")
    if kind not in ACTOR_TYPES:
        log.debug("unknown actor type %r counted as User", kind)
        kind = "User"
    return raw.get("login"), str(kind)


def _comment(raw: dict[str, Any]) -> Comment:
    author, kind = _actor(raw.get("author"))
    return Comment(
        author=author,
        author_type=kind,
        body=raw.get("body") or "",
        created_at=raw.get("createdAt"),
    )


def _files(raw: dict[str, Any], texts: Mapping[str, FileText] | None) -> tuple[FileChange, ...]:
    files = []
    for node in _nodes(raw.get("files")):
        status = CHANGE_TYPES.get(str(node.get("changeType")), "modified")
        text = (texts or {}).get(node["path"])
        files.append(
            FileChange(
                path=node["path"],
                previous_path=text.previous_path
                if text and status in ("renamed", "copied")
                else None,
                status=status,
                additions=node.get("additions") or 0,
                deletions=node.get("deletions") or 0,
                binary=text.binary if text else False,
                patch=text.patch if text else None,
            )
        )
    return tuple(files)


def _commits(raw: dict[str, Any]) -> tuple[Commit, ...]:
    commits = []
    for node in _nodes(raw.get("commits")):
        commit = node.get("commit") or {}
        user = (commit.get("author") or {}).get("user") or {}
        commits.append(
            Commit(
                sha=commit["oid"],
                message=commit.get("message") or "",
                author=user.get("login"),
                committed_at=commit.get("committedDate"),
            )
        )
    return tuple(commits)


def _reviews(raw: dict[str, Any]) -> tuple[Review, ...]:
    reviews = []
    for node in _nodes(raw.get("reviews")):
        author, kind = _actor(node.get("author"))
        reviews.append(
            Review(
                author=author,
                author_type=kind,
                state=node["state"],
                body=node.get("body") or "",
                submitted_at=node.get("submittedAt"),
            )
        )
    return tuple(reviews)


def _threads(raw: dict[str, Any]) -> tuple[ReviewThread, ...]:
    threads = []
    for node in _nodes(raw.get("reviewThreads")):
        comments = _nodes(node.get("comments"))
        threads.append(
            ReviewThread(
                path=node.get("path"),
                line=node.get("line"),
                is_resolved=bool(node.get("isResolved")),
                is_outdated=bool(node.get("isOutdated")),
                diff_hunk=comments[0].get("diffHunk") if comments else None,
                comments=tuple(_comment(c) for c in comments),
            )
        )
    return tuple(threads)


def _issues(raw: dict[str, Any]) -> tuple[LinkedIssue, ...]:
    return tuple(
        LinkedIssue(
            number=node["number"],
            title=node.get("title") or "",
            state=node.get("state"),
            url=node.get("url"),
            body=node.get("body"),
        )
        for node in _nodes(raw.get("closingIssuesReferences"))
    )


def _check(node: dict[str, Any]) -> Check:
    if node.get("__typename") == "StatusContext":
        state = str(node.get("state"))
        terminal = state in TERMINAL_STATUS_STATES
        return Check(
            name=node["context"],
            status="COMPLETED" if terminal else state,
            conclusion=state if terminal else None,
        )
    return Check(name=node["name"], status=node.get("status"), conclusion=node.get("conclusion"))


def _checks(raw: dict[str, Any]) -> tuple[Check, ...]:
    rollup = raw.get("statusCheckRollup")
    if not isinstance(rollup, dict):
        return ()
    return tuple(_check(node) for node in _nodes(rollup.get("contexts")))


def record_from_graphql(
    repo: str, raw: dict[str, Any], texts: Mapping[str, FileText] | None
) -> PullRequest:
    """The record of one PR from its (fully paginated) GraphQL data and its files' text.

    ``texts=None`` means the patch text is unknown: files keep ``patch=None``.
    """
    author, _ = _actor(raw.get("author"))
    merge_commit = raw.get("mergeCommit") or {}
    return parse_record(
        {
            "schema": "prdigest.pr/v1",
            "repo": repo,
            "number": raw["number"],
            "url": raw.get("url"),
            "title": raw["title"],
            "author": author,
            "body": raw.get("body"),
            "state": PR_STATES.get(str(raw.get("state")), "merged"),
            "draft": bool(raw.get("isDraft")),
            "base_ref": raw.get("baseRefName"),
            "head_ref": raw.get("headRefName"),
            "head_sha": raw.get("headRefOid"),
            "merge_commit_sha": merge_commit.get("oid"),
            "created_at": raw.get("createdAt"),
            "updated_at": raw.get("updatedAt"),
            "merged_at": raw.get("mergedAt"),
            "labels": tuple(node["name"] for node in _nodes(raw.get("labels"))),
            "additions": raw.get("additions"),
            "deletions": raw.get("deletions"),
            "changed_files": raw.get("changedFiles"),
            "files": _files(raw, texts),
            "commits": _commits(raw),
            "reviews": _reviews(raw),
            "review_threads": _threads(raw),
            "comments": tuple(_comment(c) for c in _nodes(raw.get("comments"))),
            "linked_issues": _issues(raw),
            "checks": _checks(raw),
            "source": "github",
        }
    )


def file_texts_from_record(record: PullRequest) -> dict[str, FileText]:
    """The patch information a stored record already has (reused when the diff is unchanged)."""
    return {f.path: FileText(f.previous_path, f.binary, f.patch) for f in record.files or ()}

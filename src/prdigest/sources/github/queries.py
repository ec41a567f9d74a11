"""The GraphQL documents the GitHub source sends, built from fixed fragments.

Three shapes, all checked against GitHub's schema by ``tests/test_github_queries.py``:

* :data:`LIST_QUERY`: the PRs merged in a window (``search``, 100 per page, 1 point), plus the
  repository itself so that a wrong name is an error rather than an empty window;
* :func:`detail_query`: full details of a batch of PRs as aliases of ``repository.pullRequest``;
* :func:`pages_query`: further pages of connections that overflowed, any mix of them in one
  request, addressed through ``node(id:)``.

Page sizes follow GitHub's cost rule (one "request" per connection and parent, 100 per
connection at most): the nested ``reviewThreads × comments`` is the only product, so threads come
50 at a time with 20 comments each; everything else asks for 100.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

PAGE = 100
THREAD_PAGE = 50
THREAD_COMMENTS = 20
ISSUE_PAGE = 25

_PAGE_INFO = "totalCount pageInfo { hasNextPage endCursor }"

FRAGMENTS: dict[str, str] = {
    "ActorFields": "fragment ActorFields on Actor { __typename login }",
    "LabelPage": f"fragment LabelPage on LabelConnection {{ {_PAGE_INFO} nodes {{ name }} }}",
    "FilePage": (
        f"fragment FilePage on PullRequestChangedFileConnection {{ {_PAGE_INFO} "
        "nodes { path additions deletions changeType } }"
    ),
    "CommitPage": (
        f"fragment CommitPage on PullRequestCommitConnection {{ {_PAGE_INFO} "
        "nodes { commit { oid message committedDate author { name user { login } } } } }"
    ),
    "ReviewPage": (
        f"fragment ReviewPage on PullRequestReviewConnection {{ {_PAGE_INFO} "
        "nodes { author { ...ActorFields } state body submittedAt } }"
    ),
    "ThreadCommentPage": (
        f"fragment ThreadCommentPage on PullRequestReviewCommentConnection {{ {_PAGE_INFO} "
        "nodes { author { ...ActorFields } body createdAt diffHunk } }"
    ),
    "ThreadPage": (
        f"fragment ThreadPage on PullRequestReviewThreadConnection {{ {_PAGE_INFO} "
        "nodes { id path line isResolved isOutdated "
        f"comments(first: {THREAD_COMMENTS}) {{ ...ThreadCommentPage }} }} }}"
    ),
    "CommentPage": (
        f"fragment CommentPage on IssueCommentConnection {{ {_PAGE_INFO} "
        "nodes { author { ...ActorFields } body createdAt } }"
    ),
    "IssuePage": (
        f"fragment IssuePage on IssueConnection {{ {_PAGE_INFO} "
        "nodes { number title state url body } }"
    ),
    "ContextPage": (
        f"fragment ContextPage on StatusCheckRollupContextConnection {{ {_PAGE_INFO} "
        "nodes { __typename ... on CheckRun { name status conclusion } "
        "... on StatusContext { context state } } }"
    ),
    "PRDetail": (
        "fragment PRDetail on PullRequest { id number title url body state isDraft "
        "createdAt updatedAt mergedAt baseRefName headRefName headRefOid mergeCommit { oid } "
        "author { ...ActorFields } additions deletions changedFiles "
        f"labels(first: {PAGE}) {{ ...LabelPage }} "
        f"files(first: {PAGE}) {{ ...FilePage }} "
        f"commits(first: {PAGE}) {{ ...CommitPage }} "
        f"reviews(first: {PAGE}) {{ ...ReviewPage }} "
        f"reviewThreads(first: {THREAD_PAGE}) {{ ...ThreadPage }} "
        f"comments(first: {PAGE}) {{ ...CommentPage }} "
        f"closingIssuesReferences(first: {ISSUE_PAGE}) {{ ...IssuePage }} "
        f"statusCheckRollup {{ contexts(first: {PAGE}) {{ ...ContextPage }} }} }}"
    ),
}

RATE_LIMIT_FIELDS = "rateLimit { cost limit remaining resetAt }"

LIST_QUERY = (
    "query ListMergedPullRequests($owner: String!, $name: String!, $search: String!, "
    "$after: String) { "
    f"{RATE_LIMIT_FIELDS} "
    "repository(owner: $owner, name: $name) { nameWithOwner } "
    f"search(query: $search, type: ISSUE, first: {PAGE}, after: $after) {{ "
    "issueCount pageInfo { hasNextPage endCursor } "
    "nodes { __typename ... on PullRequest { number updatedAt mergedAt } } } }"
)


class Connection(StrEnum):
    """A paginated part of a PR; the value is the key it has in the PR's GraphQL data."""

    LABELS = "labels"
    FILES = "files"
    COMMITS = "commits"
    REVIEWS = "reviews"
    THREADS = "reviewThreads"
    COMMENTS = "comments"
    ISSUES = "closingIssuesReferences"
    CONTEXTS = "contexts"  # statusCheckRollup.contexts
    THREAD_COMMENTS = "threadComments"  # comments of one review thread (node is the thread)


_PAGE_FRAGMENT = {
    Connection.LABELS: "LabelPage",
    Connection.FILES: "FilePage",
    Connection.COMMITS: "CommitPage",
    Connection.REVIEWS: "ReviewPage",
    Connection.THREADS: "ThreadPage",
    Connection.COMMENTS: "CommentPage",
    Connection.ISSUES: "IssuePage",
    Connection.CONTEXTS: "ContextPage",
    Connection.THREAD_COMMENTS: "ThreadCommentPage",
}


@dataclass(frozen=True, slots=True)
class PageRequest:
    """The next page of one connection: of which node, after which cursor."""

    number: int  # the PR it belongs to
    node_id: str  # the PR's id, or the review thread's id for THREAD_COMMENTS
    connection: Connection
    after: str | None


def _spreads(text: str) -> set[str]:
    return set(re.findall(r"\.\.\.([A-Z]\w*)", text))


def with_fragments(operation: str) -> str:
    """The operation followed by exactly the fragments it uses (GraphQL forbids unused ones)."""
    needed: set[str] = set()
    todo = _spreads(operation)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        todo |= _spreads(FRAGMENTS[name]) - needed
    return "\n".join([operation, *(FRAGMENTS[name] for name in sorted(needed))])


def detail_query(numbers: Sequence[int]) -> str:
    """Details of several PRs in one request; PR ``N`` answers under the alias ``prN``."""
    if not numbers:
        raise ValueError("detail_query needs at least one PR number")
    aliases = " ".join(
        f"pr{int(n)}: pullRequest(number: {int(n)}) {{ ...PRDetail }}" for n in numbers
    )
    operation = (
        "query PullRequestDetails($owner: String!, $name: String!) { "
        f"{RATE_LIMIT_FIELDS} repository(owner: $owner, name: $name) {{ {aliases} }} }}"
    )
    return with_fragments(operation)


def _page_selection(connection: Connection, after_var: str) -> str:
    fragment = _PAGE_FRAGMENT[connection]
    if connection is Connection.THREAD_COMMENTS:
        return (
            f"... on PullRequestReviewThread {{ comments(first: {PAGE}, after: {after_var}) "
            f"{{ ...{fragment} }} }}"
        )
    if connection is Connection.CONTEXTS:
        return (
            f"... on PullRequest {{ statusCheckRollup {{ contexts(first: {PAGE}, "
            f"after: {after_var}) {{ ...{fragment} }} }} }}"
        )
    size = THREAD_PAGE if connection is Connection.THREADS else PAGE
    field = f"{connection.value}(first: {size}, after: {after_var})"
    return f"... on PullRequest {{ {field} {{ ...{fragment} }} }}"


def pages_query(requests: Sequence[PageRequest]) -> tuple[str, dict[str, Any]]:
    """One request for several overflow pages; request ``i`` answers under alias ``m{i}``."""
    if not requests:
        raise ValueError("pages_query needs at least one page request")
    declarations: list[str] = []
    selections: list[str] = []
    variables: dict[str, Any] = {}
    for index, request in enumerate(requests):
        declarations.append(f"$id{index}: ID!, $after{index}: String")
        inner = _page_selection(request.connection, f"$after{index}")
        selections.append(f"m{index}: node(id: $id{index}) {{ {inner} }}")
        variables[f"id{index}"] = request.node_id
        variables[f"after{index}"] = request.after
    header = f"query MorePages({', '.join(declarations)})"
    operation = f"{header} {{ {RATE_LIMIT_FIELDS} {' '.join(selections)} }}"
    return with_fragments(operation), variables


def all_documents(max_batch: int = 25) -> Iterator[tuple[str, str]]:
    """(name, document) for every shape of document the source can send; for schema checks."""
    yield "list", LIST_QUERY
    for size in sorted({1, 2, max_batch}):
        yield f"detail[{size}]", detail_query(list(range(1, size + 1)))
    for connection in Connection:
        document, _ = pages_query([PageRequest(1, "id", connection, "cursor")])
        yield f"pages[{connection.value}]", document
    mixed = [PageRequest(1, f"id{i}", c, None) for i, c in enumerate(Connection)]
    yield "pages[all]", pages_query(mixed)[0]

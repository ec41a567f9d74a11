"""The GitHub source: a window of merged PRs → ``prdigest.pr/v1`` records, at ~1 request per PR.

Modules: :mod:`.client` (HTTP, retries, rate limits), :mod:`.limits` (what a response means),
:mod:`.queries` (the GraphQL documents), :mod:`.convert` (JSON → records), :mod:`.diff`
(``.diff`` → per-file hunks), :mod:`.source` (listing, batching, checkpoints).

Why plain ``httpx`` and not ``githubkit``: the source needs three REST calls (``.diff``,
``/files`` and its ``link`` pages) and hand-written GraphQL documents, so githubkit's generated
models would add a large dependency for none of the calls we make; and the behaviour this source
is judged on (which retries, how long to wait on which limit, when to stop and say when to
resume, counting every request, ETags against our own store) is policy we must own and test
either way. ``httpx`` is already a dependency, takes an injected client/transport for tests and
has per-request timeouts. The cost of the choice is the small request loop in :mod:`.client`.
"""

from __future__ import annotations

from prdigest.sources.github.client import (
    Endpoints,
    GitHubClient,
    RetryPolicy,
    Token,
    derive_graphql_url,
)
from prdigest.sources.github.source import GitHubDetails, GitHubSource

__all__ = [
    "Endpoints",
    "GitHubClient",
    "GitHubDetails",
    "GitHubSource",
    "RetryPolicy",
    "Token",
    "derive_graphql_url",
]

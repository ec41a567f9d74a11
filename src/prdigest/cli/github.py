"""GitHub commands: ``sync`` (fetch a window into the store) and ``run`` (sync, then digest).

The token comes from ``GITHUB_TOKEN`` or ``GH_TOKEN`` only (never an option, so it stays out of
shell history and process lists); the API base from ``--api-url`` / ``GITHUB_API_URL`` and the
GraphQL endpoint from ``--graphql-url`` / ``GITHUB_GRAPHQL_URL`` or derived from the base.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import httpx

from prdigest.cli import (
    opened,
    progress_bar,
)
from prdigest.core.errors import AuthError, ConfigError
from prdigest.core.models import Window
from prdigest.core.records import REPO_PATTERN
from prdigest.sources.github import (
    Endpoints,
    GitHubClient,
    RetryPolicy,
    SyncResult,
    Token,
    sync_window,
)

F = TypeVar("F", bound=Callable[..., Any])
TOKEN_VARIABLES = ("GITHUB_TOKEN", "GH_TOKEN")


def github_options(func: F) -> F:
    options = [
        click.option(
            "--api-url",
            envvar="GITHUB_API_URL",
            default=None,
            help="REST API base (GHES: https://HOST/api/v3). Default: $GITHUB_API_URL, "
            "else https://api.github.com.",
        ),
        click.option(
            "--graphql-url",
            envvar="GITHUB_GRAPHQL_URL",
            default=None,
            help="GraphQL endpoint. Default: $GITHUB_GRAPHQL_URL, else derived from --api-url.",
        ),
        click.option(
            "--batch-size",
            default=25,
            show_default=True,
            type=click.IntRange(1, 50),
            help="PRs per GraphQL detail request.",
        ),
        click.option(
            "--max-wait",
            default=900,
            show_default=True,
            type=click.IntRange(0),
            help="Longest wait (s) for a rate limit to reset before stopping.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def github_token() -> Token:
    for name in TOKEN_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return Token(value)
    raise AuthError(
        "no GitHub token: set GITHUB_TOKEN (or GH_TOKEN) to a token that can read the repository"
    )


def sync_github(
    repo: str,
    window: Window,
    db: Path | None,
    api_url: str | None,
    graphql_url: str | None,
    batch_size: int,
    max_wait: int,
) -> SyncResult:
    """Run one sync and return its result; a stop after the listing is raised after the summary."""
    if not REPO_PATTERN.match(repo):
        raise ConfigError(f"expected owner/name, got {repo!r}", key="--repo")
    token, endpoints = github_token(), Endpoints.from_urls(api_url, graphql_url)
    with (
        httpx.Client(follow_redirects=True) as http,
        opened(db) as store,
        progress_bar("sync") as progress,
    ):
        client = GitHubClient(http, token, endpoints, policy=RetryPolicy(max_wait=max_wait))
        result = sync_window(
            store,
            client,
            repo,
            window.since,
            window.until,
            batch_size=batch_size,
            progress=progress,
        )
    click.echo(f"synced {result.summary()}", err=True)
    if result.stopped is not None:
        raise result.stopped
    return result

"""Options of the GitHub source for ``sync`` and ``run``.

The token comes from ``GITHUB_TOKEN`` or ``GH_TOKEN`` only (never an option, so it stays out of
shell history and process lists); the API base from ``--api-url`` / ``GITHUB_API_URL`` and the
GraphQL endpoint from ``--graphql-url`` / ``GITHUB_GRAPHQL_URL`` or derived from the base
(:mod:`prdigest.pipeline.credentials`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


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

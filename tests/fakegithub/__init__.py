"""A fake GitHub for the tests and the benchmark (see :mod:`.server`), and helpers to use it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from prdigest.sources.github import Endpoints, GitHubClient, RetryPolicy, Token

from .data import REPO, WINDOW_END, WINDOW_START, load_fixtures, window_records
from .server import FakeClock, FakeGitHub, Fault, github_schema

__all__ = [
    "REPO",
    "WINDOW_END",
    "WINDOW_START",
    "FakeClock",
    "FakeGitHub",
    "Fault",
    "client_for",
    "github_schema",
    "load_fixtures",
    "window_records",
]


@contextmanager
def client_for(fake: FakeGitHub, token: str | None = None, **policy: Any) -> Iterator[GitHubClient]:
    """A real client talking to ``fake`` over loopback, sleeping on the fake's clock."""
    options = {"timeout": 60.0, **policy}  # a loaded machine never reaches it
    endpoints = Endpoints.from_urls(fake.url, fake.graphql_url)
    with httpx.Client() as http:
        yield GitHubClient(
            http,
            Token(token or fake.token),
            endpoints,
            policy=RetryPolicy(**options),
            sleep=fake.clock.sleep,
            clock=fake.clock.time,
        )

"""Sources and writers by name: what ``source = …`` / ``writer = …`` in ``prdigest.toml`` and
the commands' options turn into.

A source entry opens a :class:`~prdigest.sources.base.Source` for a :class:`SourceSpec` (with the
environment the CLI hands in, for credentials, and the store, for a source that keeps
checkpoints); a writer entry makes a :class:`~prdigest.write.Writer`. Adding a source or a writer
is one module and one line in :data:`SOURCES` or :data:`WRITERS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prdigest.core.errors import ConfigError
from prdigest.core.models import Window
from prdigest.pipeline.credentials import (
    Environment,
    github_endpoints,
    github_token,
    llm_settings,
)
from prdigest.sources.base import Progress, Source, SyncReport, sync
from prdigest.sources.jsonl import JsonlSource
from prdigest.store import Store
from prdigest.write import Writer
from prdigest.write.template import TemplateWriter


@dataclass(frozen=True)
class SourceSpec:
    """Where one repository's PRs come from (a config entry, or a command's options)."""

    repo: str
    source: str
    path: Path | None = None  # the JSONL file, or the clone
    branch: str | None = None  # git: default the clone's origin/HEAD
    fetch: bool = False  # git: `git fetch` before reading
    only_repo: bool = True  # jsonl: skip records of other repositories
    api_url: str | None = None  # github
    graphql_url: str | None = None
    batch_size: int = 25
    max_wait: int = 900


@dataclass(frozen=True)
class WriterSpec:
    """How a repository's entries are written."""

    writer: str = "template"
    model: str | None = None  # llm: overrides PRDIGEST_LLM_MODEL
    style: Path | None = None  # llm: reference digest for style examples
    budget_tokens: int | None = None
    max_cost_tokens: int | None = None
    llm: Mapping[str, Any] = field(default_factory=dict)  # the config's [llm] table


OpenSource = Callable[
    [SourceSpec, Environment, Store, Progress | None], AbstractContextManager[Source]
]


@dataclass(frozen=True)
class SourceEntry:
    open: OpenSource
    path: str | None = None  # what ``path`` must name when the source needs one


def _needs_path(spec: SourceSpec) -> Path:
    if spec.path is None:
        raise ConfigError(f"source {spec.source!r} needs 'path'", key="path")
    return spec.path


@contextmanager
def _jsonl(
    spec: SourceSpec, env: Environment, store: Store, progress: Progress | None
) -> Iterator[Source]:
    yield JsonlSource(_needs_path(spec), only=spec.repo if spec.only_repo else None)


@contextmanager
def _git(
    spec: SourceSpec, env: Environment, store: Store, progress: Progress | None
) -> Iterator[Source]:
    from prdigest.sources.git import GitSource  # each source loads when it is used

    def known(shas: Sequence[str]) -> Mapping[str, int]:
        return store.records.stored_merge_commits(spec.repo, shas)

    yield GitSource(
        _needs_path(spec),
        spec.repo,
        branch=spec.branch,
        progress=progress,
        fetch=spec.fetch,
        environment=dict(env),
        known=known,
    )


@contextmanager
def _github(
    spec: SourceSpec, env: Environment, store: Store, progress: Progress | None
) -> Iterator[Source]:
    import httpx

    from prdigest.sources.github import GitHubClient, GitHubSource, RetryPolicy

    token = github_token(env)
    endpoints = github_endpoints(env, spec.api_url, spec.graphql_url)
    with httpx.Client(follow_redirects=True) as http:
        client = GitHubClient(http, token, endpoints, policy=RetryPolicy(max_wait=spec.max_wait))
        yield GitHubSource(
            client,
            spec.repo,
            store.checkpoints,
            store.records,
            batch_size=spec.batch_size,
            progress=progress,
        )


# Registry: one line per source.
SOURCES: dict[str, SourceEntry] = {
    "jsonl": SourceEntry(_jsonl, path="a JSONL file"),
    "github": SourceEntry(_github),
    "git": SourceEntry(_git, path="a local clone"),
}


def open_source(
    spec: SourceSpec, env: Environment, store: Store, progress: Progress | None = None
) -> AbstractContextManager[Source]:
    entry = SOURCES.get(spec.source)
    if entry is None:
        raise ConfigError(f"unknown source {spec.source!r} (known: {', '.join(SOURCES)})")
    return entry.open(spec, env, store, progress)


def _template(spec: WriterSpec, env: Environment) -> Writer:
    return TemplateWriter()


def _llm(spec: WriterSpec, env: Environment) -> Writer:
    from prdigest.write.llm import LLMWriter  # loads the model client only when asked for
    from prdigest.write.llm.style import load_reference

    settings = llm_settings(
        env,
        spec.llm,
        model=spec.model,
        budget_tokens=spec.budget_tokens,
        max_cost_tokens=spec.max_cost_tokens,
    )
    return LLMWriter(settings, style=load_reference(spec.style) if spec.style else None)


# Registry: one line per writer.
WRITERS: dict[str, Callable[[WriterSpec, Environment], Writer]] = {
    "template": _template,
    "llm": _llm,
}


def make_writer(spec: WriterSpec, env: Environment) -> Writer:
    factory = WRITERS.get(spec.writer)
    if factory is None:
        raise ConfigError(f"unknown writer {spec.writer!r} (known: {', '.join(WRITERS)})")
    return factory(spec, env)


def sync_repo(
    store: Store,
    spec: SourceSpec,
    window: Window | None,
    env: Environment,
    progress: Progress | None = None,
) -> SyncReport:
    """Store the PRs of ``spec``'s repository merged in ``window`` (the one sync loop)."""
    with open_source(spec, env, store, progress) as source:
        return sync(source, store.records, window)

"""Options of the git source for ``sync --git`` and ``run --git``: a local clone only, no token,
no network."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def git_options(func: F) -> F:
    options = [
        click.option(
            "--git",
            "git_path",
            default=None,
            type=click.Path(file_okay=False, path_type=Path),
            help="Read the PRs from this local clone instead of GitHub (no token needed).",
        ),
        click.option(
            "--branch",
            help="With --git: branch whose first-parent history is read "
            "(default: the clone's origin/HEAD, else HEAD).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func

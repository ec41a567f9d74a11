"""Command-line interface: the only package that prints, reads the environment or exits.

This module holds the click group, the options shared by commands and :func:`main`; command
modules (``core``, and one per source or output added later) register their commands on
:data:`cli`. Each command parses its options, calls one library function and formats the
result. Errors raised by the library (:class:`~prdigest.core.errors.PrdigestError`) become one
``Error: …`` line on stderr and the error's exit code; anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from prdigest.core.errors import ConfigError, PrdigestError
from prdigest.core.names import check_repo
from prdigest.core.version import __version__

if TYPE_CHECKING:
    from prdigest.core.models import Window
    from prdigest.store import Store

F = TypeVar("F", bound=Callable[..., Any])
PROGRESS_MIN_PRS = 20  # below this a run is instant and a bar would only flicker


def checked_repo(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Click callback of every ``--repo``: ``owner/name`` by GitHub's rules, else exit 2."""
    return None if value is None else check_repo(value)


def default_db() -> Path:
    """``$PRDIGEST_DB`` or ``prdigest.sqlite3`` in the user's data directory."""
    from platformdirs import user_data_dir

    env = os.environ.get("PRDIGEST_DB")
    return Path(env) if env else Path(user_data_dir("prdigest")) / "prdigest.sqlite3"


def db_option(func: F) -> F:
    return click.option(
        "--db",
        "db",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="SQLite file (or SQLAlchemy URL via PRDIGEST_DB). Default: user data dir.",
    )(func)


def window_options(func: F) -> F:
    from prdigest.core.window import DEFAULT_TZ

    options = [
        click.option(
            "--repo", required=True, callback=checked_repo, help="Repository as owner/name."
        ),
        click.option("--date", "day", help="A local calendar day, e.g. 2026-06-10."),
        click.option("--since", help="Window start (ISO-8601; local time if no offset)."),
        click.option("--until", help="Window end, exclusive."),
        click.option(
            "--tz", default=DEFAULT_TZ, show_default=True, help="Time zone of the window."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def digest_options(func: F) -> F:
    from prdigest.core.locale import DEFAULT_LANG, available
    from prdigest.render import RENDERERS

    options = [
        click.option(
            "--top",
            default=8,
            show_default=True,
            type=click.IntRange(0, 200),
            help="How many PRs get a paragraph.",
        ),
        click.option(
            "--format",
            "fmt",
            default="text",
            show_default=True,
            type=click.Choice(sorted(RENDERERS)),
            help="Output format.",
        ),
        click.option(
            "--lang",
            default=DEFAULT_LANG,
            show_default=True,
            type=click.Choice(available()),
            help="Language of titles and paragraphs.",
        ),
        click.option(
            "--out",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write to this file instead of stdout.",
        ),
        click.option(
            "--preset",
            "preset_path",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Repository preset TOML (default: bundled for the repo, else generic).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def as_lang(value: str) -> str:
    """The ``--lang`` choice (click has already checked it against the registered locales)."""
    return value


def make_window(day: str | None, since: str | None, until: str | None, tz: str) -> Window:
    from prdigest.core.window import day_window, range_window

    if day and (since or until):
        raise click.UsageError("give either --date or --since/--until, not both")
    if day:
        return day_window(day, tz)
    if since and until:
        return range_window(since, until, tz)
    raise click.UsageError("give --date D, or both --since and --until")


@contextmanager
def opened(db: Path | None) -> Iterator[Store]:
    from prdigest.store import open_store

    target: str | Path = db if db is not None else os.environ.get("PRDIGEST_DB") or default_db()
    store = open_store(target)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress callback drawing on stderr, only for long runs on a terminal."""
    if not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.progress import Progress

    with Progress(transient=True, console=_stderr_console()) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            if total >= PROGRESS_MIN_PRS:
                bar.update(task, completed=done, total=total)

        yield update


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def emit(data: bytes, out: Path | None) -> None:
    if out is None:
        text = data.decode("utf-8")
        click.echo(text, nl=not text.endswith("\n"))
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    except OSError as exc:
        raise ConfigError(f"cannot write: {exc.strerror}", key=str(out)) from exc
    click.echo(f"wrote {out}", err=True)


# Which module defines each command: a command's module is imported only when that command
# runs, so `prdigest --version` or `prdigest digest` never loads what other commands need.
COMMAND_MODULES: dict[str, str] = {
    "demo": "core",
    "import": "core",
    "export": "core",
    "schema": "core",
    "digest": "core",
    "explain": "core",
    "sync": "sync",
    "run": "sync",
    "site": "publish",
    "serve": "publish",
    "publish": "publish",
    "config": "publish",
    "run-all": "publish",
    "llm-check": "llm",
    "eval": "evaluate",
    "preset": "preset",
}


class LazyGroup(click.Group):
    """The top-level group: commands are registered by their modules, loaded on first use.

    A name missing from :data:`COMMAND_MODULES` loads every command module, so a command that
    a module adds still works (``tests/test_startup.py`` asks for the line in the table)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            _load(COMMAND_MODULES[cmd_name])
        if cmd_name not in self.commands:
            load_all_commands()
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_all_commands()
        return sorted(self.commands)


def _load(module: str) -> None:
    importlib.import_module(f"prdigest.cli.{module}")


def load_all_commands() -> None:
    """Import every command module; each adds its commands to :data:`cli`."""
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        _load(module)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="prdigest")
def cli() -> None:
    """Turn a day of merged pull requests into a grounded reading digest."""


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning project errors into one line and an exit code."""
    try:
        cli.main(args=argv, prog_name="prdigest", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except PrdigestError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.stderr.close()  # output was piped into a reader that stopped, e.g. `| head`
        sys.exit(1)

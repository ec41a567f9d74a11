"""Command-line interface: the only package that prints, reads the environment or exits.

This module holds the click group, the options shared by commands and :func:`main`; command
modules (``core``, and one per source or output added later) register their commands on
:data:`cli`. Each command parses its options, calls one library function and formats the
result. Errors raised by the library (:class:`~prdigest.core.errors.PrdigestError`) become one
``Error: …`` line on stderr and the error's exit code; anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from prdigest.cli.group import LazyGroup, install_log_handler, usage_line, verbosity_options
from prdigest.cli.group import load_all_commands as load_all_commands
from prdigest.cli.group import verbosity as verbosity
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


def default_db() -> str | Path:
    """``$PRDIGEST_DB`` (a path or a SQLAlchemy URL) or ``prdigest.sqlite3`` in the user's data
    directory."""
    from platformdirs import user_data_dir

    env = os.environ.get("PRDIGEST_DB")
    if env:
        return env if "://" in env else Path(env)
    return Path(user_data_dir("prdigest")) / "prdigest.sqlite3"


DbTarget = str | Path  # a SQLAlchemy URL (str) or a SQLite file (Path)


class DbType(click.ParamType):  # type: ignore[type-arg]  # generic only from click 8.2
    """``--db``: a SQLAlchemy URL (``postgresql+psycopg://…``, kept as it is: never turned into
    a file name) or the path of a SQLite file. A malformed URL is refused without echoing it,
    since it may hold a password."""

    name = "PATH|URL"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> DbTarget:
        if isinstance(value, Path):
            return value
        text = str(value)
        if "://" not in text:
            return Path(text)
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            make_url(text)
        except (ArgumentError, ValueError):  # ValueError: e.g. a port that is not a number
            scheme = text.split("://", 1)[0]
            self.fail(f"not a valid SQLAlchemy URL (scheme {scheme!r})", param, ctx)
        return text


def db_option(func: F) -> F:
    return click.option(
        "--db",
        "db",
        type=DbType(),
        default=None,
        help="SQLite file or SQLAlchemy URL (postgresql+psycopg://…). Default: $PRDIGEST_DB, "
        "else the user data dir.",
    )(func)


def window_options(func: F) -> F:
    from prdigest.core.window import DAY_HELP, DEFAULT_TZ

    options = [
        click.option(
            "-r",
            "--repo",
            required=True,
            callback=checked_repo,
            metavar="OWNER/NAME",
            help="The repository, e.g. vllm-project/vllm.",
        ),
        click.option("-d", "--date", "day", metavar="DAY", help=f"The local day: {DAY_HELP}."),
        click.option(
            "--since", metavar="TIME", help="Window start (ISO-8601; local time if no offset)."
        ),
        click.option("--until", metavar="TIME", help="Window end, exclusive."),
        click.option(
            "--tz",
            default=DEFAULT_TZ,
            show_default=True,
            metavar="ZONE",
            help="Time zone of the window.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def format_option(choices: list[str], help: str = "Output format") -> Callable[[F], F]:
    """``-f/--format``: the given formats plus their aliases (``md``), passed on canonical."""
    from prdigest.render import ALIASES, canonical

    aliases = {name: alias for alias, name in ALIASES.items() if name in choices}
    shown = ", ".join(f"{c} ({aliases[c]})" if c in aliases else c for c in choices)
    return click.option(
        "-f",
        "--format",
        "fmt",
        default=choices[0],
        show_default=True,
        metavar="FORMAT",
        type=click.Choice(choices + list(aliases.values())),
        callback=lambda ctx, param, value: canonical(value),
        help=f"{help}: {shown}.",
    )


def digest_options(func: F) -> F:
    from prdigest.core.locale import DEFAULT_LANG, available
    from prdigest.render import RENDERERS

    options = [
        click.option(
            "--top",
            default=8,
            show_default=True,
            metavar="N",
            type=click.IntRange(0, 200),
            help="Most PRs that get a paragraph (a quiet day has fewer).",
        ),
        format_option(list(RENDERERS)),
        click.option(
            "--lang",
            default=DEFAULT_LANG,
            show_default=True,
            type=click.Choice(available()),
            help="Language of titles and paragraphs.",
        ),
        click.option(
            "-o",
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
def opened(db: DbTarget | None) -> Iterator[Store]:
    from prdigest.store import open_store

    target = db if db is not None else default_db()
    store = open_store(target, create_dirs=target == default_db())
    try:
        yield store
    finally:
        store.close()


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress callback drawing on stderr, only for long runs on a terminal (not with -q)."""
    if not sys.stderr.isatty() or verbosity() < 0:
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


def info(message: str, *, err: bool = True) -> None:
    """A summary or note for the user (stderr by default); ``-q`` silences it."""
    if verbosity() >= 0:
        click.echo(message, err=err)


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
    info(f"wrote {out}")


def shown_target(target: DbTarget) -> str:
    """A store's path, or its URL without the password, for messages (nothing is opened)."""
    text = str(target)
    if "://" not in text:
        return text
    from prdigest.store.engine import safe_url  # a URL: never show its password

    return safe_url(text)


def store_location() -> str:
    """Where commands without ``--db`` (and without a config's ``db``) keep the store."""
    target = shown_target(default_db())
    return f"{target} ({store_origin()}; --db or a config's db = … take precedence)"


def store_origin() -> str:
    """Where the store's location came from when neither --db nor a config names one."""
    return "from $PRDIGEST_DB" if os.environ.get("PRDIGEST_DB") else "default"


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"prdigest {__version__}")
    click.echo(f"store: {store_location()}")
    ctx.exit()


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and where the store is, and exit.",
)
def cli() -> None:
    """Turn a day of merged pull requests into a grounded reading digest.

    \b
    New here? `prdigest demo` prints a sample digest (no token, no network);
    `prdigest init` writes a starter prdigest.toml for the daily `prdigest run-all`.
    Completion: eval "$(_PRDIGEST_COMPLETE=bash_source prdigest)" in ~/.bashrc.
    """


cli.params.extend(verbosity_options())


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning project errors into one line and an exit code."""
    install_log_handler()
    try:
        cli.main(args=argv, prog_name="prdigest", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "")  # `prdigest` alone: the help, exit 0
    except click.UsageError as exc:
        click.echo(usage_line(exc), err=True)
        sys.exit(exc.exit_code)
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

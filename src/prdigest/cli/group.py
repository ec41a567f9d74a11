"""The top-level command group: commands loaded on first use, listed in sections, with
``-v``/``-q`` on every command, did-you-mean for a mistyped command and one-line usage errors.

Commands are defined in their modules (``core``, ``sync``, ``publish`` …) with ``@cli.command``;
:data:`COMMANDS` says which module defines each and in which help section it is listed, so
``prdigest digest`` imports only ``cli/core.py`` and what it needs.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

import click

START, DAILY, PUBLISH, INSPECT = "Start here", "Daily", "Publish", "Inspect"
SECTIONS = (START, DAILY, PUBLISH, INSPECT)

# name → (module under prdigest.cli, help section); the help lists them in this order.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("init", START),
    "demo": ("core", START),
    "config": ("publish", START),
    "run-all": ("publish", DAILY),
    "run": ("sync", DAILY),
    "sync": ("sync", DAILY),
    "digest": ("core", DAILY),
    "backfill": ("backfill", DAILY),
    "site": ("publish", PUBLISH),
    "serve": ("publish", PUBLISH),
    "publish": ("publish", PUBLISH),
    "explain": ("core", INSPECT),
    "export": ("core", INSPECT),
    "import": ("core", INSPECT),
    "schema": ("core", INSPECT),
    "llm-check": ("llm", INSPECT),
    "llm": ("llm_batch", DAILY),
    "eval": ("evaluate", INSPECT),
    "preset": ("preset", INSPECT),
}

VERBOSITY = "prdigest.verbosity"  # key in the root context's meta: -1 quiet, 0, 1 (-v), 2 (-vv)
LOG_LEVELS = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO, 2: logging.DEBUG}


def load_all_commands() -> None:
    """Import every command module; each adds its commands to the group."""
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        importlib.import_module(f"prdigest.cli.{module}")


def verbosity() -> int:
    """-1 with ``-q``, 0 by default, 1 with ``-v``, 2 with ``-vv`` (0 outside a command)."""
    ctx = click.get_current_context(silent=True)
    return int(ctx.find_root().meta.get(VERBOSITY, 0)) if ctx is not None else 0


def _set_verbosity(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if not value:
        return
    meta = ctx.find_root().meta
    level = -1 if param.name == "quiet" else min(2, max(0, meta.get(VERBOSITY, 0)) + int(value))
    if meta.get(VERBOSITY) == -1:
        level = -1  # -q wins over -v
    meta[VERBOSITY] = level
    logging.getLogger("prdigest").setLevel(LOG_LEVELS[level])


def verbosity_options() -> list[click.Option]:
    return [
        click.Option(
            ["-v", "--verbose"],
            count=True,
            expose_value=False,
            is_eager=True,
            callback=_set_verbosity,
            help="More detail on stderr: -v adds info logs, -vv debug logs.",
        ),
        click.Option(
            ["-q", "--quiet"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_set_verbosity,
            help="Print only errors and the command's output (no summaries, notes or bars).",
        ),
    ]


def _with_verbosity(command: click.Command) -> click.Command:
    names = {name for param in command.params for name in getattr(param, "opts", ())}
    if "--verbose" not in names:
        command.params.extend(verbosity_options())
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _with_verbosity(sub)
    return command


class LazyGroup(click.Group):
    """The ``prdigest`` group. A name missing from :data:`COMMANDS` loads every command module,
    so a command a module adds still runs (``tests/test_cli_help.py`` asks for its line)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"prdigest.cli.{COMMANDS[cmd_name][0]}")
        if cmd_name not in self.commands:
            load_all_commands()
        command = self.commands.get(cmd_name)
        return _with_verbosity(command) if command is not None else None

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_all_commands()
        order = list(COMMANDS)
        return sorted(self.commands, key=lambda n: (order.index(n) if n in order else 99, n))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands in sections (start here, daily, publish, inspect), one line each."""
        listed: dict[str, list[tuple[str, str]]] = {}
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            section = COMMANDS.get(name, ("", "Other"))[1]
            listed.setdefault(section, []).append((name, command.get_short_help_str(limit=300)))
        for section in [*SECTIONS, "Other"]:
            if section in listed:
                with formatter.section(section):
                    formatter.write_dl(listed[section])


def usage_line(exc: click.UsageError) -> str:
    """A usage error as one line: what is wrong and where the help is."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    message = message.replace(". (", " (").replace(". Did you mean", "; did you mean")
    path = exc.ctx.command_path if exc.ctx is not None else "prdigest"
    return f"Error: {message[:1].lower()}{message[1:]} (see '{path} --help')"


class StderrHandler(logging.Handler):
    """Log records as ``warning: …`` lines on the current stderr (click resolves it per call,
    so output captured by tests lands where they look)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            click.echo(f"{record.levelname.lower()}: {self.format(record)}", err=True)
        except (OSError, ValueError):  # a closed or broken stderr must not stop the run
            self.handleError(record)


def install_log_handler() -> None:
    """One handler on the ``prdigest`` logger, masking known secrets; level back to WARNING."""
    from prdigest.core.secrets import RedactingFilter

    logger = logging.getLogger("prdigest")
    logger.setLevel(logging.WARNING)
    if not any(isinstance(h, StderrHandler) for h in logger.handlers):
        handler = StderrHandler()
        handler.addFilter(RedactingFilter())
        logger.addHandler(handler)

"""Help that teaches: sections, examples that parse, help on every option, short flags,
one-line usage errors, -v/-q everywhere, relative days, `--format md`, shell completion."""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import click
import pytest

from prdigest.cli import cli, load_all_commands
from prdigest.cli.group import COMMANDS, SECTIONS
from prdigest.core.errors import ConfigError
from prdigest.core.window import day_window, local_day

from cli_support import run
from conftest import DAY_A, GOLDEN, REPO

load_all_commands()


def walk(group: click.Group, prefix: str = "prdigest") -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        yield f"{prefix} {name}", command
        if isinstance(command, click.Group):
            yield from walk(command, f"{prefix} {name}")


ALL = list(walk(cli))


def command_at(words: list[str]) -> tuple[click.Command, list[str]]:
    """The command an argument list names, and the arguments left for it."""
    command: click.Command = cli
    rest = list(words)
    while isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        found = command.get_command(click.Context(command), rest[0])
        if found is None:
            break
        command, rest = found, rest[1:]
    return command, rest


def examples(command: click.Command) -> list[str]:
    text = command.help or ""
    assert "Examples:" in text
    block = text.split("Examples:", 1)[1]
    return [line.strip() for line in block.splitlines() if "prdigest " in line]


@pytest.mark.parametrize(("path", "command"), ALL, ids=[p for p, _ in ALL])
def test_every_command_has_examples_that_parse(path: str, command: click.Command) -> None:
    lines = examples(command)
    assert lines, path
    assert any(line.split("prdigest ", 1)[1].startswith(path[len("prdigest ") :]) for line in lines)
    for line in lines:
        words = shlex.split(line.split("prdigest ", 1)[1].split("|")[0].split(">")[0])
        target, rest = command_at(words)
        assert target is not cli, line
        ctx = target.make_context(target.name or "", rest, resilient_parsing=True)
        by_flag = {o: p for p in target.params for o in getattr(p, "opts", [])}
        for flag, value in itertools.pairwise(rest):
            param = by_flag.get(flag)
            if param is not None and isinstance(param.type, click.Choice):
                assert value in param.type.choices, line
        assert ctx is not None


@pytest.mark.parametrize(("path", "command"), ALL, ids=[p for p, _ in ALL])
def test_every_option_has_help_and_every_command_has_v_and_q(
    path: str, command: click.Command
) -> None:
    options = [p for p in command.params if isinstance(p, click.Option)]
    assert [o.opts for o in options if not o.help] == [], path
    flags = {flag for o in options for flag in o.opts}
    assert {"-v", "--verbose", "-q", "--quiet"} <= flags, path


SHORT = {
    "prdigest digest": {"-r", "-d", "-f", "-o"},
    "prdigest run": {"-r", "-d", "-f", "-o"},
    "prdigest sync": {"-r", "-d"},
    "prdigest demo": {"-d", "-f", "-o"},
    "prdigest export": {"-r", "-o"},
    "prdigest explain": {"-f"},
    "prdigest site": {"-r", "-d", "-o", "-c"},
    "prdigest serve": {"-c"},
    "prdigest publish": {"-r", "-d", "-c"},
    "prdigest run-all": {"-r", "-d", "-c"},
    "prdigest config check": {"-c"},
    "prdigest preset draft": {"-r", "-o"},
}


@pytest.mark.parametrize(("path", "flags"), SHORT.items())
def test_short_flags_for_the_common_options(path: str, flags: set[str]) -> None:
    command = dict(ALL)[path]
    assert flags <= {f for p in command.params for f in getattr(p, "opts", [])}


def test_the_help_lists_commands_in_sections(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    found: dict[str, list[str]] = {}
    section = None
    for line in out.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            section = line[:-1]
        elif section in SECTIONS and re.match(r"^  \S", line):
            found.setdefault(section, []).append(line.split()[0])
    assert list(found) == list(SECTIONS)
    assert found["Start here"] == ["init", "demo", "config"]
    assert found["Daily"][:4] == ["run-all", "run", "sync", "digest"]
    assert found["Publish"] == ["site", "serve", "publish"]
    assert sorted(n for names in found.values() for n in names) == sorted(cli.commands)
    listing = out.split("Start here:", 1)[1]
    assert "..." not in listing  # descriptions are never cut off


def test_every_command_is_in_the_table_of_sections() -> None:
    assert sorted(COMMANDS) == sorted(cli.commands)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["digest"], "Error: missing option '-r' / '--repo' (see 'prdigest digest --help')"),
        (
            ["dgest"],
            "Error: no such command 'dgest'; did you mean 'digest'? (see 'prdigest --help')",
        ),
        (
            ["digest", "-r", REPO, "--frmat", "md"],
            "Error: no such option '--frmat' (Did you mean one of: '--date', '--format'?) "
            "(see 'prdigest digest --help')",
        ),
        (
            ["digest", "-r", REPO, "-d", DAY_A, "-f", "pdf"],
            "Error: invalid value for '-f' / '--format': 'pdf' is not one of 'text', 'markdown', "
            "'json', 'html', 'atom', 'md' (see 'prdigest digest --help')",
        ),
        (
            ["config", "chek"],
            "Error: no such command 'chek'; did you mean 'check'? (see 'prdigest config --help')",
        ),
    ],
)
def test_usage_errors_are_one_line_on_stderr(
    capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    code, out, err = run(capsys, *args)
    assert (code, out, err) == (2, "", line + "\n")


def test_prdigest_alone_prints_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert code == 0 and out.startswith("Usage: prdigest [OPTIONS] COMMAND") and err == ""


def test_version_shows_where_the_store_is(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PRDIGEST_DB", str(tmp_path / "x.sqlite3"))
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert out == (
        "prdigest 0.1.0\n"
        f"store: {tmp_path / 'x.sqlite3'} (from $PRDIGEST_DB; --db or a config's db = … "
        "take precedence)\n"
    )
    monkeypatch.setenv("PRDIGEST_DB", "postgresql+psycopg://digest:hunter2@db.example/prdigest")
    code, out, _ = run(capsys, "--version")
    assert "hunter2" not in out and "postgresql+psycopg://digest:***@db.example/prdigest" in out


def test_relative_days_are_local_to_the_time_zone() -> None:
    late_utc = datetime(2026, 6, 10, 20, 0, tzinfo=UTC)  # already 06-11 in Shanghai
    assert local_day("today", "Asia/Shanghai", late_utc) == date(2026, 6, 11)
    assert local_day("yesterday", "Asia/Shanghai", late_utc) == date(2026, 6, 10)
    assert local_day("yesterday", "UTC", late_utc) == date(2026, 6, 9)
    assert local_day("2026-06-10") == date(2026, 6, 10)
    assert day_window("yesterday", "Asia/Shanghai", late_utc).label == "2026-06-10"
    with pytest.raises(ConfigError, match=r"^--date: expected today, yesterday or YYYY-MM-DD"):
        local_day("tomorrow")


def test_format_md_is_markdown(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "d.sqlite3")
    _, markdown, _ = run(capsys, "demo", "--db", db, "--format", "markdown")
    code, md, _ = run(capsys, "demo", "--db", db, "-f", "md")
    assert code == 0 and md == markdown
    assert md == (GOLDEN / "vllm-2026-06-10.md").read_text(encoding="utf-8")


def test_quiet_keeps_the_output_and_drops_summaries(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "d.sqlite3")
    run(capsys, "demo", "--db", db)
    code, out, err = run(capsys, "export", "-r", REPO, "--db", db, "-o", str(tmp_path / "a.jsonl"))
    assert (code, out, err) == (0, "", "exported 35 record(s)\n")
    code, out, err = run(
        capsys, "export", "-r", REPO, "--db", db, "-o", str(tmp_path / "b.jsonl"), "-q"
    )
    assert (code, out, err) == (0, "", "")
    assert (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "a.jsonl").read_bytes()
    code, out, err = run(capsys, "-q", "import", str(tmp_path / "a.jsonl"), "--db", db)
    assert (code, out, err) == (0, "", "")


def test_verbose_shows_info_logs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import logging

    def noisy(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        logging.getLogger("prdigest.test").info("checked %s", value)
        return value

    @cli.command("noisy-test", hidden=True)
    @click.option("--x", callback=noisy, help="A value.")
    def _noisy(x: str | None) -> None:
        """A command only this test uses."""

    try:
        code, _, err = run(capsys, "noisy-test", "--x", "1")
        assert (code, err) == (0, "")
        code, _, err = run(capsys, "noisy-test", "-v", "--x", "1")
        assert (code, err) == (0, "info: checked 1\n")
        code, _, err = run(capsys, "-q", "noisy-test", "-v", "--x", "1")
        assert (code, err) == (0, "")
    finally:
        del cli.commands["noisy-test"]


def test_shell_completion_completes_commands(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("_PRDIGEST_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "prdigest dig")
    monkeypatch.setenv("COMP_CWORD", "1")
    code, out, _ = run(capsys)
    assert code == 0 and out.split() == ["plain,digest"]
    monkeypatch.setenv("COMP_WORDS", "prdigest digest --fo")
    monkeypatch.setenv("COMP_CWORD", "2")
    code, out, _ = run(capsys)
    assert out.split() == ["plain,--format"]


def test_shell_completion_script_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    for shell in ("bash", "zsh", "fish"):
        assert f"_PRDIGEST_COMPLETE={shell}_source prdigest" in readme


def test_exit_codes_match_the_readme_table() -> None:
    import inspect

    from prdigest.core import errors

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    table = {int(code) for code in re.findall(r"^\| (\d+) \| [^|]+ \|$", readme, re.M)}
    used = {
        cls.exit_code
        for cls in vars(errors).values()
        if inspect.isclass(cls) and issubclass(cls, errors.PrdigestError)
    }
    # 0: success; 2 is also every usage error; 130: Ctrl-C (main turns Abort into it)
    assert table == used | {0, 2, 130}
    assert click.UsageError("x").exit_code == 2

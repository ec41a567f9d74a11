"""The docs match the tool: the README's command table and every `prdigest …` line in README
and docs/ name real commands and real options, and every command and option is documented."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from prdigest.cli import cli, load_all_commands

load_all_commands()  # commands load lazily; these tests walk all of them
ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))}
EVERY_TEXT = README + "".join(DOCS.values())
GENERIC = {"--help", "--verbose", "--quiet", "--version"}  # every command has them


def walk(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if command.hidden:
            continue
        yield prefix + name, command
        if isinstance(command, click.Group):
            yield from walk(command, prefix + name + " ")


COMMANDS = dict(walk(cli))
LEAVES = {path: c for path, c in COMMANDS.items() if not isinstance(c, click.Group)}


def flags(command: click.Command) -> set[str]:
    return {o for p in command.params for o in getattr(p, "opts", []) if o.startswith("-")}


def resolve(words: list[str]) -> tuple[str, click.Command] | None:
    """The longest command path that ``words`` start with (``eval --reference …`` is the
    group's default subcommand, as the CLI runs it)."""
    for length in range(min(len(words), 3), 0, -1):
        path = " ".join(words[:length])
        if path in COMMANDS:
            command = COMMANDS[path]
            default = getattr(command, "default", None)
            rest = words[length:]
            if isinstance(command, click.Group) and default and (not rest or rest[0][0] == "-"):
                return f"{path} {default}", COMMANDS[f"{path} {default}"]
            return path, command
    return None


def command_table() -> list[tuple[list[str], str]]:
    """(command paths, the row's text) of each row of the README's command table."""
    section = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    table = section.split("\n| group |", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in table.splitlines()[1:]:
        if set(line) <= set("|- "):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        named = []
        for code in re.findall(r"`prdigest ([^`]+)`", cells[1]):
            found = resolve(code.split())
            named.append(found[0] if found else code)
        rows.append((named, " ".join(cells[1:])))
    return rows


def test_the_readme_starts_with_the_two_commands() -> None:
    first, second = README.splitlines()[:2]
    assert first.rstrip().endswith("prdigest demo")
    assert second.rstrip().endswith("python -m pytest -q")
    assert "sed -n 2p README.md" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_command_is_in_the_readme_command_table() -> None:
    listed = {path.strip() for named, _ in command_table() for path in named}
    missing = sorted(path for path in LEAVES if path not in listed)
    assert missing == [], "add a row to the README's command table"


def test_every_row_of_the_command_table_is_a_command_with_those_options() -> None:
    for named, text in command_table():
        assert named, text
        commands = []
        for path in named:
            assert path in COMMANDS, f"no command {path!r}"
            commands.append(COMMANDS[path])
        known = set().union(*(flags(c) for c in commands))
        text = re.sub(r"\]\([^)]*\)", "]", text)  # links' targets are not options
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-z])\b", text):
            assert flag in known, f"{flag} is not an option of {' / '.join(named)}"


def test_every_command_and_option_is_documented() -> None:
    for path, command in COMMANDS.items():
        assert f"prdigest {path}" in EVERY_TEXT, path
        assert command.help, path
        undocumented = sorted(
            f
            for f in flags(command)
            if f.startswith("--") and f not in GENERIC and f not in EVERY_TEXT
        )
        assert undocumented == [], f"prdigest {path}: document {undocumented}"


def command_lines() -> Iterator[tuple[str, str]]:
    """(where, command line) of every `prdigest …` line in code blocks and inline code."""
    for name, text in [("README.md", README), *DOCS.items()]:
        blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S)
        lines = [ln for b in blocks for ln in b.splitlines()]
        lines += re.findall(r"`(prdigest [^`]+)`", text)
        for line in lines:
            start = line.find("prdigest ")
            if start < 0 or line.lstrip().startswith("#"):
                continue  # a comment in a shell example
            if not line[:start].rstrip().endswith(("install", "cd", "/")):
                yield name, line[start:].split(" #")[0].split("|")[0].split(">")[0].strip()


@pytest.mark.parametrize(("where", "line"), sorted(set(command_lines())))
def test_every_documented_command_line_names_real_options(where: str, line: str) -> None:
    try:
        words = shlex.split(line.replace("…", "x"))[1:]
    except ValueError:
        words = line.split()[1:]
    if not words or not re.match(r"^[a-z]", words[0]):
        return  # `prdigest --version` and the like
    found = resolve([w for w in words if not w.startswith("[")])
    assert found is not None, f"{where}: {line!r} names no command"
    path, command = found
    known = flags(command) | GENERIC | {"-h"}
    used = [w.split("=")[0].strip("[]()") for w in words if w.lstrip("[(").startswith("-")]
    unknown = [flag for flag in used if flag.startswith("-") and flag not in known]
    assert unknown == [], f"{where}: {line!r}: not options of prdigest {path}: {unknown}"


def test_linked_docs_exist() -> None:
    for name in ("docs/records.md", "docs/presets.md", "docs/architecture.md"):
        assert name in README and (ROOT / name).exists()


def test_the_project_metadata_is_complete() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert {"Homepage", "Source", "Issues", "Changelog"} <= set(project["urls"])
    assert project["keywords"] and any("Python :: 3.11" in c for c in project["classifiers"])
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "*.sqlite3" in ignored

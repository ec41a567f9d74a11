"""The README documents every command, and its first two lines are the two commands."""

from __future__ import annotations

from pathlib import Path

import click

from prdigest.cli import cli, load_all_commands

load_all_commands()  # commands load lazily; these tests walk all of them
ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str = "") -> list[str]:
    names = []
    for name, command in sorted(group.commands.items()):
        names.append(prefix + name)
        if isinstance(command, click.Group):
            names += _commands(command, prefix + name + " ")
    return names


def test_every_command_is_documented_with_help() -> None:
    for name in _commands(cli):
        docs = [README] + [p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")]
        assert any(f"prdigest {name}" in text for text in docs), name
        command = cli
        for part in name.split():
            command = command.commands[part]  # type: ignore[attr-defined]
        assert command.help, name


def test_readme_starts_with_the_two_commands() -> None:
    first, second = README.splitlines()[:2]
    assert first.rstrip().endswith("prdigest demo")
    assert second.rstrip().endswith("python -m pytest -q")
    assert "sed -n 2p README.md" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_linked_docs_exist() -> None:
    for name in ("docs/records.md", "docs/presets.md", "docs/architecture.md"):
        assert name in README and (ROOT / name).exists()

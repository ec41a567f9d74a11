"""Docs of the publish feature stay true: commands, example workflow, README screenshot."""

from __future__ import annotations

import re
from pathlib import Path

import click

from prdigest.cli import cli, load_all_commands
from prdigest.pipeline.config import parse_config

load_all_commands()  # commands load lazily; these tests walk all of them
ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "docs" / "publish.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
WORKFLOW = (ROOT / "examples" / "github-actions" / "prdigest-daily.yml").read_text("utf-8")
PUBLISH_COMMANDS = ["site", "serve", "publish", "config check", "run-all"]


def _command(path: str) -> click.Command:
    command: click.Command = cli
    for part in path.split():
        assert isinstance(command, click.Group)
        command = command.commands[part]
    return command


def test_publish_commands_have_help_and_are_documented() -> None:
    for path in PUBLISH_COMMANDS:
        command = _command(path)
        assert command.help, path
        assert f"prdigest {path}" in DOCS, path


def test_docs_example_config_is_valid_and_its_secrets_are_in_the_workflow() -> None:
    example = re.search(r"A complete example:\n\n```toml\n(.*?)```", DOCS, re.S)
    assert example is not None
    config = parse_config(example.group(1))
    names = [var for _, var in config.secret_env_names()]
    assert names
    for var in names:
        assert f"{var}: ${{{{ secrets.{var} }}}}" in WORKFLOW


def test_workflow_runs_daily_and_deploys_pages() -> None:
    assert re.search(r'cron: "0 0 \* \* \*"', WORKFLOW)
    assert "prdigest run-all" in WORKFLOW and "prdigest config check" in WORKFLOW
    assert "actions/upload-pages-artifact@" in WORKFLOW
    assert "actions/deploy-pages@" in WORKFLOW
    assert "pages: write" in WORKFLOW and "id-token: write" in WORKFLOW
    assert "${{ inputs.date }}" not in WORKFLOW.split("run: |", 1)[1]  # no input pasted into shell


def test_readme_shows_the_screenshot_and_a_cron_line() -> None:
    assert "## Site and delivery" in README
    assert "(docs/images/digest-page.png)" in README
    image = (ROOT / "docs" / "images" / "digest-page.png").read_bytes()
    assert image.startswith(b"\x89PNG\r\n\x1a\n")
    assert "python scripts/screenshot.py" in README
    assert re.search(r"^0 0 \* \* \*  .*prdigest run-all", README, re.M)

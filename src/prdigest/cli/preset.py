"""``prdigest preset draft``: a first preset for a repository, from a local clone."""

from __future__ import annotations

from pathlib import Path

import click

from prdigest.cli import cli, emit
from prdigest.core.names import check_repo
from prdigest.core.presets import parse_preset
from prdigest.core.presets.draft import draft_preset
from prdigest.sources.git.layout import read_layout


@cli.group("preset")
def preset_group() -> None:
    """Repository presets: areas, roles, bots and title tags as data.

    
    Examples:
      prdigest preset draft --git ./vllm-ascend -r vllm-project/vllm-ascend -o ascend.toml
    """


@preset_group.command("draft")
@click.option(
    "--git",
    "git_path",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A local clone of the repository.",
)
@click.option("-r", "--repo", required=True, help="The repository as owner/name.")
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here, not to stdout.",
)
def preset_draft(git_path: Path, repo: str, out: Path | None) -> None:
    """Draft a preset from the clone's tree, CODEOWNERS and bot authors, for you to edit.

    
    Examples:
      prdigest preset draft --git ./vllm-ascend -r vllm-project/vllm-ascend -o ascend.toml
      prdigest digest -r vllm-project/vllm-ascend -d yesterday --preset ascend.toml
    """
    check_repo(repo)
    layout = read_layout(git_path)
    text = draft_preset(repo, layout.paths, layout.codeowners, layout.bots)
    parse_preset(text, origin="draft")  # what we print must load
    emit(text.encode("utf-8"), out)

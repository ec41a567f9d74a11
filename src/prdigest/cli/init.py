"""``prdigest init``: a commented starter ``prdigest.toml`` that ``config check`` accepts."""

from __future__ import annotations

from pathlib import Path

import click

from prdigest.cli import checked_repo, cli, info
from prdigest.core.errors import ConfigError

STARTER = """\
# prdigest.toml: what `prdigest run-all` does every day. Check it with `prdigest config check`;
# every key is described in docs/publish.md. Secrets never go in this file: a channel names the
# environment variable that holds its webhook URL or password.

# Where the store lives (default: --db, else $PRDIGEST_DB, else the user data directory).
# db = "prdigest.sqlite3"

[site]
dir = "site"                                      # the static site `run-all` and `site` write
# base_url = "https://team.example.org/digests/"  # its public URL: messages link to the pages

[[repos]]
name = "{repo}"
{source}
timezone = "Asia/Shanghai"                        # a day runs from local midnight to midnight
top = 8                                           # at most this many PRs get a paragraph
lang = "zh"                                       # zh or en
# skip_empty = true                               # post nothing for a day without merged PRs

# One channel: uncomment, then set the variable it names (`publish --to team --test` checks it).
# [channels.team]
# type = "feishu"                                 # feishu, lark, dingtalk, wecom, slack, email
# webhook_env = "PRDIGEST_FEISHU_WEBHOOK"         # the variable holding the webhook URL
# secret_env = "PRDIGEST_FEISHU_SECRET"           # if the bot signs messages
"""
GITHUB = """\
source = "github"                                 # needs GITHUB_TOKEN; or a local clone:
# source = "git"
# path = "../{name}"                              # the clone, fetched before each run"""
GIT = """\
source = "git"                                    # a local clone, fetched before each run
path = "{path}"
# fetch = false                                   # read the clone as it is, without git fetch"""


def starter(repo: str, git: Path | None = None) -> str:
    """The text of a starter config for ``repo`` (from GitHub, or from the clone ``git``)."""
    if git is None:
        source = GITHUB.format(name=repo.split("/", 1)[1])
    else:
        source = GIT.format(path=str(git).replace("\\", "/").replace('"', '\\"'))
    return STARTER.format(repo=repo, source=source)


@cli.command("init")
@click.option(
    "-c",
    "--config",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("prdigest.toml"),
    show_default=True,
    help="Where to write the starter config.",
)
@click.option(
    "-r",
    "--repo",
    default="vllm-project/vllm",
    show_default=True,
    callback=checked_repo,
    metavar="OWNER/NAME",
    help="The repository to digest every day.",
)
@click.option(
    "--git",
    "git_path",
    type=click.Path(file_okay=False, path_type=Path),
    help="Read the repository from this local clone instead of GitHub.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
def init(path: Path, repo: str, git_path: Path | None, force: bool) -> None:
    """Write a commented starter prdigest.toml (a repository, a site, one channel to fill in).

    \b
    Examples:
      prdigest init
      prdigest init -r vllm-project/vllm-ascend --git ./vllm-ascend
      prdigest init -c /srv/prdigest/prdigest.toml --force
    """
    if path.exists() and not force:
        raise ConfigError("already exists; give --force to overwrite it", key=str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(starter(repo, git_path), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write: {exc.strerror}", key=str(path)) from exc
    info(f"wrote {path}; next: `prdigest config check -c {path}`, then `prdigest run-all`")

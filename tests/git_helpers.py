"""A small git repository built by a script, for the git-source tests (no network, no fixtures).

Every commit gets fixed author/committer names and dates from the environment, and the user's
own git configuration is shut out, so the history is the same on every machine.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ALICE = ("Alice Zhang", "1+alice@users.noreply.github.com")
BOB = ("Bob", "12345+bob-gh@users.noreply.github.com")
CAROL = ("Carol", "carol@example.com")
DEPENDABOT = ("dependabot[bot]", "49699333+dependabot[bot]@users.noreply.github.com")
GITHUB = ("GitHub", "noreply@github.com")


class ScriptedRepo:
    """``git`` in one directory with a pinned environment."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")

    def env(self, author: tuple[str, str], committer: tuple[str, str], when: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update(
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_AUTHOR_NAME=author[0],
            GIT_AUTHOR_EMAIL=author[1],
            GIT_AUTHOR_DATE=when,
            GIT_COMMITTER_NAME=committer[0],
            GIT_COMMITTER_EMAIL=committer[1],
            GIT_COMMITTER_DATE=when,
        )
        return env

    def git(
        self,
        *args: str,
        author: tuple[str, str] = ALICE,
        committer: tuple[str, str] = GITHUB,
        when: str = "2026-06-01T00:00:00+00:00",
    ) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=self.path,
            env=self.env(author, committer, when),
            capture_output=True,
            check=True,
        )
        return done.stdout.decode().strip()

    def write(self, name: str, content: str | bytes) -> None:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content, encoding="utf-8")
        else:
            target.write_bytes(content)

    def commit(
        self,
        message: str,
        when: str,
        author: tuple[str, str] = ALICE,
        committer: tuple[str, str] = GITHUB,
    ) -> str:
        self.git("add", "-A")
        self.git(
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
            author=author,
            committer=committer,
            when=when,
        )
        return self.git("rev-parse", "HEAD")

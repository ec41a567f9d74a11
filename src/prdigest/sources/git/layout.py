"""What a clone says about its repository's layout, for drafting a preset: the tracked paths,
the CODEOWNERS rules and the authors of recent commits that look like bots."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prdigest.sources.git import runner
from prdigest.sources.git.message import Person

CODEOWNERS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
BOTLIKE = ("[bot]", "-bot", "-robot", "-ci", "bot")
RECENT = 3000  # commits looked at for bot authors


@dataclass(frozen=True)
class Layout:
    paths: tuple[str, ...]  # every tracked file
    codeowners: tuple[tuple[str, tuple[str, ...]], ...]  # (pattern, owners), in file order
    bots: tuple[str, ...]  # authors of recent commits whose login or name reads as a bot


def _codeowners(path: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    for name in CODEOWNERS:
        file = path / name
        if not file.is_file():
            continue
        rules = []
        for line in file.read_text(encoding="utf-8", errors="replace").splitlines():
            text = line.split("#", 1)[0].strip()
            if text:
                pattern, *owners = text.split()
                rules.append((pattern, tuple(owners)))
        return tuple(rules)
    return ()


def _bots(path: Path) -> tuple[str, ...]:
    _, out, _ = runner.run(path, "log", f"-{RECENT}", "--format=%an%x1f%ae", "--", check=False)
    found: dict[str, None] = {}
    for line in out.decode("utf-8", errors="replace").splitlines():
        name, _, email = line.partition("\x1f")
        login = Person(name, email).identity.strip()
        if login and login.lower().endswith(BOTLIKE):
            found.setdefault(login.removesuffix("[bot]"), None)
    return tuple(found)


def read_layout(path: Path) -> Layout:
    """The layout of the clone at ``path`` (its checked-out tree)."""
    runner.check_repository(path)
    _, out, _ = runner.run(path, "ls-files", "-z")
    paths = tuple(p for p in out.decode("utf-8", errors="replace").split("\0") if p)
    return Layout(paths=paths, codeowners=_codeowners(path), bots=_bots(path))

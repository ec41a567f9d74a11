"""Expert labels of merged PRs: the verdict a careful reader gave, and the day's picks.

A label file is JSON Lines, one PR a line (``eval/labels/``, see its README)::

    {"repo": "owner/name", "number": 12103, "day": "2026-07-16",
     "level": "worth_reading", "reason": "…", "pick": 1}

``pick`` ranks the PRs of the day that deserve a paragraph (``null``: listed by title only);
an optional ``weight`` (default 1) says how much the label counts when the model is fitted.
A directory is read as every ``*.jsonl`` below it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from prdigest.core.errors import InputError
from prdigest.core.models import Level


@dataclass(frozen=True)
class Label:
    repo: str
    number: int
    day: str
    level: Level
    reason: str
    pick: int | None
    weight: float = 1.0

    @property
    def key(self) -> tuple[str, int]:
        return self.repo, self.number


def _parse(line: str, where: str) -> Label:
    try:
        data = json.loads(line)
        pick = data.get("pick")
        return Label(
            repo=str(data["repo"]),
            number=int(data["number"]),
            day=str(data["day"]),
            level=Level(data["level"]),
            reason=str(data.get("reason", "")),
            pick=int(pick) if pick is not None else None,
            weight=float(data.get("weight", 1.0)),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{where}: not a label ({exc})") from exc


def _files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        yield from sorted(path.rglob("*.jsonl"))
    else:
        yield path


def load_labels(paths: Sequence[Path]) -> list[Label]:
    """Every label of the files (or directories); a PR labelled twice is an error."""
    labels: dict[tuple[str, int], Label] = {}
    for root in paths:
        for path in _files(root):
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(f"cannot read labels {path}: {exc}") from exc
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                label = _parse(line, f"{path}:{number}")
                if label.key in labels:
                    raise InputError(f"{path}:{number}: {label.repo}#{label.number} labelled twice")
                labels[label.key] = label
    if not labels:
        raise InputError("no labels in " + ", ".join(str(p) for p in paths))
    return list(labels.values())

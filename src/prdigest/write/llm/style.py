"""Reference digests in the text layout: parsing, verdicts, and style examples for prompts.

The text layout (DESIGN §4, the example digests): first line ``owner/name``, a blank line, then
entries separated by blank lines; an entry is a title line followed by its paragraph line, or a
title line alone (``list_only``). A line is taken as a paragraph when it opens with a verdict
phrase or is long (titles run 12–60 characters, paragraphs well over 80).

The built-in default style (``prompts/style-default.txt``) was written for this project about
made-up PRs; a team points ``--style FILE`` at a digest of its own instead.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from prdigest.core.errors import ConfigError, InputError
from prdigest.core.models import Level
from prdigest.write.llm.verify import VERDICT_PATTERNS, VERDICT_WINDOW, verdict_of

PARAGRAPH_MIN_CHARS = 80
EXAMPLE_MIN_CHARS = 120
EXAMPLE_MAX_CHARS = 600


@dataclass(frozen=True)
class ReferenceEntry:
    title: str
    paragraph: str | None
    level: Level | None  # None: a paragraph without a recognisable verdict


@dataclass(frozen=True)
class Reference:
    repo: str
    entries: tuple[ReferenceEntry, ...]


def _is_paragraph(line: str) -> bool:
    opens_with_verdict = any(p.search(line[:VERDICT_WINDOW]) for p, _ in VERDICT_PATTERNS)
    return len(line) >= PARAGRAPH_MIN_CHARS or (opens_with_verdict and len(line) > 30)


def parse_reference(text: str, *, source: str = "reference") -> Reference:
    """Entries of a digest in the text layout; raises :class:`InputError` when there are none."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    content = [line for line in lines if line]
    if len(content) < 2:
        raise InputError(f"{source}: expected 'owner/name' and at least one entry")
    repo, rest = content[0], content[1:]
    entries: list[ReferenceEntry] = []
    index = 0
    while index < len(rest):
        title = rest[index]
        following = rest[index + 1] if index + 1 < len(rest) else None
        if following is not None and _is_paragraph(following) and not _is_paragraph(title):
            entries.append(ReferenceEntry(title, following, verdict_of(following)))
            index += 2
        else:
            entries.append(ReferenceEntry(title, None, Level.LIST_ONLY))
            index += 1
    return Reference(repo, tuple(entries))


def load_reference(path: Path) -> Reference:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read reference digest: {exc}", key=str(path)) from exc
    return parse_reference(text, source=str(path))


@functools.cache
def default_reference() -> Reference:
    text = resources.files(__package__).joinpath("prompts/style-default.txt").read_text("utf-8")
    return parse_reference(text, source="built-in style")


def pick_examples(reference: Reference, count: int = 3) -> tuple[ReferenceEntry, ...]:
    """Up to ``count`` entries with paragraphs of a usable length, different levels first."""
    usable = [
        e
        for e in reference.entries
        if e.paragraph and EXAMPLE_MIN_CHARS // 3 <= len(e.paragraph) <= EXAMPLE_MAX_CHARS
    ]
    picked: list[ReferenceEntry] = []
    for entry in usable:  # one per level first, in document order
        if len(picked) < count and entry.level not in {p.level for p in picked}:
            picked.append(entry)
    for entry in usable:
        if len(picked) < count and entry not in picked:
            picked.append(entry)
    return tuple(picked)


SHORT_LEVELS = (Level.SKIM, Level.SKIP)


def pick_close_examples(reference: Reference, count: int = 3) -> tuple[ReferenceEntry, ...]:
    """Up to ``count`` close-read examples (the usable entries of the other levels only when
    the reference has none): a close-read paragraph learns nothing from a skim one."""
    usable = pick_examples(reference, count=len(reference.entries))
    close = [e for e in usable if e.level is not None and e.level not in SHORT_LEVELS]
    return tuple((close or list(usable))[:count])


def pick_short_example(reference: Reference) -> tuple[ReferenceEntry, ...]:
    """One example for a short entry: the first usable skim or skip entry, else the first."""
    usable = pick_examples(reference, count=len(reference.entries))
    short = [e for e in usable if e.level in SHORT_LEVELS]
    return tuple((short or list(usable))[:1])


def format_examples(examples: tuple[ReferenceEntry, ...]) -> str:
    return "\n\n".join(f"{e.title}\n{e.paragraph}" for e in examples)

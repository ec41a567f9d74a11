"""Phrase lookup, cited names and small text helpers shared by the template writer's parts."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from prdigest.core.locale import Locale, Writing, locale
from prdigest.core.models import CodeRef, FileFact
from prdigest.core.records import mention

_CJK = "\u3400-\u4dbf\u4e00-\u9fff"
_SPACE_BEFORE = re.compile(rf"([{_CJK}])([A-Za-z0-9_`@#+\-−(\[])")
_SPACE_AFTER = re.compile(rf"([A-Za-z0-9_`%)\]])([{_CJK}])")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([，。；：、）」！？])")
_SPACE_AFTER_PUNCT = re.compile(r"([（「，。；：、）」])[ \t]+")


def code(name: str) -> str:
    return f"`{name}`"


def space_cjk(text: str) -> str:
    """A space between Chinese and Latin text or code, none next to full-width punctuation."""
    spaced = _SPACE_AFTER.sub(r"\1 \2", _SPACE_BEFORE.sub(r"\1 \2", text))
    return _SPACE_AFTER_PUNCT.sub(r"\1", _SPACE_BEFORE_PUNCT.sub(r"\1", spaced))


def _stable(seed: int, slot: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{slot}".encode()).digest()[:4], "big")


@dataclass
class Cited:
    """The code names and fact ids one paragraph uses."""

    refs: dict[str, CodeRef] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)

    def fact(self, fact_id: str) -> None:
        if fact_id not in self.ids:
            self.ids.append(fact_id)

    def name(self, name: str, path: str = "", line: int | None = None) -> str:
        """``name`` in backticks, remembered with its location for permalinks."""
        self.refs.setdefault(name, CodeRef(name=name, path=path, line=line))
        return code(name)

    def copy(self) -> Cited:
        """A scratch copy: what a wording that may not be said cites, kept apart until it is."""
        return Cited(refs=dict(self.refs), ids=list(self.ids))

    def merge(self, other: Cited) -> None:
        """Take over what ``other`` (a copy of this one) cited beyond it."""
        for name, ref in other.refs.items():
            self.refs.setdefault(name, ref)
        for fact_id in other.ids:
            self.fact(fact_id)


class Phrases:
    """Phrase lookup for one language and one PR (the PR number seeds the variant choice).

    The phrasebook is the ``[template]`` part of the language's locale file; ``w`` holds the
    language's punctuation and spacing rules.
    """

    def __init__(self, lang: str, seed: int, variant: int = 0) -> None:
        self.locale: Locale = locale(lang)
        self.book = self.locale.template
        self.w: Writing = self.locale.writing
        self.seed = seed
        self.variant = variant  # 0: the PR's own choice; another number, another choice

    def get(self, section: str, key: str, **values: object) -> str:
        value = self.book[section][key]
        if isinstance(value, list):
            slot = f"{section}.{key}" if not self.variant else f"{section}.{key}/{self.variant}"
            value = value[_stable(self.seed, slot) % len(value)]
        return str(value).format(**values) if values else str(value)

    def has(self, section: str, key: str) -> bool:
        return key in self.book.get(section, {})

    def raw(self, section: str, key: str) -> Any:
        return self.book[section][key]

    def word(self, section: str, key: str) -> str:
        """A fixed (non-variant) phrase such as a separator."""
        return str(self.book[section][key])

    def join(self, items: Sequence[str]) -> str:
        """``a、b 与 c`` / ``a, b and c``."""
        if len(items) <= 1:
            return "".join(items)
        return (
            self.word("symbol", "list_sep").join(items[:-1])
            + self.word("symbol", "and")
            + items[-1]
        )

    def listing(self, items: Sequence[str]) -> str:
        """``a、b`` / ``a, b`` (no final "and")."""
        return self.word("symbol", "list_sep").join(items)

    @property
    def stop(self) -> str:
        return self.w.stop

    def metric(self, name: str | None) -> str:
        """A claim's metric as the language writes it (``throughput`` → 吞吐 in Chinese)."""
        return self.locale.metric(name)

    def finish(self, text: str) -> str:
        """Spacing between scripts, where the language needs it."""
        return space_cjk(text) if self.w.cjk else text

    def who(self, login: str | None) -> str:
        """``@login`` for a login; a git display name ("Li Wang") stays a plain name."""
        return mention(login) if login else "?"


def short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_QUOTED_MENTION = re.compile(r"@(?=[A-Za-z_])")


def quote(text: str, limit: int) -> str:
    """PR text quoted inside an entry: no code spans or @mentions of its own, clipped.

    A clipped backtick span or an ``@decorator`` in a quote would read as a code name or a
    person the entry claims, so both are neutralised.
    """
    return short(_QUOTED_MENTION.sub("", text.replace("`", "'")), limit)


def display_names(files: Sequence[FileFact]) -> dict[str, str]:
    """Basename of each file; where changed files share a basename, the shortest tail of its
    path that no other changed file ends with (``context_parallel/dsa_cp.py``)."""
    by_base: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for f in files:
        parts = PurePosixPath(f.path).parts
        by_base.setdefault(parts[-1] if parts else f.path, []).append((f.path, parts))
    shown: dict[str, str] = {}
    for group in by_base.values():
        for path, mine in group:
            others = [theirs for other, theirs in group if other != path]
            size = 1
            while size < len(mine) and any(theirs[-size:] == mine[-size:] for theirs in others):
                size += 1
            shown[path] = "/".join(mine[-size:]) if others else (mine[-1] if mine else path)
    return shown


def file_name(path: str, names: dict[str, str], cited: Cited) -> str:
    return cited.name(names.get(path, PurePosixPath(path).name), path)

"""Language as a layer: every word prdigest writes, per language, from one data file each.

A locale file (``locales/<code>.toml``) holds a language's verdict phrases and labels, the
words of every output (text, Markdown, site, chat cards, e-mail), the length bounds and the
script rule the verifier applies, the glossary of technical terms, the template writer's
phrasebook and the LLM writer's prompt. Code asks this module for words; it never branches on
a language code. The data model carries ids (levels, area ids), never translated strings, so a
stored dossier or assessment serves every language.

Adding a language: copy ``locales/en.toml`` to ``locales/<code>.toml``, replace its words, and
add one line to :data:`LOCALES`. :func:`load_locale` checks that a locale has every key the
reference locale (``en``) has, so a missing word is reported by its key at load time, not as a
crash in the middle of a digest.

Area names are repository knowledge and live in the presets, one name per language; a preset
without a name in some language falls back along :data:`FALLBACK` (see
:meth:`prdigest.core.presets.AreaRule.text`).
"""

from __future__ import annotations

import functools
import hashlib
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prdigest.core.errors import ConfigError
from prdigest.core.models import Level

# Registry: language code → data file in ``prdigest/core/locales`` (or an absolute path).
LOCALES: dict[str, str] = {
    "zh": "zh.toml",
    "en": "en.toml",
}
DEFAULT_LANG = "zh"  # the language of un-suffixed site pages and of the defaults
REFERENCE = "en"  # every locale must have the keys this one has
FALLBACK = ("en", "zh")  # where an area name missing in a language comes from


class _Data(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Writing(_Data):
    """How sentences are put together in the language."""

    cjk: bool  # a space between Chinese and Latin text; pieces joined without spaces
    translate_titles: bool  # the template writes its own title (else the PR's subject stays)
    capitalize: bool  # a sentence starts with a capital letter
    join: str  # between the sentences of a paragraph
    stop: str
    comma: str
    colon: str
    clause: str  # between a name and what it is for
    then: str  # between two clauses of one sentence
    paren: tuple[str, str]


class Bounds(_Data):
    paragraph_max: int = Field(gt=0)
    paragraph_hard_max: int = Field(gt=0)
    title: tuple[int, int]
    paragraph_deep: tuple[int, int]
    paragraph_short: tuple[int, int]


class Script(_Data):
    """The verifier's language rule: share of Chinese in prose (code names aside)."""

    min_cjk_share: float = Field(ge=0, le=1)
    min_cjk_chars: int = Field(ge=0)
    max_cjk_share: float = Field(ge=0, le=1)


class LevelText(_Data):
    phrase: str  # what an entry's paragraph opens with
    label: str  # badges, lists, counts
    phrase_in_area: str | None = None  # worth_reading, when one area's readers are named


class Locale(_Data):
    """Everything language-specific; get one with :func:`locale`."""

    code: str
    name: str
    html_lang: str
    writing: Writing
    bounds: Bounds
    script: Script
    levels: dict[Level, LevelText]
    text: dict[str, str]
    markdown: dict[str, str]
    site: dict[str, str]
    summary: dict[str, str]
    email: dict[str, str]
    verify: dict[str, Any]
    glossary: dict[str, dict[str, str]]
    template: dict[str, Any]
    llm: dict[str, str]

    def phrase(self, level: Level) -> str:
        return self.levels[level].phrase

    def label(self, level: Level) -> str:
        return self.levels[level].label

    def say(self, section: str, key: str, **values: object) -> str:
        """One text of a section (``text``, ``markdown``, ``site``, ``summary``, ``email``),
        with its placeholders filled."""
        table: Mapping[str, str] = getattr(self, section)
        return table[key].format(**values) if values else table[key]

    def site_words(self) -> dict[str, str]:
        """The words the HTML templates use (``t.*``): shared texts, site texts, ``html_lang``."""
        return {**self.text, **self.site, "html_lang": self.html_lang}

    def metric(self, name: str | None) -> str:
        """A claim's metric as this language writes it (``throughput`` → 吞吐)."""
        if not name:
            return ""
        return self.glossary.get("metric", {}).get(name.lower(), name)

    def empty(self, label: str, tz: str) -> str:
        return self.say("text", "empty", label=label, tz=tz)

    @functools.cached_property
    def key(self) -> str:
        """Identifies this locale's content, for caching what is written with it."""
        digest = hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:12]
        return f"{self.code}:{digest}"


def available() -> tuple[str, ...]:
    """The language codes of the registry, default first."""
    return tuple(sorted(LOCALES, key=lambda code: (code != DEFAULT_LANG, code)))


def _read(code: str) -> dict[str, Any]:
    name = LOCALES.get(code)
    if name is None:
        known = ", ".join(available())
        raise ConfigError(f"unknown language {code!r} (known: {known})", key="lang")
    path = Path(name)
    try:
        if path.is_absolute():
            text = path.read_text(encoding="utf-8")
        else:
            text = resources.files("prdigest.core").joinpath("locales", name).read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read locale file {name}: {exc}", key="lang") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"locale file {name} is not valid TOML: {exc}", key="lang") from exc


def _missing(reference: Mapping[str, Any], data: Mapping[str, Any], prefix: str) -> list[str]:
    """Keys of ``reference`` (recursively) that ``data`` lacks."""
    missing = []
    for key, value in reference.items():
        where = f"{prefix}{key}"
        if key not in data:
            missing.append(where)
        elif isinstance(value, Mapping) and isinstance(data[key], Mapping) and value:
            missing += _missing(value, data[key], where + ".")
    return missing


@functools.cache
def locale(code: str) -> Locale:
    """The locale of a language code; raises :class:`ConfigError` naming a missing key."""
    data = _read(code)
    if code != REFERENCE:
        missing = _missing(_read(REFERENCE), data, "")
        if missing:
            raise ConfigError(
                f"locale {code!r} lacks {len(missing)} key(s), e.g. {', '.join(missing[:3])}",
                key="lang",
            )
    try:
        return Locale.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"locale {code!r}: {where}: {first['msg']}", key="lang") from exc


def check_lang(code: str) -> str:
    """``code`` when it names a registered language, else a :class:`ConfigError`."""
    if code not in LOCALES:
        known = ", ".join(available())
        raise ConfigError(f"unknown language {code!r} (known: {known})", key="lang")
    return code

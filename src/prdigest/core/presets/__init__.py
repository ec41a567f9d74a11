"""Repository presets: repo-specific knowledge as data (DESIGN §5).

A preset is a TOML file with

* ``repo``, ``version`` and ``bots`` (logins treated as bots even when a source says "User");
* ``env_prefixes``: prefixes of the project's environment variables (``VLLM_``), so new ones
  are noticed wherever they appear;
* ``narrow``: title words and tags that confine a PR to one audience (a device, a platform, a
  model family), so triage can tell "for everyone" from "for the ROCm users";
* ``[roles]``: glob lists that give a changed file its role (test, docs, ci, build, config, deps,
  generated); anything else is source;
* ``[[area]]`` tables: ``id``, ``name.<lang>`` (the area's name in each language),
  ``audience.<lang>`` (the readers' phrase that completes "尤其适合…" / "especially for …"),
  ``paths`` (globs), ``tags`` (title tags that point to the area), ``core`` (a fix here matters
  more) and ``weight``. The older ``name``/``name_en``/``audience``/``audience_en`` strings are
  still read (as ``zh``/``en``);
* ``[[tag]]`` tables: title-tag spellings (``match``) mapped to a change ``kind`` and/or ``area``.

Globs: ``*`` stays inside one path segment, ``**`` spans segments (``a/**`` matches everything
under ``a/``), matching is case-sensitive and anchored at the repository root.

``vllm-project/vllm`` ships with the package; every other repository gets ``generic.toml``.
A user preset file can be passed explicitly and wins over the bundled ones.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tomllib
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from prdigest.core.errors import ConfigError
from prdigest.core.locale import FALLBACK
from prdigest.core.models import AreaText, Kind, Role

BUNDLED = {
    "vllm-project/vllm": "vllm-project__vllm.toml",
    "vllm-project/vllm-ascend": "vllm-project__vllm-ascend.toml",
}
BOT_SUFFIXES = ("[bot]", "-bot", "-robot")


class _PresetModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AreaRule(_PresetModel):
    id: str
    name: dict[str, str]  # language → name
    audience: dict[str, str] = {}  # language → readers' phrase; empty: no particular readers
    paths: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    core: bool = False
    weight: float = Field(default=1.0, ge=0.0, le=3.0)

    @model_validator(mode="before")
    @classmethod
    def _legacy_strings(cls, data: Any) -> Any:
        """``name = "…"`` + ``name_en = "…"`` (and the audience pair) as ``zh``/``en``."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for key in ("name", "audience"):
            if isinstance(data.get(key), str) or f"{key}_en" in data:
                value = {"zh": data.pop(key, ""), "en": data.pop(f"{key}_en", "")}
                data[key] = {lang: text for lang, text in value.items() if text}
        return data

    def text(self, lang: str) -> AreaText:
        """Name and readers in ``lang``, else in the first :data:`FALLBACK` language that has
        them (the name falls back to the id)."""
        order = (lang, *FALLBACK)
        name = next((self.name[x] for x in order if self.name.get(x)), self.id)
        audience = next((self.audience[x] for x in order if self.audience.get(x)), "")
        return AreaText(name=name, audience=audience)


class TagRule(_PresetModel):
    match: tuple[str, ...]
    kind: Kind | None = None
    area: str | None = None


class Roles(_PresetModel):
    test: tuple[str, ...] = ()
    docs: tuple[str, ...] = ()
    ci: tuple[str, ...] = ()
    build: tuple[str, ...] = ()
    config: tuple[str, ...] = ()
    deps: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()


class Preset(_PresetModel):
    repo: str
    version: int = 1
    bots: tuple[str, ...] = ()
    env_prefixes: tuple[str, ...] = ()
    narrow: tuple[str, ...] = ()
    roles: Roles = Roles()
    area: tuple[AreaRule, ...] = ()
    tag: tuple[TagRule, ...] = ()

    @functools.cached_property
    def key(self) -> str:
        """Identifies this preset's content (not just its version) for caching derived artefacts."""
        digest = hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:12]
        return f"{self.repo}@{self.version}:{digest}"

    def is_bot(self, login: str | None, author_type: str | None = None) -> bool:
        if author_type == "Bot":
            return True
        if not login:
            return False
        low = login.lower()
        # service accounts are named like bots: "pre-commit-ci[bot]", "release-bot"
        return low.endswith(BOT_SUFFIXES) or low in {b.lower() for b in self.bots}

    @functools.cached_property
    def _roles_seen(self) -> dict[str, tuple[Role, bool]]:
        return {}  # a long history touches the same paths again and again

    def role_of(self, path: str) -> tuple[Role, bool]:
        """(role, generated) of a path: the first role whose globs match, else source."""
        known = self._roles_seen.get(path)
        if known is None:
            known = self._roles_seen[path] = self._role_of(path)
        return known

    @functools.cached_property
    def _role_globs(
        self,
    ) -> tuple[re.Pattern[str] | None, tuple[tuple[Role, re.Pattern[str]], ...]]:
        """The generated-file globs and each role's globs as one regex each (compiled once)."""
        roles = (Role.TEST, Role.CI, Role.DEPS, Role.BUILD, Role.DOCS, Role.CONFIG)
        by_role = tuple(
            (role, regex)
            for role in roles
            if (regex := globs_regex(getattr(self.roles, role.value))) is not None
        )
        return globs_regex(self.roles.generated), by_role

    def _role_of(self, path: str) -> tuple[Role, bool]:
        generated_globs, by_role = self._role_globs
        generated = generated_globs is not None and generated_globs.match(path) is not None
        for role, regex in by_role:
            if regex.match(path):
                return role, generated
        return Role.SOURCE, generated

    @functools.cached_property
    def best_areas_seen(self) -> dict[str, AreaRule | None]:
        """Memo of the most specific area per path (filled by ``analyze.classify.best_area``)."""
        return {}

    @functools.cached_property
    def _area_globs(self) -> tuple[tuple[AreaRule, re.Pattern[str]], ...]:
        return tuple((a, regex) for a in self.area if (regex := globs_regex(a.paths)) is not None)

    def areas_of(self, path: str) -> list[AreaRule]:
        return [a for a, regex in self._area_globs if regex.match(path)]

    def area_by_id(self, area_id: str) -> AreaRule | None:
        return next((a for a in self.area if a.id == area_id), None)

    @functools.cached_property
    def _tag_index(self) -> tuple[dict[str, TagRule], dict[str, tuple[AreaRule, ...]]]:
        """Normalised spelling → the first tag rule, and → the areas naming it: built once,
        so a lookup normalises only the tag asked about."""
        rules: dict[str, TagRule] = {}
        for rule in self.tag:
            for spelling in rule.match:
                rules.setdefault(_norm_tag(spelling), rule)
        areas: dict[str, list[AreaRule]] = {}
        for area in self.area:
            for spelling in dict.fromkeys(_norm_tag(t) for t in area.tags):
                areas.setdefault(spelling, []).append(area)
        return rules, {spelling: tuple(found) for spelling, found in areas.items()}

    def tag_rule(self, tag: str) -> TagRule | None:
        return self._tag_index[0].get(_norm_tag(tag))

    def areas_for_tag(self, tag: str) -> list[AreaRule]:
        return list(self._tag_index[1].get(_norm_tag(tag), ()))


_TAG_NOISE = re.compile(r"[\s_-]+")


@functools.lru_cache(maxsize=4096)
def _norm_tag(tag: str) -> str:
    return _TAG_NOISE.sub("", tag).lower()


@functools.lru_cache(maxsize=4096)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob (``*`` within a segment, ``**`` across segments)."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def globs_regex(patterns: Iterable[str]) -> re.Pattern[str] | None:
    """One regex that matches a path exactly when one of the globs does (None: no globs)."""
    parts = [f"(?:{glob_to_regex(p).pattern})" for p in patterns]
    return re.compile("|".join(parts)) if parts else None


def parse_preset(text: str, *, origin: str) -> Preset:
    """Parse preset TOML; errors name the file and the key."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", key=origin) from exc
    try:
        preset = Preset.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(first["msg"], key=f"{origin}: {where}") from exc
    ids = [a.id for a in preset.area]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"duplicate area id {duplicates[0]!r}", key=origin)
    for rule in preset.tag:
        if rule.area and rule.area not in ids:
            raise ConfigError(f"tag rule names unknown area {rule.area!r}", key=origin)
    return preset


@functools.lru_cache(maxsize=16)
def _bundled(filename: str) -> Preset:
    text = resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")
    return parse_preset(text, origin=filename)


def load_preset(repo: str, path: Path | None = None) -> Preset:
    """The preset for ``repo``: an explicit file, else the bundled one, else the generic one."""
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read preset: {exc.strerror}", key=str(path)) from exc
        return parse_preset(text, origin=str(path))
    filename = BUNDLED.get(repo)
    if filename is not None:
        return _bundled(filename)
    return _bundled("generic.toml").model_copy(update={"repo": repo})

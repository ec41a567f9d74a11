"""Every problem of a ``prdigest.toml`` at once, in plain words, each with its key.

pydantic stops at the first layer that fails: a check across keys (a git source needs a
``path``, a repository names an unknown channel) runs only once every key of its table is
valid, so a file would be reported in rounds. :func:`validate` reports all of them in one go:
it validates, records the problems, sets the offending parts aside (a bad key is dropped, a
table that cannot be repaired is replaced by a valid stand-in that keeps its name) and
validates again, until nothing new is found. The stand-ins are never returned as the config.

Messages are the project's own words, not pydantic's ("must be a list", "must be at most 200"),
an unknown key gets "did you mean …?", and a key inside a ``[[repos]]`` table names the
repository too: ``repos[1].timezone (vllm-project/vllm-ascend)``.

:func:`check_environment` adds what only the running machine can tell: environment variables
that are unset or do not hold a URL, files and clones that are not there.
"""

from __future__ import annotations

import copy
import difflib
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from prdigest.core.errors import ConfigError
from prdigest.publish.channels import BY_TYPE, CHANNEL_TYPES
from prdigest.publish.channels.email import EmailConfig

MAX_ROUNDS = 8  # each round sets aside at least one failing part; files have few parts
STAND_IN_CHANNEL = {"type": "slack", "webhook_env": "PRDIGEST_STAND_IN"}
Problem = tuple[str, str]


def _models() -> tuple[type[BaseModel], type[BaseModel], type[BaseModel]]:
    from prdigest.pipeline.config import Config, RepoConfig, SiteConfig  # config imports us

    return Config, SiteConfig, RepoConfig


# -- keys and words ---------------------------------------------------------------------------


def _key(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for index, part in enumerate(loc):
        if isinstance(part, int):
            parts.append(f"[{part}]")
            continue
        if index == 2 and loc[0] == "channels" and part in CHANNEL_TYPES:
            continue  # the discriminator pydantic adds to the location
        if part.startswith("function-") or part in ("tagged-union",):
            continue
        parts.append(("." if parts else "") + part)
    return "".join(parts) or "(file)"


def error_key(error: Mapping[str, Any], data: Any) -> str:
    """Where an error is, as a key path, with the repository's name for a ``[[repos]]`` key."""
    key = _key(tuple(error["loc"]))
    extra = (error.get("ctx") or {}).get("key") if error["type"] == "config_key" else None
    if extra:
        joint = "" if str(extra).startswith("[") else "."
        key = str(extra) if key == "(file)" else f"{key}{joint}{extra}"
    return with_repo_name(key, data)


def with_repo_name(key: str, data: Any) -> str:
    """``repos[1].timezone`` → ``repos[1].timezone (owner/name)`` when the table names one."""
    match = re.match(r"^repos\[(\d+)\]", key)
    repos = data.get("repos") if isinstance(data, dict) else None
    if match is None or not isinstance(repos, list):
        return key
    index = int(match.group(1))
    table = repos[index] if index < len(repos) else None
    name = table.get("name") if isinstance(table, dict) else None
    return f"{key} ({name})" if isinstance(name, str) and name else key


PLAIN = {
    "missing": "required key is missing",
    "string_type": "must be a string (in quotes)",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "tuple_type": 'must be a list, e.g. ["a", "b"]',
    "list_type": 'must be a list, e.g. ["a", "b"]',
    "dict_type": "must be a table",
    "model_type": "must be a table",
    "model_attributes_type": "must be a table",
    "path_type": "must be a path (a string)",
}


def message(error: Mapping[str, Any], data: Any) -> str:
    """A pydantic error in the project's words."""
    kind = str(error["type"])
    ctx = error.get("ctx") or {}
    if kind in PLAIN:
        return PLAIN[kind]
    if kind == "extra_forbidden":
        return _unknown_key(tuple(error["loc"]), data)
    if kind == "union_tag_invalid":
        return f"unknown channel type {ctx.get('tag')!r} (known: {', '.join(CHANNEL_TYPES)})"
    if kind == "union_tag_not_found":
        return f"'type' is missing (one of: {', '.join(CHANNEL_TYPES)})"
    bounds = {
        "greater_than_equal": f"must be at least {ctx.get('ge')}",
        "less_than_equal": f"must be at most {ctx.get('le')}",
        "greater_than": f"must be more than {ctx.get('gt')}",
        "less_than": f"must be less than {ctx.get('lt')}",
        "too_short": f"must have at least {ctx.get('min_length')} item(s)",
        "too_long": f"must have at most {ctx.get('max_length')} item(s)",
        "string_too_short": "must not be empty"
        if ctx.get("min_length") == 1
        else f"must have at least {ctx.get('min_length')} characters",
        "string_too_long": f"must have at most {ctx.get('max_length')} characters",
        "literal_error": f"must be one of: {ctx.get('expected')}",
    }
    if kind in bounds:
        return bounds[kind]
    text = str(error["msg"])
    return text.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _model_at(loc: tuple[int | str, ...], data: Any) -> type[BaseModel] | None:
    """The config model of the table that holds the key at ``loc``."""
    config, site, repo = _models()
    table = loc[:-1]
    if not table:
        return config
    if table == ("site",):
        return site
    if len(table) == 2 and table[0] == "repos":
        return repo
    if len(table) >= 2 and table[0] == "channels":
        kind = BY_TYPE.get(str(table[2])) if len(table) == 3 else None
        return kind.config if kind is not None else None
    return None


def _names(model: type[BaseModel]) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


def _unknown_key(loc: tuple[int | str, ...], data: Any) -> str:
    model = _model_at(loc, data)
    if model is None:
        return "unknown key"
    known = _names(model)
    close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
    if close:
        return f"unknown key; did you mean {close[0]!r}?"
    return f"unknown key (known: {', '.join(known)})"


# -- validate, set aside, validate again -----------------------------------------------------


class _Work:
    """A copy of the file's data that rounds of validation repair, and what was put in."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = copy.deepcopy(data)
        self.stand_ins: set[tuple[str, int | str]] = set()

    def repair(self, error: Mapping[str, Any]) -> bool:
        """Set aside the part an error is about; False when nothing could be done."""
        loc = tuple(error["loc"])
        if error["type"] == "extra_forbidden" and self._rename(loc):
            return True
        extra = (error.get("ctx") or {}).get("key") if error["type"] == "config_key" else None
        if extra and not loc:
            loc = _parse_key(str(extra))
        if not loc:
            return False
        head = loc[0]
        if head == "repos" and len(loc) >= 2 and isinstance(loc[1], int):
            return self._repair_repo(loc[1], loc[2:])
        if head == "channels" and len(loc) >= 2:
            return self._stand_in_channel(str(loc[1]))
        if head == "repos":  # the list itself: one valid stand-in keeps the other checks going
            self.data["repos"] = [{"name": "stand-in/repository", "source": "github"}]
            self.stand_ins.add(("repos", 0))
            return True
        if head == "site" and len(loc) >= 2 and isinstance(self.data.get("site"), dict):
            return self.data["site"].pop(loc[1], None) is not None
        return self.data.pop(head, None) is not None  # a top-level key (db, site, unknown)

    def _rename(self, loc: tuple[int | str, ...]) -> bool:
        """A misspelt key is read as the key it resembles, so the checks after it judge what
        was meant (``sourse = "git"`` is still a git source that needs a path)."""
        table: Any = self.data
        for part in loc[:-1]:
            if part in CHANNEL_TYPES and isinstance(table, dict) and "type" in table:
                continue  # the discriminator pydantic adds to a channel's location
            try:
                table = table[part]
            except (KeyError, IndexError, TypeError):
                return False
        model = _model_at(loc, self.data)
        if model is None or not isinstance(table, dict):
            return False
        close = difflib.get_close_matches(str(loc[-1]), _names(model), n=1, cutoff=0.6)
        if not close or close[0] in table:
            return False
        table[close[0]] = table.pop(loc[-1])
        return True

    def _repair_repo(self, index: int, rest: tuple[int | str, ...]) -> bool:
        repos = self.data.get("repos")
        if not isinstance(repos, list) or index >= len(repos) or ("repos", index) in self.stand_ins:
            return False
        table = repos[index]
        _, _, repo = _models()
        if isinstance(table, dict) and rest and isinstance(rest[0], str):
            field = repo.model_fields.get(rest[0])
            if (field is None or not field.is_required()) and rest[0] in table:
                del table[rest[0]]  # an unknown key, or one with a default
                return True
            if rest[0] == "name" and table.get("name") != f"stand-in/repository-{index}":
                table["name"] = f"stand-in/repository-{index}"  # the other checks still run
                return True
        name = table.get("name") if isinstance(table, dict) else None
        stand_in: dict[str, Any] = {"name": f"stand-in/repository-{index}", "source": "github"}
        if isinstance(name, str) and rest[:1] != ("name",):
            stand_in["name"] = name
        for key in ("lang", "channels"):
            if isinstance(table, dict) and key in table and rest[:1] != (key,):
                stand_in[key] = table[key]
        repos[index] = stand_in
        self.stand_ins.add(("repos", index))
        return True

    def _stand_in_channel(self, name: str) -> bool:
        channels = self.data.get("channels")
        if not isinstance(channels, dict) or ("channels", name) in self.stand_ins:
            return False
        channels[name] = dict(STAND_IN_CHANNEL)
        self.stand_ins.add(("channels", name))
        return True


def _parse_key(key: str) -> tuple[int | str, ...]:
    """``repos[1].name`` → ``("repos", 1, "name")``."""
    parts: list[int | str] = []
    for name, index in re.findall(r"([A-Za-z_][\w-]*)|\[(\d+)\]", key):
        parts.append(int(index) if index else name)
    return tuple(parts)


@dataclass(frozen=True)
class Checked:
    """What :func:`collect` found: every problem, and the config with valid stand-ins where
    parts failed (for the checks that need a config), or None when none could be built."""

    config: Any
    problems: list[Problem]
    stand_ins: frozenset[tuple[str, int | str]]


def collect(data: dict[str, Any]) -> Checked:
    """Every problem of the file's ``data``, from rounds of validation (see the module doc)."""
    config, _, _ = _models()
    work = _Work(data)
    problems: list[Problem] = []
    valid = None
    for _ in range(MAX_ROUNDS):
        try:
            valid = config.model_validate(work.data)
            break
        except ValidationError as exc:
            errors = exc.errors()
        repaired = False
        earlier = frozenset(work.stand_ins)  # stand-ins of this round may still have problems
        meant = _meant_keys(errors, work.data)
        for error in errors:
            found = (error_key(error, data), message(error, data))
            misspelt = error["type"] == "missing" and tuple(error["loc"]) in meant
            if found not in problems and not _about(error, earlier) and not misspelt:
                problems.append(found)
            repaired = work.repair(error) or repaired
        if not repaired:
            break
    return Checked(valid, problems, frozenset(work.stand_ins))


def _meant_keys(errors: list[Any], data: Any) -> set[tuple[int | str, ...]]:
    """Locations of keys an unknown key was most likely meant to be: "required key is missing"
    for them would only repeat the misspelling."""
    meant: set[tuple[int | str, ...]] = set()
    for error in errors:
        loc = tuple(error["loc"])
        model = _model_at(loc, data) if error["type"] == "extra_forbidden" else None
        if model is not None:
            close = difflib.get_close_matches(str(loc[-1]), _names(model), n=1, cutoff=0.6)
            meant.update((*loc[:-1], name) for name in close)
    return meant


def _about(error: Mapping[str, Any], stand_ins: frozenset[tuple[str, int | str]]) -> bool:
    """Whether an error concerns a stand-in (so it is about our repair, not the file)."""
    loc = tuple(error["loc"])
    return len(loc) >= 2 and (str(loc[0]), loc[1]) in stand_ins


# -- what only the machine can tell ----------------------------------------------------------


def check_environment(
    config: Any, env: Mapping[str, str], stand_ins: frozenset[tuple[str, int | str]] = frozenset()
) -> list[Problem]:
    """Unset or malformed environment variables, missing files and clones."""
    problems: list[Problem] = []
    for name, channel in config.channels.items():
        if ("channels", name) in stand_ins:
            continue
        problems += _channel_environment(name, channel, env)
    for index, repo in enumerate(config.repos):
        if ("repos", index) in stand_ins:
            continue
        key = f"repos[{index}]"
        label = f" ({repo.name})"
        if repo.source == "jsonl" and repo.path is not None and not repo.path.is_file():
            problems.append((f"{key}.path{label}", f"no such file: {repo.path}"))
        if repo.source == "git" and repo.path is not None:
            problems += _clone_problems(f"{key}.path{label}", repo.path)
        if repo.preset is not None and not repo.preset.is_file():
            problems.append((f"{key}.preset{label}", f"no such file: {repo.preset}"))
    if config.site.dir.exists() and not config.site.dir.is_dir():
        problems.append(("site.dir", f"{config.site.dir} exists and is not a directory"))
    return problems


def _channel_environment(name: str, channel: Any, env: Mapping[str, str]) -> list[Problem]:
    from prdigest.publish.channels import secret_fields

    problems: list[Problem] = []
    for field in secret_fields(channel):
        var = getattr(channel, field, None)
        if not var:
            continue
        value = env.get(var, "")
        key = f"channels.{name}.{field}"
        if not value:
            problems.append((key, f"environment variable {var} is not set"))
        elif field == "webhook_env" and not re.match(r"^https?://[^\s/]+", value.strip()):
            problems.append((key, f"environment variable {var} does not hold an http(s) URL"))
    if isinstance(channel, EmailConfig) and channel.ca_file and not channel.ca_file.is_file():
        problems.append((f"channels.{name}.ca_file", f"no such file: {channel.ca_file}"))
    return problems


def _clone_problems(key: str, path: Path) -> list[Problem]:
    from prdigest.sources.git.runner import check_repository

    try:
        check_repository(path)
    except ConfigError as exc:
        return [(key, exc.detail)]
    return []


# -- `prdigest config check` ------------------------------------------------------------------


@dataclass(frozen=True)
class FileCheck:
    """``config check``'s findings: the config (None with problems), problems and warnings."""

    config: Any
    problems: list[Problem]
    warnings: list[str]


def check_file(path: Path, env: Mapping[str, str]) -> FileCheck:
    """Everything wrong with the config file at ``path`` on this machine, at once."""
    from prdigest.pipeline.config import read_config_text, resolve_paths

    try:
        data = tomllib.loads(read_config_text(path))
    except tomllib.TOMLDecodeError as exc:
        return FileCheck(None, [("(file)", f"not valid TOML: {exc}")], [])
    checked = collect(data)
    problems = list(checked.problems)
    warnings: list[str] = []
    if checked.config is not None:
        config = resolve_paths(checked.config, path.resolve().parent)
        problems += check_environment(config, env, checked.stand_ins)
        if config.channels and not config.site.base_url:
            warnings.append("site.base_url: not set; messages cannot link to the full digest page")
    return FileCheck(None if problems else config, problems, warnings)

"""The configuration file ``prdigest.toml``: repositories, channels and the site.

The file is declared once here, as pydantic models; ``prdigest config check``, ``run-all`` and
``publish`` read it through :func:`load_config`, and ``docs/publish.md`` documents every key (a
test walks these models and checks that each key is in the docs).

Secrets never sit in the file. A channel names the *environment variable* that holds its webhook
URL, signing secret or SMTP password (``webhook_env``, ``secret_env``, ``password_env``); the CLI
reads the values and hands them to the channel as :class:`Secret`, whose repr and str are masked.
A secret-looking key (``webhook``, ``secret``, ``password`` …) is rejected with a message that
says which ``*_env`` key to use instead.

Every problem is reported with the key it concerns (``repos[0].timezone``,
``channels.team.webhook_env``), all problems of a file at once.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, field_validator, model_validator

from prdigest.core.configbase import ConfigModel, problem
from prdigest.core.errors import ConfigError, ConfigFileError
from prdigest.core.locale import DEFAULT_LANG, available
from prdigest.core.models import Window
from prdigest.core.names import RULE, is_repo_name
from prdigest.core.window import DEFAULT_TZ, report_window
from prdigest.publish.channels import KINDS, ChannelConfig, secret_fields
from prdigest.publish.channels.email import EmailConfig
from prdigest.publish.deliver import DeliveryMode
from prdigest.publish.site.builder import SiteOptions

DEFAULT_CONFIG = "prdigest.toml"
CHANNEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _known_lang(value: str) -> str:
    if value not in available():
        raise ValueError(f"unknown language {value!r} (known: {', '.join(available())})")
    return value


class SiteConfig(ConfigModel):
    """``[site]``: where the static site goes and how it links to itself."""

    dir: Path = Field(default=Path("site"), description="Output directory of the static site.")
    base_url: str | None = Field(
        default=None,
        max_length=300,  # messages carry it once per entry; it must leave room for them
        description="Public URL of the site (https://…/); chat messages and feeds link to it.",
    )
    title: str = Field(default="PR 阅读摘要", min_length=1, max_length=200)
    lang: str = DEFAULT_LANG
    feed_entries: int = Field(default=30, ge=1, le=1000)

    _check_lang = field_validator("lang")(_known_lang)

    def options(self, out: Path | None = None, base_url: str | None = None) -> SiteOptions:
        """What the site builder is given: this table, with a directory or URL overridden."""
        url = base_url or self.base_url
        if url and not url.endswith("/"):
            url += "/"
        return SiteOptions(
            out_dir=out or self.dir,
            base_url=url,
            title=self.title,
            lang=self.lang,
            feed_entries=self.feed_entries,
        )

    @field_validator("base_url")
    @classmethod
    def _absolute_http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not re.match(r"^https?://[^\s/]+", value):
            raise ValueError(f"must be an http(s) URL, got {value!r}")
        return value if value.endswith("/") else value + "/"


class LLMConfig(ConfigModel):
    """``[llm]``: how the LLM writer talks to its model (the environment overrides each key;
    the key itself only ever comes from ``PRDIGEST_LLM_API_KEY``)."""

    base_url: str | None = Field(default=None, description="Endpoint up to and including /v1.")
    model: str | None = Field(default=None, min_length=1)
    timeout: float | None = Field(default=None, gt=0, description="Seconds of silence allowed.")
    concurrency: int | None = Field(default=None, ge=1, le=64)
    context: int | None = Field(default=None, ge=1_024, description="The server's context size.")
    max_output_tokens: int | None = Field(default=None, ge=100)
    temperature: float | None = Field(default=None, ge=0, le=2)
    retries: int | None = Field(default=None, ge=0, le=6)
    repairs: int | None = Field(default=None, ge=0, le=3)
    pack: int | None = Field(default=None, ge=1, le=8)
    json_mode: Literal["auto", "on", "off"] | None = None
    budget_tokens: int | None = Field(default=None, ge=1_000)
    max_cost_tokens: int | None = Field(default=None, ge=0)

    def settings(self) -> dict[str, Any]:
        """The table as :class:`~prdigest.write.llm.settings.LLMSettings` field names."""
        names = {
            "timeout": "timeout_s",
            "context": "context_tokens",
            "retries": "max_retries",
            "pack": "pack_entries",
        }
        return {names.get(k, k): v for k, v in self.model_dump().items() if v is not None}


class RepoConfig(ConfigModel):
    """One ``[[repos]]`` table: a repository and how its digest is made."""

    name: str
    source: str = "jsonl"
    path: Path | None = None
    preset: Path | None = None
    timezone: str = DEFAULT_TZ
    window: Literal["day", "week"] = "day"
    top: int = Field(default=8, ge=0, le=200)
    lang: str = DEFAULT_LANG
    writer: str = "template"
    model: str | None = None
    channels: tuple[str, ...] | None = None
    fetch: bool = True  # git: `git fetch` the clone before reading the window
    skip_empty: bool = True  # post nothing for a window without merged PRs

    def window_for(self, day: date | None, now: datetime) -> Window:
        """The window a scheduled run digests: ``day``, else yesterday, in the repo's zone."""
        return report_window(self.timezone, self.window, day, now)

    @field_validator("name")
    @classmethod
    def _owner_slash_name(cls, value: str) -> str:
        if not is_repo_name(value):
            raise ValueError(f"must be owner/name, got {value!r} ({RULE})")
        return value

    _check_lang = field_validator("lang")(_known_lang)

    @field_validator("source")
    @classmethod
    def _known_source(cls, value: str) -> str:
        from prdigest.pipeline.registry import SOURCES  # the registry imports this module

        if value not in SOURCES:
            raise ValueError(f"unknown source {value!r} (known: {', '.join(SOURCES)})")
        return value

    @field_validator("writer")
    @classmethod
    def _known_writer(cls, value: str) -> str:
        from prdigest.pipeline.registry import WRITERS

        if value not in WRITERS:
            raise ValueError(f"unknown writer {value!r} (known: {', '.join(WRITERS)})")
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r}") from exc
        return value

    @model_validator(mode="after")
    def _source_needs(self) -> RepoConfig:
        from prdigest.pipeline.registry import SOURCES

        path = SOURCES[self.source].path
        if path and self.path is None:
            raise problem("path", f"source {self.source!r} needs 'path' ({path})")
        return self


class Config(ConfigModel):
    """The whole ``prdigest.toml``."""

    db: str | None = None
    site: SiteConfig = SiteConfig()
    llm: LLMConfig = LLMConfig()
    repos: tuple[RepoConfig, ...]
    channels: dict[str, ChannelConfig] = Field(default_factory=dict)

    @field_validator("channels")
    @classmethod
    def _channel_names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if not CHANNEL_NAME.match(name):
                raise ValueError(f"channel name {name!r} must be letters, digits, '-', '_', '.'")
        return value

    @model_validator(mode="after")
    def _references(self) -> Config:
        if not self.repos:
            raise problem("repos", "configure at least one [[repos]] table")
        seen: set[tuple[str, str]] = set()
        for index, repo in enumerate(self.repos):
            key = (repo.name, repo.lang)
            if key in seen:
                raise problem(
                    f"repos[{index}].name", f"{repo.name} ({repo.lang}) is configured twice"
                )
            seen.add(key)
            for name in repo.channels or ():
                if name not in self.channels:
                    known = ", ".join(sorted(self.channels)) or "none"
                    raise problem(
                        f"repos[{index}].channels", f"no channel named {name!r} (known: {known})"
                    )
        return self

    @model_validator(mode="after")
    def _llm_model(self) -> Config:
        for index, repo in enumerate(self.repos):
            if repo.writer == "llm" and not (repo.model or self.llm.model):
                raise problem(f"repos[{index}].model", "writer 'llm' needs 'model' (or llm.model)")
        return self

    def delivery_mode(self, name: str) -> DeliveryMode:
        """The delivery rule of channel ``name``: its ``delivery`` setting, else e-mail
        ``at-least-once`` (a stable Message-ID lets clients fold a resend), chat
        ``at-most-once`` (chat services have no idempotency key)."""
        channel = self.channels.get(name)
        if channel is not None and channel.delivery is not None:
            return channel.delivery
        return (
            "at-least-once" if channel is not None and channel.type == "email" else "at-most-once"
        )

    def channels_for(self, repo: RepoConfig) -> list[str]:
        """Channel names a repository's digest goes to (all channels unless it lists some)."""
        return list(repo.channels) if repo.channels is not None else list(self.channels)

    def repo(self, name: str) -> RepoConfig:
        for repo in self.repos:
            if repo.name == name:
                return repo
        known = ", ".join(r.name for r in self.repos)
        raise ConfigError(f"{name!r} is not configured (configured: {known})", key="--repo")

    def secret_env_names(self) -> list[tuple[str, str]]:
        """(key, variable name) of every environment variable the channels name."""
        found: list[tuple[str, str]] = []
        for name, channel in self.channels.items():
            for field in secret_fields(channel):
                var = getattr(channel, field, None)
                if var:
                    found.append((f"channels.{name}.{field}", var))
        return found


def parse_config(text: str, *, path: str = DEFAULT_CONFIG, base: Path | None = None) -> Config:
    """Parse and validate a config text; relative paths are taken from ``base``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(path, [("(file)", f"not valid TOML: {exc}")]) from exc
    from prdigest.pipeline.configcheck import collect  # it validates with the models here

    checked = collect(data)
    if checked.problems or checked.config is None:
        raise ConfigFileError(path, checked.problems or [("(file)", "not a valid config")])
    config: Config = checked.config
    return resolve_paths(config, base) if base is not None else config


def read_config_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(
            "config file not found (`prdigest init` writes one)", key=str(path)
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file: {exc}", key=str(path)) from exc


def load_config(path: Path) -> Config:
    """Read and validate ``prdigest.toml``; paths in it are relative to its directory."""
    return parse_config(read_config_text(path), path=str(path), base=path.resolve().parent)


def resolve_paths(config: Config, base: Path) -> Config:
    def absolute(value: Path | None) -> Path | None:
        return None if value is None else (base / value.expanduser())

    repos = tuple(
        repo.model_copy(update={"path": absolute(repo.path), "preset": absolute(repo.preset)})
        for repo in config.repos
    )
    site = config.site.model_copy(update={"dir": absolute(config.site.dir)})
    db = config.db
    if db is not None and "://" not in db:
        db = str(base / Path(db).expanduser())
    channels = {
        name: (
            channel.model_copy(update={"ca_file": absolute(channel.ca_file)})
            if isinstance(channel, EmailConfig)
            else channel
        )
        for name, channel in config.channels.items()
    }
    return config.model_copy(update={"repos": repos, "site": site, "db": db, "channels": channels})


def missing_env(config: Config, environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(key, variable) of each environment variable the config names that is unset or empty."""
    return [(key, var) for key, var in config.secret_env_names() if not environ.get(var)]


def config_keys() -> list[str]:
    """Every key the file accepts, as dotted paths (``site.base_url``, ``channels.*.top``)."""
    keys: list[str] = []

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            key = f"{prefix}{field.alias or name}"
            keys.append(key)
            if key == "site":
                walk(SiteConfig, "site.")
            elif key == "llm":
                walk(LLMConfig, "llm.")
            elif key == "repos":
                walk(RepoConfig, "repos.")

    walk(Config, "")
    for channel in (kind.config for kind in KINDS):
        for name, field in channel.model_fields.items():
            key = f"channels.*.{field.alias or name}"
            if key not in keys:
                keys.append(key)
    return keys

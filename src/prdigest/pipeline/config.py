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

import logging
import re
import tomllib
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from email.utils import parseaddr
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from prdigest.core.errors import ConfigError, ConfigFileError
from prdigest.core.models import Window
from prdigest.core.window import DEFAULT_TZ, day_window

DEFAULT_CONFIG = "prdigest.toml"
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$")
CHANNEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SECRET_KEYS = {
    "webhook": "webhook_env",
    "webhook_url": "webhook_env",
    "url": "webhook_env",
    "secret": "secret_env",
    "sign_secret": "secret_env",
    "token": "webhook_env",
    "password": "password_env",
}


MASK = "[secure]"
_KNOWN_SECRETS: set[str] = set()  # every secret value (and URL part) of this process


def _fragments(value: str) -> set[str]:
    """The value and, for a URL, the parts that carry its secret (path segments, query values)."""
    parts = {value}
    split = urlsplit(value)
    if split.scheme and split.netloc:
        parts.add(split.path)
        parts.update(s for s in split.path.split("/") if len(s) >= 8)
        parts.add(split.query)
        parts.update(v for values in parse_qs(split.query).values() for v in values)
    return {p for p in parts if len(p) >= 6}


def redact(text: str) -> str:
    """``text`` with every known secret value (or secret part of a URL) replaced by [secure]."""
    for value in sorted(_KNOWN_SECRETS, key=len, reverse=True):
        if value in text:
            text = text.replace(value, MASK)
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that masks known secrets (httpx logs request URLs at INFO level)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def protect_loggers(*names: str) -> None:
    """Install :class:`RedactingFilter` on these loggers (once each)."""
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())


class Secret:
    """A secret value read from the environment; shown as ``[secure]`` everywhere.

    Creating one also registers it with :func:`redact`, so error texts that echo it (a service
    repeating the URL it was called on) and log records of protected loggers are masked.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        _KNOWN_SECRETS.update(_fragments(value))

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret([secure])"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def _problem(key: str, message: str) -> PydanticCustomError:
    """A validation problem about ``key`` (relative to the table being validated)."""
    return PydanticCustomError("config_key", message, {"key": key})


def _env_name(value: str | None) -> str | None:
    if value is not None and not ENV_NAME.match(value):
        raise ValueError(
            f"must be the NAME of an environment variable (like PRDIGEST_WEBHOOK), got {value!r}"
        )
    return value


EnvName = Annotated[str, Field(min_length=1, max_length=128)]


class SiteConfig(_Config):
    """``[site]``: where the static site goes and how it links to itself."""

    dir: Path = Field(default=Path("site"), description="Output directory of the static site.")
    base_url: str | None = Field(
        default=None,
        description="Public URL of the site (https://…/); chat messages and feeds link to it.",
    )
    title: str = Field(default="PR 阅读摘要", min_length=1, max_length=200)
    lang: Literal["zh", "en"] = "zh"
    feed_entries: int = Field(default=30, ge=1, le=1000)

    @field_validator("base_url")
    @classmethod
    def _absolute_http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not re.match(r"^https?://[^\s/]+", value):
            raise ValueError(f"must be an http(s) URL, got {value!r}")
        return value if value.endswith("/") else value + "/"


class RepoConfig(_Config):
    """One ``[[repos]]`` table: a repository and how its digest is made."""

    name: str
    source: Literal["jsonl", "github", "git"] = "jsonl"
    path: Path | None = None
    preset: Path | None = None
    timezone: str = DEFAULT_TZ
    window: Literal["day", "week"] = "day"
    top: int = Field(default=8, ge=0, le=200)
    lang: Literal["zh", "en"] = "zh"
    writer: Literal["template", "llm"] = "template"
    model: str | None = None
    channels: tuple[str, ...] | None = None

    @field_validator("name")
    @classmethod
    def _owner_slash_name(cls, value: str) -> str:
        if not REPO_NAME.match(value):
            raise ValueError(f"must look like 'owner/name', got {value!r}")
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
        if self.source in ("jsonl", "git") and self.path is None:
            what = "a JSONL file" if self.source == "jsonl" else "a local clone"
            raise _problem("path", f"source {self.source!r} needs 'path' ({what})")
        if self.writer == "llm" and not self.model:
            raise _problem("model", "writer 'llm' needs 'model'")
        return self


class _ChannelBase(_Config):
    top: int = Field(default=5, ge=1, le=50)

    @model_validator(mode="before")
    @classmethod
    def _no_inline_secrets(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key, instead in SECRET_KEYS.items():
                if key in data:
                    raise _problem(
                        key,
                        f"'{key}' would put a secret in the config file; store it in an "
                        f"environment variable and give that variable's name as '{instead}'",
                    )
        return data


class _WebhookChannel(_ChannelBase):
    webhook_env: EnvName
    timeout: float = Field(default=10.0, gt=0, le=120)

    _check_env = field_validator("webhook_env")(_env_name)


class FeishuConfig(_WebhookChannel):
    """Feishu / Lark custom bot (interactive card; optional signature secret)."""

    type: Literal["feishu", "lark"]
    secret_env: EnvName | None = None

    _check_secret = field_validator("secret_env")(_env_name)


class DingTalkConfig(_WebhookChannel):
    """DingTalk custom robot (markdown; optional 加签 signature secret)."""

    type: Literal["dingtalk"]
    secret_env: EnvName | None = None

    _check_secret = field_validator("secret_env")(_env_name)


class WeComConfig(_WebhookChannel):
    """WeCom (企业微信) group robot (markdown)."""

    type: Literal["wecom"]


class SlackConfig(_WebhookChannel):
    """Slack incoming webhook (Block Kit)."""

    type: Literal["slack"]


class EmailConfig(_ChannelBase):
    """E-mail over SMTP with an HTML and a plain-text part."""

    type: Literal["email"]
    host: str = Field(min_length=1)
    port: int | None = Field(default=None, ge=1, le=65535)
    security: Literal["starttls", "ssl", "none"] = "starttls"
    username: str | None = None
    password_env: EnvName | None = None
    ca_file: Path | None = None
    sender: str = Field(alias="from")
    to: tuple[str, ...] = Field(min_length=1)
    subject_prefix: str = Field(default="[prdigest]", max_length=100)
    timeout: float = Field(default=30.0, gt=0, le=300)
    top: int = Field(default=8, ge=1, le=200)

    _check_password = field_validator("password_env")(_env_name)

    @field_validator("sender")
    @classmethod
    def _sender_address(cls, value: str) -> str:
        return _address(value)

    @field_validator("to")
    @classmethod
    def _recipient_addresses(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_address(v) for v in value)

    @field_validator("subject_prefix", "host")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value or "\r" in value:
            raise ValueError("must be one line")
        return value

    @model_validator(mode="after")
    def _password_needs_user(self) -> EmailConfig:
        if self.password_env and not self.username:
            raise _problem("username", "'password_env' needs 'username'")
        return self

    @property
    def effective_port(self) -> int:
        if self.port is not None:
            return self.port
        return {"starttls": 587, "ssl": 465, "none": 25}[self.security]


def _address(value: str) -> str:
    _name, addr = parseaddr(value)
    if "\n" in value or "\r" in value or "@" not in addr or " " in addr:
        raise ValueError(f"not an e-mail address: {value!r}")
    return value


ChannelConfig = Annotated[
    FeishuConfig | DingTalkConfig | WeComConfig | SlackConfig | EmailConfig,
    Field(discriminator="type"),
]
CHANNEL_TYPES = ("feishu", "lark", "dingtalk", "wecom", "slack", "email")


class Config(_Config):
    """The whole ``prdigest.toml``."""

    db: str | None = None
    site: SiteConfig = SiteConfig()
    repos: tuple[RepoConfig, ...]
    channels: dict[str, ChannelConfig] = {}

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
            raise _problem("repos", "configure at least one [[repos]] table")
        seen: set[tuple[str, str]] = set()
        for index, repo in enumerate(self.repos):
            key = (repo.name, repo.lang)
            if key in seen:
                raise _problem(
                    f"repos[{index}].name", f"{repo.name} ({repo.lang}) is configured twice"
                )
            seen.add(key)
            for name in repo.channels or ():
                if name not in self.channels:
                    known = ", ".join(sorted(self.channels)) or "none"
                    raise _problem(
                        f"repos[{index}].channels", f"no channel named {name!r} (known: {known})"
                    )
        return self

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
            for field in ("webhook_env", "secret_env", "password_env"):
                var = getattr(channel, field, None)
                if var:
                    found.append((f"channels.{name}.{field}", var))
        return found


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


def _error_key(error: Any) -> str:
    key = _key(tuple(error["loc"]))
    extra = (error.get("ctx") or {}).get("key") if error["type"] == "config_key" else None
    if not extra:
        return key
    if key == "(file)":
        return str(extra)
    return f"{key}{'' if extra.startswith('[') else '.'}{extra}"


def _message(error: Any) -> str:
    message = str(error["msg"])
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if error["type"] == "missing":
        return "required key is missing"
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "union_tag_invalid":
        return f"unknown channel type (known: {', '.join(CHANNEL_TYPES)})"
    if error["type"] == "union_tag_not_found":
        return f"'type' is missing (one of: {', '.join(CHANNEL_TYPES)})"
    return message


def parse_config(text: str, *, path: str = DEFAULT_CONFIG, base: Path | None = None) -> Config:
    """Parse and validate a config text; relative paths are taken from ``base``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(path, [("(file)", f"not valid TOML: {exc}")]) from exc
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems = [(_error_key(e), _message(e)) for e in exc.errors()]
        raise ConfigFileError(path, problems) from None
    return _resolve(config, base) if base is not None else config


def load_config(path: Path) -> Config:
    """Read and validate ``prdigest.toml``; paths in it are relative to its directory."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError("config file not found", key=str(path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file: {exc}", key=str(path)) from exc
    return parse_config(text, path=str(path), base=path.resolve().parent)


def _resolve(config: Config, base: Path) -> Config:
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
            elif key == "repos":
                walk(RepoConfig, "repos.")

    walk(Config, "")
    for channel in (FeishuConfig, DingTalkConfig, WeComConfig, SlackConfig, EmailConfig):
        for name, field in channel.model_fields.items():
            key = f"channels.*.{field.alias or name}"
            if key not in keys:
                keys.append(key)
    return keys


def report_window(repo: RepoConfig, day: date | None, now: datetime) -> Window:
    """The window a scheduled run digests: the given local day, else yesterday (local).

    ``window = "week"`` is the seven local days ending with that day.
    """
    zone = ZoneInfo(repo.timezone)
    last = day if day is not None else (now.astimezone(zone).date() - timedelta(days=1))
    if repo.window == "day":
        return day_window(last.isoformat(), repo.timezone)
    first = last - timedelta(days=6)
    since = datetime.combine(first, time(0), tzinfo=zone)
    until = datetime.combine(last + timedelta(days=1), time(0), tzinfo=zone)
    return Window(
        since=since,
        until=until,
        tz=repo.timezone,
        label=f"{first.isoformat()}..{last.isoformat()}",
    )

"""What every channel shares: the :class:`Channel` protocol, the config base (no inline
secrets) and :class:`WebhookChannel`, the signed, bounded-retry POST of the chat services.

The webhook URL and the secret arrive as :class:`~prdigest.core.secrets.Secret` and never appear
in a repr, a log line or an error message. The HTTP client is injected (tests pass one that talks
to a local receiver); every request has a timeout. A request that certainly did not reach the
service (connection refused, or 429/503 with a short ``Retry-After``) is retried a bounded number
of times; anything else fails at once and is retried by the next run, so a message is not posted
twice because a slow answer was mistaken for a failure.
"""

from __future__ import annotations

import json
import logging
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NoReturn, Protocol

import httpx
from pydantic import Field, field_validator, model_validator

from prdigest.core.configbase import ConfigModel, EnvName, env_name, problem
from prdigest.core.errors import DeliveryError
from prdigest.core.secrets import Secret, protect_loggers, redact
from prdigest.publish.channels.text import chat_markdown
from prdigest.publish.summary import Summary

log = logging.getLogger("prdigest.publish")
protect_loggers("httpx", "httpcore", "prdigest")

SECRET_KEYS = {
    "webhook": "webhook_env",
    "webhook_url": "webhook_env",
    "url": "webhook_env",
    "secret": "secret_env",
    "sign_secret": "secret_env",
    "token": "webhook_env",
    "password": "password_env",
}


class Channel(Protocol):
    """Anything that can take a summary: the webhooks and e-mail implement it."""

    name: str

    @property
    def kind(self) -> str:
        """The channel type (``feishu``, ``email`` …), for reports."""
        ...

    def send(self, summary: Summary) -> None:
        """Deliver, or raise :class:`~prdigest.core.errors.DeliveryError`."""
        ...


class UnconfiguredChannel:
    """A channel whose secret is missing from the environment: every send fails (and is logged
    as failed, so it is retried once the variable is set)."""

    kind = "unconfigured"

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def send(self, summary: Summary) -> None:
        raise DeliveryError(self.reason, channel=self.name)


class ChannelConfigBase(ConfigModel):
    type: str  # each channel narrows it to its own names (the registry's discriminator)
    top: int = Field(default=5, ge=1, le=50)
    # what a run does with a delivery a killed run left in an unknown state (docs/publish.md):
    # resend it (at-least-once) or report it and leave it (at-most-once); None: the default of
    # the channel type (e-mail resends, its Message-ID folds duplicates; chat does not)
    delivery: Literal["at-most-once", "at-least-once"] | None = None
    skip_empty: bool | None = None  # None: the repository's setting

    @model_validator(mode="before")
    @classmethod
    def _no_inline_secrets(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key, instead in SECRET_KEYS.items():
                if key in data:
                    raise problem(
                        key,
                        f"'{key}' would put a secret in the config file; store it in an "
                        f"environment variable and give that variable's name as '{instead}'",
                    )
        return data


class WebhookConfig(ChannelConfigBase):
    webhook_env: EnvName
    timeout: float = Field(default=10.0, gt=0, le=120)

    _check_env = field_validator("webhook_env")(env_name)


MAX_ATTEMPTS = 3
MAX_RETRY_AFTER = 60.0


class WebhookChannel:
    """Base of the chat channels: build a payload, sign it, post it, check the answer."""

    kind: ClassVar[str] = "webhook"

    def __init__(
        self,
        name: str,
        url: Secret,
        *,
        client: httpx.Client,
        secret: Secret | None = None,
        top: int = 5,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = name
        self._url = url
        self._secret = secret
        self._client = client
        self.top = top
        self.timeout = timeout
        self._clock = clock
        self._sleep = sleep

    def __repr__(self) -> str:
        signed = ", signed" if self._secret else ""
        return f"{type(self).__name__}(name={self.name!r}, url=[secure]{signed})"

    # -- what subclasses define --------------------------------------------------------------

    def payload(self, summary: Summary) -> dict[str, Any]:
        raise NotImplementedError

    def sign(self, payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The body and query parameters to send (unsigned by default)."""
        return payload, {}

    def check(self, response: httpx.Response) -> None:
        """Raise :class:`DeliveryError` unless the service says it took the message."""
        self._check_status(response)
        data = self._json(response)
        code = data.get("errcode", 0)
        if code != 0:
            self._fail(f"{self.kind} answered errcode {code}: {data.get('errmsg', '')}")

    # -- shared machinery -----------------------------------------------------------------

    def send(self, summary: Summary) -> None:
        body, params = self.sign(self.payload(summary))
        response = self._post(body, params)
        self.check(response)

    def _post(self, body: dict[str, Any], params: dict[str, str]) -> httpx.Response:
        content = json.dumps(body, ensure_ascii=False).encode("utf-8")
        url = httpx.URL(self._url.reveal())
        if params:  # added to the webhook's own query (DingTalk's access_token stays)
            url = url.copy_merge_params(params)
        headers = {"Content-Type": "application/json; charset=utf-8"}
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                response = self._client.post(
                    url,
                    content=content,
                    headers=headers,
                    timeout=self.timeout,
                )
            except httpx.ConnectError as exc:
                if attempt < MAX_ATTEMPTS:
                    self._wait(attempt, None, "cannot connect")
                    continue
                self._fail(f"cannot connect ({type(exc).__name__})")
            except httpx.TimeoutException:
                self._fail(f"no answer within {self.timeout:g}s (not retried: it may have arrived)")
            except httpx.HTTPError as exc:
                self._fail(f"request failed ({type(exc).__name__})")
            if response.status_code in (429, 503) and attempt < MAX_ATTEMPTS:
                wait = retry_after(response)
                if wait is not None and wait <= MAX_RETRY_AFTER:
                    self._wait(attempt, wait, f"HTTP {response.status_code}")
                    continue
            return response
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, attempt: int, seconds: float | None, why: str) -> None:
        delay = seconds if seconds is not None else float(2 ** (attempt - 1))
        log.warning("channel %r: %s; retry %d in %.0fs", self.name, why, attempt, delay)
        self._sleep(delay)

    def _check_status(self, response: httpx.Response) -> None:
        if response.status_code >= 300:
            self._fail(f"HTTP {response.status_code}: {self._excerpt(response.text)}", response)

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            data = response.json()
        except ValueError:
            self._fail(f"answer is not JSON: {self._excerpt(response.text)}", response)
        if not isinstance(data, dict):
            self._fail("answer is not a JSON object", response)
        return data

    def _excerpt(self, text: str) -> str:
        return redact(" ".join(text.split()))[:200] or "(empty)"

    def _fail(self, message: str, response: httpx.Response | None = None) -> NoReturn:
        status = response.status_code if response is not None else None
        raise DeliveryError(self._excerpt(message), channel=self.name, status=status)


def retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return 1.0
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def markdown_lines(summary: Summary, top: int) -> list[str]:
    """Summary lines in the markdown the Chinese chat services share."""
    lines = [chat_markdown(summary.counts), ""]
    if summary.empty:
        lines += [chat_markdown(summary.empty), ""]
    for index, entry in enumerate(summary.top(top), start=1):
        lines.append(
            f"{index}. [{chat_markdown(entry.title)}]({entry.link})  \n"
            f"{chat_markdown(entry.reason)}  \n"
            f"[#{entry.number}]({entry.pr_url}) · {entry.level_label} · {chat_markdown(entry.area)}"
        )
        lines.append("")
    more = summary.more_line(len(summary.top(top)))
    if more:
        lines += [more, ""]
    if summary.page_url:
        lines.append(f"[{summary.read_more}]({summary.page_url})")
    return lines


def fitted_markdown(summary: Summary, heading: str, top: int, limit: int) -> str:
    """Heading and entry lines, with fewer top entries until the UTF-8 text fits ``limit``."""
    while True:
        text = "\n".join([heading, "", *markdown_lines(summary, top)])
        if len(text.encode("utf-8")) <= limit or top == 0:
            return text
        top -= 1


MakeChannel = Callable[
    [str, Any, Mapping[str, Secret], httpx.Client, "ssl.SSLContext | None"], Channel
]


@dataclass(frozen=True)
class ChannelKind:
    """A channel type for the registry: its config model and how a channel is made from the
    config and the secrets the CLI read (keyed by the config field that names each variable)."""

    config: type[ChannelConfigBase]
    make: MakeChannel
    secret_fields: tuple[str, ...]


def webhook_kind(config: type[WebhookConfig], channel: type[WebhookChannel]) -> ChannelKind:
    """The kind of a chat service: its secrets are the webhook URL and an optional signature."""

    def make(
        name: str,
        settings: Any,
        secrets: Mapping[str, Secret],
        client: httpx.Client,
        ssl_context: ssl.SSLContext | None,
    ) -> Channel:
        return channel(
            name,
            secrets["webhook_env"],
            client=client,
            secret=secrets.get("secret_env"),
            top=settings.top,
            timeout=settings.timeout,
        )

    return ChannelKind(config, make, ("webhook_env", "secret_env"))

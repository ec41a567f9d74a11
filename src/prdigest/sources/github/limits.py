"""What a GitHub response means for the caller: rate-limit budget and error classes (pure).

The rules restate GitHub's documentation ("Rate limits for the REST API", "Rate limits and
query limits for the GraphQL API"):

* every response may carry ``x-ratelimit-{limit,remaining,used,reset,resource}``;
* a **primary** limit answers 403 or 429 with ``x-ratelimit-remaining: 0`` (REST), or HTTP 200
  with a GraphQL error of type ``RATE_LIMITED``/``RATE_LIMIT`` (GraphQL); wait until
  ``x-ratelimit-reset``;
* a **secondary** limit answers 403 or 429 (or 200 on GraphQL) with a message that says so
  (current wording "secondary rate limit", legacy "abuse detection"); honour ``retry-after``,
  else wait at least a minute and back off;
* a 403 that is neither is a permission problem, not something to retry.

Nothing here sleeps or sends: :mod:`.client` acts on the :class:`Verdict` returned.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

SECONDARY_WORDS = ("secondary rate limit", "abuse detection", "abuse-rate-limits")
RATE_LIMIT_TYPES = frozenset({"RATE_LIMITED", "RATE_LIMIT"})
RATE_LIMIT_CODES = frozenset({"graphql_rate_limit"})


class Kind(enum.Enum):
    """What to do with a response."""

    OK = "ok"
    NOT_MODIFIED = "not_modified"  # 304 for a conditional request: reuse what we have
    TRANSIENT = "transient"  # 5xx or a body that did not arrive whole: retry with backoff
    SECONDARY_LIMIT = "secondary_limit"  # wait retry-after (or >= 60 s), then retry
    PRIMARY_LIMIT = "primary_limit"  # wait until reset if near, else stop
    BAD_CREDENTIALS = "bad_credentials"  # 401
    FORBIDDEN = "forbidden"  # 403 without a rate-limit sign: no access
    NOT_FOUND = "not_found"  # 404
    TOO_LARGE = "too_large"  # 406 too_large for the .diff media type: use /files instead
    CLIENT_ERROR = "client_error"  # any other 4xx: a bug or an unsupported request


@dataclass(frozen=True, slots=True)
class RateLimit:
    """One resource's budget as the last response reported it."""

    resource: str  # "core", "graphql", "search", …
    limit: int | None
    remaining: int
    reset: float | None  # epoch seconds

    def reset_text(self) -> str:
        return format_epoch(self.reset) if self.reset is not None else "an unknown time"

    def describe(self) -> str:
        total = f"/{self.limit}" if self.limit is not None else ""
        return f"{self.resource} {self.remaining}{total}"


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: Kind
    message: str = ""
    retry_after: float | None = None  # seconds, from retry-after
    reset: float | None = None  # epoch seconds, from x-ratelimit-reset


def format_epoch(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def rate_limit_from_headers(headers: Mapping[str, str], default_resource: str) -> RateLimit | None:
    """The budget a response reports, or None when it carries no rate-limit headers."""
    low = _lower(headers)
    remaining = _int(low.get("x-ratelimit-remaining"))
    if remaining is None:
        return None
    return RateLimit(
        resource=low.get("x-ratelimit-resource") or default_resource,
        limit=_int(low.get("x-ratelimit-limit")),
        remaining=remaining,
        reset=_float(low.get("x-ratelimit-reset")),
    )


def error_message(body: str) -> str:
    """GitHub's ``message`` from an error body, or the start of the body."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.strip()[:200]
    message = data.get("message") if isinstance(data, dict) else None
    if isinstance(message, str):
        return message
    return body.strip()[:200]


def _too_large(body: str) -> bool:
    try:
        data = json.loads(body)
    except ValueError:
        return "too_large" in body
    errors = data.get("errors") if isinstance(data, dict) else None
    if isinstance(errors, list):
        return any(isinstance(e, dict) and e.get("code") == "too_large" for e in errors)
    return False


def classify(status: int, headers: Mapping[str, str], body: str) -> Verdict:
    """Classify an HTTP response of the REST or GraphQL endpoint by status, headers and body."""
    low = _lower(headers)
    if status == 304:
        return Verdict(Kind.NOT_MODIFIED)
    if 200 <= status < 300:
        return Verdict(Kind.OK)
    message = error_message(body)
    if status in (403, 429):
        return _classify_limit(status, low, message)
    if status == 401:
        return Verdict(Kind.BAD_CREDENTIALS, message or "Bad credentials")
    if status == 404:
        return Verdict(Kind.NOT_FOUND, message or "Not Found")
    if status == 406 and _too_large(body):
        return Verdict(Kind.TOO_LARGE, message)
    if status >= 500:
        return Verdict(Kind.TRANSIENT, f"HTTP {status}: {message}")
    return Verdict(Kind.CLIENT_ERROR, f"HTTP {status}: {message}")


def _classify_limit(status: int, low: Mapping[str, str], message: str) -> Verdict:
    retry_after = _float(low.get("retry-after"))
    reset = _float(low.get("x-ratelimit-reset"))
    secondary = any(word in message.lower() for word in SECONDARY_WORDS)
    if secondary or retry_after is not None:
        return Verdict(Kind.SECONDARY_LIMIT, message, retry_after=retry_after, reset=reset)
    if low.get("x-ratelimit-remaining") == "0":
        return Verdict(Kind.PRIMARY_LIMIT, message, reset=reset)
    if status == 429:  # "too many requests" without headers: treat as secondary, back off
        return Verdict(Kind.SECONDARY_LIMIT, message)
    return Verdict(Kind.FORBIDDEN, message or "Forbidden")


def classify_graphql_errors(errors: list[Any], headers: Mapping[str, str]) -> Verdict | None:
    """A rate-limit verdict for GraphQL ``errors`` sent with HTTP 200, else None.

    GitHub has reported the primary limit as type ``RATE_LIMITED`` and, later, as ``RATE_LIMIT``
    with code ``graphql_rate_limit``; both are matched, and so is the message.
    """
    low = _lower(headers)
    for error in errors:
        if not isinstance(error, dict):
            continue
        message = str(error.get("message", ""))
        lowered = message.lower()
        if any(word in lowered for word in SECONDARY_WORDS):
            return Verdict(
                Kind.SECONDARY_LIMIT,
                message,
                retry_after=_float(low.get("retry-after")),
                reset=_float(low.get("x-ratelimit-reset")),
            )
        limited = (
            error.get("type") in RATE_LIMIT_TYPES
            or error.get("code") in RATE_LIMIT_CODES
            or "rate limit" in lowered
        )
        if limited:
            return Verdict(Kind.PRIMARY_LIMIT, message, reset=_float(low.get("x-ratelimit-reset")))
    return None

"""Secrets: values read from the environment by the CLI, masked everywhere they could show.

A channel names the *environment variable* that holds its webhook URL, signing secret or SMTP
password; the CLI reads the value into a :class:`Secret`, whose repr and str are masked and which
registers itself with :func:`redact`, so error texts that echo it (a service repeating the URL it
was called on) and log records of protected loggers are masked too.
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlsplit

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

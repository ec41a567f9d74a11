"""The project's error types, all in one place.

Library code raises these; the CLI (and later the web server) is the only place that turns
them into messages and exit codes. Foreign exceptions (sqlite3, httpx, json, pydantic) are
translated where they enter, with ``raise ... from exc``, so callers only ever catch
``PrdigestError``.

Hierarchy::

    PrdigestError                 base; ``exit_code`` says how the CLI exits
    ├── ConfigError               a bad option, preset or config value (names the key)
    │   └── ConfigFileError       a config file with problems, each naming its key
    ├── InputError                bad input data
    │   ├── RecordError           one PR record is invalid (names the repo#number and field)
    │   └── ImportLineError       one JSONL line is invalid (names the line number)
    ├── StorageError              the database cannot be opened, migrated or written
    ├── NotFoundError             a PR, repository or digest that is not in the store
    ├── SourceError               a source (GitHub, git) failed
    │   ├── AuthError             missing or rejected credentials
    │   ├── RateLimitError        a rate limit that cannot be waited out now (says when to resume)
    │   └── UpstreamError         the remote answered with an error or garbage
    ├── LLMError                  the model endpoint failed (names the model and the PR)
    │   ├── LLMTimeoutError       a request ran past its timeout on every attempt
    │   ├── LLMUnavailableError   connection failures, 429 or 5xx after the bounded retries
    │   ├── LLMResponseError      a reply that cannot be used: 4xx, no choice, no JSON, bad shape
    │   └── LLMBudgetError        the run's cost budget (``--max-cost-tokens``) is spent
    ├── RunLockedError            another run of the same repository holds the store's lock
    └── PublishError              publishing a digest failed (site or delivery)
        ├── SiteError             the static site cannot be written (names the path)
        └── DeliveryError         a channel did not take a message (names the channel)

Every error carries its context as keyword-only attributes so messages name the item.
Secrets never enter an error: callers pass identifiers, never tokens or URLs with credentials.
"""

from __future__ import annotations


class PrdigestError(Exception):
    """Base of every error the project raises on purpose."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(PrdigestError):
    """A bad option, preset or configuration value; the message names the key."""

    exit_code = 2

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.detail = message  # without the key, for callers that name the item their own way


class ConfigFileError(ConfigError):
    """A configuration file with one or more problems; ``problems`` holds (key, message)."""

    def __init__(self, path: str, problems: list[tuple[str, str]]) -> None:
        lines = [f"{key}: {message}" for key, message in problems]
        count = len(problems)
        head = f"{path}: {count} problem{'s' if count != 1 else ''}"
        super().__init__(head + "".join(f"\n  {line}" for line in lines))
        self.path = path
        self.problems = problems


class InputError(PrdigestError):
    """Input data that cannot be used."""

    exit_code = 3


class RecordError(InputError):
    """One PR record is invalid; names the PR (when known) and the field."""

    def __init__(self, reason: str, *, pr: str | None = None, field: str | None = None) -> None:
        where = pr or "record"
        if field:
            where = f"{where} field {field!r}"
        super().__init__(f"{where}: {reason}")
        self.pr = pr
        self.field = field
        self.reason = reason


class ImportLineError(InputError):
    """One line of a JSONL import is invalid; the other lines are still imported."""

    def __init__(self, reason: str, *, path: str, line: int) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class StorageError(PrdigestError):
    """The store cannot be opened, migrated, read or written."""

    exit_code = 4


class NotFoundError(PrdigestError):
    """Something asked for by name is not in the store."""

    exit_code = 5


class SourceError(PrdigestError):
    """A source of PR data failed."""

    exit_code = 6


class AuthError(SourceError):
    """Credentials are missing or were rejected."""

    exit_code = 7


class RateLimitError(SourceError):
    """A rate limit that will not be waited out now; ``resume_at`` says when a re-run can go on."""

    exit_code = 8

    def __init__(self, message: str, *, resume_at: str | None = None) -> None:
        super().__init__(message if resume_at is None else f"{message} (resume after {resume_at})")
        self.resume_at = resume_at


class UpstreamError(SourceError):
    """The remote side answered with an error status or a body that cannot be used."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class LLMError(PrdigestError):
    """The model endpoint failed; ``model`` and ``pr`` (``owner/name#N``) say where.

    The API key is never part of the message: callers pass the model name and PR only.
    """

    exit_code = 9

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        pr: str | None = None,
        status: int | None = None,
    ) -> None:
        where = ", ".join(part for part in (model, pr) if part)
        super().__init__(f"{message} ({where})" if where else message)
        self.model = model
        self.pr = pr
        self.status = status  # the HTTP status, when the endpoint answered one


class LLMTimeoutError(LLMError):
    """A request ran past its timeout on every attempt."""


class LLMUnavailableError(LLMError):
    """Connection failures, rate limits (429) or server errors (5xx) outlasted the retries."""


class LLMResponseError(LLMError):
    """A reply that cannot be used: a 4xx status, no choice, no JSON object, a wrong shape."""


class LLMBudgetError(LLMError):
    """The run's cost budget is spent; the remaining entries come from the template writer."""

    def __init__(self, message: str, *, spent: int, limit: int) -> None:
        super().__init__(message)
        self.spent = spent
        self.limit = limit


class RunLockedError(PrdigestError):
    """Another run of the same repository (or site) is in progress on this store."""

    exit_code = 11

    def __init__(self, what: str, holder: str) -> None:
        super().__init__(f"another run of {what} is in progress ({holder})")
        self.what = what
        self.holder = holder


class PublishError(PrdigestError):
    """Publishing a digest (the static site or a delivery) failed."""

    exit_code = 10


class SiteError(PublishError):
    """A file of the static site cannot be read or written; names the path."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


class DeliveryError(PublishError):
    """A channel did not take a message; names the channel, never its URL or secret."""

    def __init__(self, message: str, *, channel: str, status: int | None = None) -> None:
        super().__init__(f"channel {channel!r}: {message}")
        self.channel = channel
        self.status = status

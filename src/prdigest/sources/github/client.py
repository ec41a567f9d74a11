"""HTTP access to GitHub's REST and GraphQL endpoints over an injected ``httpx.Client``.

One :class:`GitHubClient` sends every request of a sync, serially (GitHub's advice for staying
clear of secondary limits), and owns the failure policy:

* 5xx answers, timeouts, dropped connections and bodies that are not whole JSON are retried up to
  ``RetryPolicy.attempts`` times with exponential backoff;
* a secondary limit waits ``retry-after`` seconds, else at least ``secondary_min`` and doubling,
  at most ``secondary_attempts`` times, then stops;
* a primary limit (also before a request, when the last response said the budget is spent)
  waits until ``x-ratelimit-reset`` if that is at most ``max_wait`` away, else stops with a
  :class:`~prdigest.core.errors.RateLimitError` that says when to resume;
* 401, a 403 that is not a rate limit, 404 and other 4xx are not retried.

Every wait goes through the injected ``sleep`` and is logged, so tests never really wait. The
token is wrapped in :class:`Token`, sent only to the configured API origin, and kept out of
reprs, logs and error messages.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from prdigest.core.errors import AuthError, ConfigError, RateLimitError, UpstreamError
from prdigest.core.version import __version__
from prdigest.sources.github.limits import (
    Kind,
    RateLimit,
    Verdict,
    classify,
    classify_graphql_errors,
    format_epoch,
    rate_limit_from_headers,
)

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = f"prdigest/{__version__}"
REST_ACCEPT = "application/vnd.github+json"
DIFF_ACCEPT = "application/vnd.github.diff"
API_VERSION = "2022-11-28"
AUTH_ERROR_TYPES = frozenset({"FORBIDDEN", "INSUFFICIENT_SCOPES"})


class Token:
    """A GitHub token that does not show itself in reprs, logs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not value or not value.strip():
            raise AuthError("the GitHub token is empty")
        self._value = value.strip()

    def reveal(self) -> str:
        """The token itself; only for the Authorization header."""
        return self._value

    def __repr__(self) -> str:
        return "Token('[secure]')"

    __str__ = __repr__

    def __reduce__(self) -> Any:  # pickling would write the token out
        raise TypeError("a Token cannot be pickled")


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where the REST and GraphQL APIs live.

    github.com: ``https://api.github.com`` and ``https://api.github.com/graphql``. GitHub
    Enterprise Server: ``https://HOST/api/v3`` and ``https://HOST/api/graphql``.
    """

    api_url: str = DEFAULT_API_URL
    graphql_url: str = DEFAULT_API_URL + "/graphql"

    @classmethod
    def from_urls(cls, api_url: str | None, graphql_url: str | None = None) -> Endpoints:
        base = (api_url or DEFAULT_API_URL).rstrip("/")
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"expected an http(s) URL, got {base!r}", key="--api-url")
        return cls(api_url=base, graphql_url=(graphql_url or derive_graphql_url(base)).rstrip("/"))


def derive_graphql_url(api_url: str) -> str:
    """The GraphQL endpoint of a REST base URL (GHES: ``/api/v3`` → ``/api/graphql``)."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base.removesuffix("/v3") + "/graphql"
    return base + "/graphql"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    attempts: int = 5  # tries of one request on transient failures
    backoff: float = 1.0  # first pause after a transient failure; doubles each time
    backoff_max: float = 30.0
    secondary_min: float = 60.0  # GitHub: wait at least a minute when retry-after is absent
    secondary_attempts: int = 4
    max_wait: float = 900.0  # longest wait for a primary limit to reset; longer → stop
    reserve: int = 0  # treat the budget as spent at this many remaining requests/points
    timeout: float = 30.0  # per request (read); connect gets a third of it


@dataclass(frozen=True, slots=True)
class Response:
    kind: Kind  # OK, NOT_MODIFIED or TOO_LARGE
    status: int
    text: str
    etag: str | None = None
    next_url: str | None = None  # rel="next" of the link header

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass(frozen=True, slots=True)
class GraphQLResponse:
    """``data`` and the non-rate-limit ``errors`` the caller must look at."""

    data: dict[str, Any]
    errors: tuple[dict[str, Any], ...] = ()


@dataclass(slots=True)
class _Attempts:
    transient: int = 0
    secondary: int = 0
    primary: int = 0


@dataclass(slots=True)
class ClientStats:
    requests: int = 0
    waited: float = 0.0
    limits: dict[str, RateLimit] = field(default_factory=dict)


class GitHubClient:
    """Serial, retrying, rate-limit-aware access to one GitHub (github.com or Enterprise)."""

    def __init__(
        self,
        http: httpx.Client,
        token: Token,
        endpoints: Endpoints | None = None,
        *,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._http = http
        self._token = token
        self.endpoints = endpoints or Endpoints()
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._clock = clock
        self.stats = ClientStats()

    def __repr__(self) -> str:
        return f"GitHubClient(api_url={self.endpoints.api_url!r}, token=[secure])"

    @property
    def requests(self) -> int:
        return self.stats.requests

    @property
    def rate_limits(self) -> tuple[RateLimit, ...]:
        return tuple(self.stats.limits[name] for name in sorted(self.stats.limits))

    # -- public calls --------------------------------------------------------------------

    def graphql(self, query: str, variables: Mapping[str, Any] | None = None) -> GraphQLResponse:
        """Run a GraphQL document; rate-limit errors are handled here, others returned."""
        payload = {"query": query, "variables": dict(variables or {})}
        _, body = self._send("POST", self.endpoints.graphql_url, "graphql", payload, {})
        data, errors = body.get("data"), body.get("errors") or []
        if not isinstance(data, dict):
            raise _graphql_failure(errors)
        return GraphQLResponse(data=data, errors=tuple(e for e in errors if isinstance(e, dict)))

    def get(
        self,
        url: str,
        *,
        accept: str = REST_ACCEPT,
        etag: str | None = None,
        params: Mapping[str, str | int] | None = None,
        expect_json: bool = True,
    ) -> Response:
        """GET a REST path or a ``link`` URL on the API origin; returns on 200, 304 and 406."""
        target = self._rest_url(url)
        headers = {"Accept": accept}
        if etag:
            headers["If-None-Match"] = etag
        response, _ = self._send("GET", target, "core", None, headers, params, expect_json)
        verdict_kind = {304: Kind.NOT_MODIFIED, 406: Kind.TOO_LARGE}.get(
            response.status_code, Kind.OK
        )
        nxt = response.links.get("next", {}).get("url")
        return Response(
            kind=verdict_kind,
            status=response.status_code,
            text=response.text if verdict_kind is Kind.OK else "",
            etag=response.headers.get("etag"),
            next_url=nxt,
        )

    # -- the request loop ----------------------------------------------------------------

    def _send(
        self,
        method: str,
        url: str,
        resource: str,
        payload: dict[str, Any] | None,
        headers: dict[str, str],
        params: Mapping[str, str | int] | None = None,
        expect_json: bool = True,
    ) -> tuple[httpx.Response, dict[str, Any]]:
        attempts = _Attempts()
        while True:
            self._guard_budget(resource)
            try:
                response = self._request(method, url, payload, headers, params)
            except httpx.TransportError as exc:  # timeouts, refused or dropped connections
                self._transient(attempts, f"{type(exc).__name__} from {_where(url)}", exc)
                continue
            self._note_limits(response.headers, resource)
            verdict = classify(response.status_code, response.headers, response.text)
            body: dict[str, Any] = {}
            if verdict.kind is Kind.OK and (expect_json or method == "POST"):
                verdict, body = self._decode(response, verdict, resource)
            if verdict.kind in (Kind.OK, Kind.NOT_MODIFIED, Kind.TOO_LARGE):
                return response, body
            self._handle_failure(verdict, attempts, url, response.status_code)

    def _request(
        self,
        method: str,
        url: str,
        payload: dict[str, Any] | None,
        headers: dict[str, str],
        params: Mapping[str, str | int] | None,
    ) -> httpx.Response:
        all_headers = {
            "Authorization": f"Bearer {self._token.reveal()}",
            "User-Agent": USER_AGENT,
            "X-GitHub-Api-Version": API_VERSION,
            **({"Accept": REST_ACCEPT} if method == "POST" else {}),
            **headers,
        }
        timeout = httpx.Timeout(self.policy.timeout, connect=max(self.policy.timeout / 3, 1.0))
        self.stats.requests += 1
        log.debug("%s %s", method, _where(url))
        return self._http.request(
            method, url, json=payload, headers=all_headers, params=params, timeout=timeout
        )

    def _decode(
        self, response: httpx.Response, verdict: Verdict, resource: str
    ) -> tuple[Verdict, dict[str, Any]]:
        """Parse a 200 body; a body that is not whole JSON counts as a transient failure."""
        try:
            body = response.json()
        except ValueError:
            return Verdict(Kind.TRANSIENT, "the response body is not complete JSON"), {}
        if not isinstance(body, (dict, list)):
            return Verdict(Kind.TRANSIENT, "the response body is not a JSON object"), {}
        if resource != "graphql" or not isinstance(body, dict):
            return verdict, {}
        errors = body.get("errors") or []
        limited = classify_graphql_errors(
            errors if isinstance(errors, list) else [], response.headers
        )
        return (limited or verdict), body

    def _handle_failure(self, verdict: Verdict, attempts: _Attempts, url: str, status: int) -> None:
        """Wait (and return, so the caller retries) or raise a project error."""
        where = _where(url)
        if verdict.kind is Kind.TRANSIENT:
            self._transient(attempts, f"{verdict.message} ({where})", None)
        elif verdict.kind is Kind.SECONDARY_LIMIT:
            self._secondary(attempts, verdict)
        elif verdict.kind is Kind.PRIMARY_LIMIT:
            self._primary(attempts, verdict)
        elif verdict.kind is Kind.BAD_CREDENTIALS:
            raise AuthError(f"GitHub rejected the token (401 {verdict.message})")
        elif verdict.kind is Kind.FORBIDDEN:
            raise AuthError(f"GitHub refused access to {where} (403 {verdict.message})")
        elif verdict.kind is Kind.NOT_FOUND:
            raise UpstreamError(
                f"GitHub has no {where} (404), or the token cannot see it", status=404
            )
        else:
            raise UpstreamError(f"GitHub refused {where}: {verdict.message}", status=status)

    def _transient(self, attempts: _Attempts, reason: str, exc: Exception | None) -> None:
        attempts.transient += 1
        if attempts.transient >= self.policy.attempts:
            raise UpstreamError(
                f"GitHub failed {attempts.transient} times in a row: {reason}"
            ) from exc
        pause = min(self.policy.backoff * 2 ** (attempts.transient - 1), self.policy.backoff_max)
        self._wait(pause, f"{reason}; retry {attempts.transient} of {self.policy.attempts - 1}")

    def _secondary(self, attempts: _Attempts, verdict: Verdict) -> None:
        attempts.secondary += 1
        if verdict.retry_after is not None:
            pause = verdict.retry_after
        else:
            pause = self.policy.secondary_min * 2 ** (attempts.secondary - 1)
        if attempts.secondary > self.policy.secondary_attempts:
            raise RateLimitError(
                "GitHub's secondary rate limit keeps refusing requests",
                resume_at=format_epoch(self._clock() + pause),
            )
        self._wait(pause, f"secondary rate limit ({verdict.message})")

    def _primary(self, attempts: _Attempts, verdict: Verdict) -> None:
        attempts.primary += 1
        if attempts.primary > 2:  # the budget did not come back after waiting for its reset
            raise RateLimitError("GitHub's rate limit is still exhausted after its reset")
        self._wait_for_reset(verdict.reset, "rate limit exhausted")

    def _guard_budget(self, resource: str) -> None:
        """Before a request: if the last response said the budget is spent, wait or stop."""
        limit = self.stats.limits.get(resource)
        if limit is None or limit.remaining > self.policy.reserve:
            return
        if limit.reset is not None and limit.reset <= self._clock():
            return  # the window has rolled over since
        self._wait_for_reset(limit.reset, f"{resource} rate limit at {limit.remaining}")
        self.stats.limits.pop(resource, None)

    def _wait_for_reset(self, reset: float | None, reason: str) -> None:
        if reset is None:
            raise RateLimitError(f"GitHub {reason}; it did not say when the limit resets")
        pause = max(reset - self._clock(), 0.0) + 1.0
        if pause > self.policy.max_wait:
            raise RateLimitError(f"GitHub {reason}", resume_at=format_epoch(reset))
        self._wait(pause, f"{reason}; waiting for the reset at {format_epoch(reset)}")

    def _wait(self, seconds: float, reason: str) -> None:
        log.warning("waiting %.0f s: %s", seconds, reason)
        self.stats.waited += seconds
        self._sleep(seconds)

    # -- helpers -------------------------------------------------------------------------

    def _note_limits(self, headers: Mapping[str, str], resource: str) -> None:
        limit = rate_limit_from_headers(headers, resource)
        if limit is not None:
            self.stats.limits[resource] = limit

    def _rest_url(self, url: str) -> str:
        """An absolute URL on the API origin; the token is never sent anywhere else."""
        if url.startswith("/"):
            return self.endpoints.api_url + url
        api, target = urlsplit(self.endpoints.api_url), urlsplit(url)
        if (target.scheme, target.netloc) != (api.scheme, api.netloc):
            raise UpstreamError(f"refusing to follow a link off the API host: {target.netloc}")
        return url


def _where(url: str) -> str:
    """The path of a URL, for messages (never the query string, which can be long)."""
    parts = urlsplit(url)
    return parts.path or url


def _graphql_failure(errors: list[Any]) -> Exception:
    """The error for a GraphQL answer without data."""
    first = next((e for e in errors if isinstance(e, dict)), {})
    message = str(first.get("message") or "GraphQL request failed without data")
    if first.get("type") in AUTH_ERROR_TYPES:
        return AuthError(f"GitHub refused the query: {message}")
    return UpstreamError(f"GitHub GraphQL error: {message}")

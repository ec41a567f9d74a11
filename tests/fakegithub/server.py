"""A fake GitHub that tests start on loopback: real HTTP, real GraphQL execution, injectable faults.

* **GraphQL** (``POST /graphql``, or ``/api/graphql`` in Enterprise layout): every document is
  parsed, validated against GitHub's schema (``tests/fixtures/github/schema.graphql``) and
  executed by graphql-core against resolvers that serve the fixture records, so aliases,
  fragments, variables, unions (``__typename``) and cursors behave as on GitHub; connections
  demand ``first``/``last`` ≤ 100 and answer real ``pageInfo``; ``rateLimit`` reports the cost
  computed with GitHub's documented formula, which is charged to the ``graphql`` budget.
* **REST**: ``/repos/O/R/pulls/N`` with the ``diff`` media type (a git diff built from the
  fixture's per-file patches; 406 ``too_large`` when a PR has more than 300 files or a text file
  without patch), ``/pulls/N/files`` (``per_page``/``page`` and ``link`` headers), and the
  endpoints a naive REST client would use (PR object, reviews, review comments, issue comments,
  commits, check runs, combined status, timeline). Every answer has an ETag; a matching
  ``If-None-Match`` gets a free 304.
* Every answer carries ``x-ratelimit-*`` headers; an exhausted budget answers like GitHub (REST
  403 with remaining 0, GraphQL 200 with a ``RATE_LIMITED`` error) until its reset.
* :meth:`FakeGitHub.inject` adds faults: status bursts, slow answers, dropped connections,
  secondary limits (403 + retry-after, 429), primary exhaustion, GraphQL errors (whole, partial,
  ``RATE_LIMITED``) and truncated JSON.

Time comes from an injected clock (:class:`FakeClock`), shared with the client under test so
that waiting for a reset is instantaneous.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
    build_schema,
    execute,
    parse,
    validate,
)

from .data import FIXTURES, REPO

SCHEMA_PATH = FIXTURES / "github" / "schema.graphql"
OPERATION_CATEGORIES = {
    "ListMergedPullRequests": "graphql:list",
    "PullRequestDetails": "graphql:detail",
    "MorePages": "graphql:pages",
}
PRIMARY_MESSAGE = "API rate limit exceeded for user ID 1."
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)


@cache
def github_schema() -> GraphQLSchema:
    """GitHub's schema, built once. ``assume_valid`` as well as ``assume_valid_sdl``: GitHub's
    SDL breaks a newer spec rule that graphql-core >= 3.3 checks before validating or executing
    (deprecated implementations of non-deprecated interface fields)."""
    text = Path(SCHEMA_PATH).read_text("utf-8")
    return build_schema(text, assume_valid_sdl=True, assume_valid=True)


class FakeClock:
    """Epoch seconds that move only when someone sleeps."""

    def __init__(self, start: float = 1_781_000_000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += max(seconds, 0.0)


@dataclass
class Fault:
    target: str  # a request category or its prefix: "graphql", "graphql:detail", "diff", …
    kind: str
    times: int = 1
    skip: int = 0
    status: int = 502
    retry_after: int | None = None
    delay: float = 0.0
    reset_in: float = 60.0
    message: str | None = None
    hits: int = 0


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    category: str
    status: int
    numbers: tuple[int, ...] = ()
    if_none_match: str | None = None
    user_agent: str | None = None


@dataclass
class Budget:
    limit: int
    remaining: int
    reset: float
    used: int = 0

    def headers(self, resource: str) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(self.limit),
            "x-ratelimit-remaining": str(max(self.remaining, 0)),
            "x-ratelimit-used": str(self.used),
            "x-ratelimit-reset": str(int(self.reset)),
            "x-ratelimit-resource": resource,
        }


@dataclass
class Reply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    delay: float = 0.0


def _json(status: int, payload: Any, **headers: str) -> Reply:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return Reply(status, body, {"content-type": "application/json; charset=utf-8", **headers})


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _uncursor(cursor: str) -> int:
    try:
        text = base64.b64decode(cursor.encode(), validate=True).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.") from exc
    if not text.startswith("cursor:v2:"):
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.")
    return int(text.removeprefix("cursor:v2:"))


def connection(items: list[Any], **extra: Any) -> Callable[..., dict[str, Any]]:
    """A GraphQL connection resolver over ``items`` with GitHub's paging rules."""

    def resolve(
        info: Any,
        first: int | None = None,
        after: str | None = None,
        last: int | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        if first is None and last is not None:
            raise GraphQLError("this fake only pages forward (first/after)")
        if first is None:
            raise GraphQLError(
                f"You must provide a `first` or `last` value to properly paginate "
                f"the `{info.field_name}` connection."
            )
        if not 1 <= first <= 100:
            raise GraphQLError(
                f"Requesting {first} records on the `{info.field_name}` connection "
                "exceeds the `first` limit of 100 records."
            )
        start = _uncursor(after) + 1 if after else 0
        page = items[start : start + first]
        return {
            "totalCount": len(items),
            "pageInfo": {
                "hasNextPage": start + len(page) < len(items),
                "hasPreviousPage": start > 0,
                "startCursor": _cursor(start) if page else None,
                "endCursor": _cursor(start + len(page) - 1) if page else None,
            },
            "nodes": page,
            "edges": [{"cursor": _cursor(start + i), "node": n} for i, n in enumerate(page)],
            **extra,
        }

    return resolve


def query_cost(document: Any, variables: dict[str, Any]) -> int:
    """GitHub's documented point formula: one request per connection and parent, /100, min 1."""
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    total = 0

    def size_of(node: FieldNode) -> int | None:
        for argument in node.arguments or ():
            if argument.name.value in ("first", "last"):
                value = argument.value
                if isinstance(value, IntValueNode):
                    return int(value.value)
                if isinstance(value, VariableNode):
                    return int(variables.get(value.name.value) or 0)
        return None

    def walk(selection_set: SelectionSetNode | None, multiplier: int) -> None:
        nonlocal total
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                size = size_of(selection)
                if size is not None:
                    total += multiplier
                walk(selection.selection_set, multiplier * (size or 1))
            elif isinstance(selection, FragmentSpreadNode):
                walk(fragments[selection.name.value].selection_set, multiplier)
            elif isinstance(selection, InlineFragmentNode):
                walk(selection.selection_set, multiplier)

    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            walk(definition.selection_set, 1)
    return max(1, round(total / 100))


def git_quote(path: str) -> str:
    """A path as git writes it in a diff: C-quoted with octal bytes when not plain ASCII."""
    if all(32 <= ord(c) < 127 and c not in '"\\' for c in path):
        return path
    out = []
    for byte in path.encode("utf-8"):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _blob(*parts: object) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()[:7]


def _side(prefix: str, path: str) -> str:
    quoted = git_quote(prefix + path)
    return quoted


def file_diff(f: dict[str, Any]) -> list[str]:
    """One file's section of a git diff, from a record's file entry."""
    new, old = f["path"], f.get("previous_path") or f["path"]
    lines = [f"diff --git {_side('a/', old)} {_side('b/', new)}"]
    status = f["status"]
    if status == "added":
        lines += ["new file mode 100644", f"index 0000000..{_blob(new)}"]
    elif status == "removed":
        lines += ["deleted file mode 100644", f"index {_blob(old)}..0000000"]
    elif status == "renamed":
        similarity = 100 if not f.get("patch") else 90
        lines += [
            f"similarity index {similarity}%",
            f"rename from {git_quote(old)}",
            f"rename to {git_quote(new)}",
        ]
        if f.get("patch") or f.get("binary"):
            lines.append(f"index {_blob(old, 1)}..{_blob(new, 2)} 100644")
    else:
        lines.append(f"index {_blob(old, 1)}..{_blob(new, 2)} 100644")
    minus = "/dev/null" if status == "added" else _side("a/", old)
    plus = "/dev/null" if status == "removed" else _side("b/", new)
    if f.get("binary"):
        lines.append(f"Binary files {minus} and {plus} differ")
    elif f.get("patch"):
        lines += [f"--- {minus}", f"+++ {plus}", f["patch"]]
    return lines


def too_large(record: dict[str, Any]) -> bool:
    """GitHub refuses the .diff of >300 files; a text file without patch stands for a huge one."""
    files = record.get("files") or []
    if len(files) > 300:
        return True
    return any(
        not f.get("patch") and not f.get("binary") and (f["additions"] + f["deletions"]) > 0
        for f in files
    )


def build_diff(record: dict[str, Any]) -> str:
    lines: list[str] = []
    for f in record.get("files") or []:
        lines += file_diff(f)
    return "\n".join(lines) + "\n" if lines else ""


class FakeGitHub:
    """The fake server; use as a context manager. ``url`` is the API base for the client."""

    def __init__(
        self,
        records: list[dict[str, Any]],
        *,
        token: str = "ghp_test_token_never_logged",
        repo: str = REPO,
        clock: FakeClock | None = None,
        core_limit: int = 5000,
        graphql_limit: int = 5000,
        enterprise: bool = False,
    ) -> None:
        self.records = {r["number"]: r for r in records}
        self.token = token
        self.repo = repo
        self.clock = clock or FakeClock()
        self.api_prefix = "/api/v3" if enterprise else ""
        self.graphql_path = "/api/graphql" if enterprise else "/graphql"
        now = self.clock.time()
        self.budgets = {
            "core": Budget(core_limit, core_limit, now + 3600),
            "graphql": Budget(graphql_limit, graphql_limit, now + 3600),
        }
        self.faults: list[Fault] = []
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self.closing = threading.Event()  # set on exit: a held-back ("slow") answer ends at once
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> FakeGitHub:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()

    @property
    def origin(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        return self.origin + self.api_prefix

    @property
    def graphql_url(self) -> str:
        return self.origin + self.graphql_path

    # -- test controls -------------------------------------------------------------------

    def inject(self, target: str, kind: str, **options: Any) -> Fault:
        fault = Fault(target, kind, **options)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def count(self, prefix: str = "") -> int:
        return sum(1 for s in self.seen if s.category.startswith(prefix))

    def requested_numbers(self, prefix: str) -> list[int]:
        return [n for s in self.seen if s.category.startswith(prefix) for n in s.numbers]

    def exhaust(self, resource: str, reset_in: float) -> None:
        budget = self.budgets[resource]
        budget.remaining, budget.reset = 0, self.clock.time() + reset_in

    # -- request handling ----------------------------------------------------------------

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        parts = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        graphql = method == "POST" and parts.path == self.graphql_path
        payload: dict[str, Any] = {}
        if graphql:
            try:
                payload = json.loads(body or b"{}")
            except ValueError:
                return _json(400, {"message": "Problems parsing JSON"})
        category, numbers = self._categorize(method, parts.path, headers, payload)
        reply = self._answer(category, parts.path, query, headers, payload)
        with self._lock:
            self.seen.append(
                Seen(
                    method,
                    parts.path,
                    category,
                    reply.status,
                    numbers,
                    headers.get("if-none-match"),
                    headers.get("user-agent"),
                )
            )
        return reply

    def _categorize(
        self, method: str, path: str, headers: dict[str, str], payload: dict[str, Any]
    ) -> tuple[str, tuple[int, ...]]:
        if method == "POST":
            text = str(payload.get("query", ""))
            match = re.search(r"query\s+(\w+)", text)
            category = OPERATION_CATEGORIES.get(match.group(1) if match else "", "graphql:other")
            numbers = tuple(int(n) for n in re.findall(r"\bpr(\d+):", text))
            return category, numbers
        rest = path.removeprefix(self.api_prefix)
        if re.fullmatch(r"/repos/[^/]+/[^/]+/pulls/\d+", rest):
            number = int(rest.rsplit("/", 1)[1])
            kind = "diff" if "diff" in headers.get("accept", "") else "rest:pull"
            return kind, (number,)
        if re.fullmatch(r"/repos/[^/]+/[^/]+/pulls/\d+/files", rest):
            return "files", (int(rest.split("/")[5]),)
        return "rest:other", ()

    def _fault_for(self, category: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if not category.startswith(fault.target) and fault.target != "any":
                    continue
                fault.hits += 1
                if fault.hits <= fault.skip or fault.times <= 0:
                    continue
                fault.times -= 1
                return fault
        return None

    def _answer(
        self,
        category: str,
        path: str,
        query: dict[str, str],
        headers: dict[str, str],
        payload: dict[str, Any],
    ) -> Reply:
        resource = "graphql" if category.startswith("graphql") else "core"
        budget = self._budget(resource)
        fault = self._fault_for(category)
        if fault is not None and fault.kind not in ("slow", "partial", "truncated"):
            return self._fault_reply(fault, resource)
        if not self._authorized(headers):
            return _json(
                401,
                {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"},
            )
        if budget.remaining <= 0:
            return self._limited(resource)
        if resource == "graphql":
            reply = self._graphql(payload, fault)
        else:
            reply = self._rest(path, query, headers)
        if fault is not None and fault.kind == "slow":
            reply.delay = fault.delay
        if fault is not None and fault.kind == "truncated":
            reply.body = reply.body[: max(len(reply.body) // 2, 1)]
        reply.headers.update(self._budget(resource).headers(resource))
        return reply

    def _budget(self, resource: str) -> Budget:
        budget = self.budgets[resource]
        if self.clock.time() >= budget.reset:
            budget.remaining, budget.used = budget.limit, 0
            budget.reset = self.clock.time() + 3600
        return budget

    def _authorized(self, headers: dict[str, str]) -> bool:
        value = headers.get("authorization", "")
        return value in (f"Bearer {self.token}", f"token {self.token}")

    def _charge(self, resource: str, points: int) -> None:
        budget = self.budgets[resource]
        budget.remaining -= points
        budget.used += points

    def _limited(self, resource: str) -> Reply:
        headers = self.budgets[resource].headers(resource)
        if resource == "graphql":
            return _json(
                200, {"errors": [{"type": "RATE_LIMITED", "message": PRIMARY_MESSAGE}]}, **headers
            )
        return _json(
            403,
            {
                "message": PRIMARY_MESSAGE,
                "documentation_url": "https://docs.github.com/rest/rate-limit",
            },
            **headers,
        )

    def _fault_reply(self, fault: Fault, resource: str) -> Reply:
        budget_headers = self._budget(resource).headers(resource)
        retry = {"retry-after": str(fault.retry_after)} if fault.retry_after is not None else {}
        if fault.kind == "status":
            message = fault.message or {
                401: "Bad credentials",
                404: "Not Found",
                403: "Resource not accessible by personal access token",
            }.get(fault.status, "Server Error")
            return _json(fault.status, {"message": message}, **budget_headers)
        if fault.kind == "drop":
            return Reply(0, drop=True)
        if fault.kind in ("secondary", "429"):
            status = 403 if fault.kind == "secondary" else 429
            return _json(
                status,
                {
                    "message": fault.message or SECONDARY_MESSAGE,
                    "documentation_url": "https://docs.github.com/rest/"
                    "using-the-rest-api/rate-limits-for-the-rest-api",
                },
                **budget_headers,
                **retry,
            )
        if fault.kind == "primary":
            self.exhaust(resource, fault.reset_in)
            return self._limited(resource)
        if fault.kind == "rate_limited":  # GraphQL RATE_LIMITED without touching the budget
            headers = dict(
                budget_headers,
                **{
                    "x-ratelimit-remaining": "0",
                    "x-ratelimit-reset": str(int(self.clock.time() + fault.reset_in)),
                },
            )
            return _json(
                200, {"errors": [{"type": "RATE_LIMITED", "message": PRIMARY_MESSAGE}]}, **headers
            )
        if fault.kind == "graphql_errors":
            return _json(
                200,
                {
                    "data": None,
                    "errors": [
                        {
                            "message": fault.message
                            or "Something went wrong while executing your query. "
                            "This may be the result of a timeout, or it could be a GitHub bug."
                        }
                    ],
                },
                **budget_headers,
            )
        raise AssertionError(f"unknown fault kind {fault.kind}")

    # -- GraphQL -------------------------------------------------------------------------

    def _graphql(self, payload: dict[str, Any], fault: Fault | None) -> Reply:
        text, variables = payload.get("query"), payload.get("variables") or {}
        if not isinstance(text, str):
            return _json(400, {"message": "A query attribute must be specified"})
        try:
            document = parse(text)
        except GraphQLError as exc:
            return _json(200, {"errors": [{"message": exc.message}]})
        problems = validate(github_schema(), document)
        if problems:
            return _json(200, {"errors": [p.formatted for p in problems]})
        cost = query_cost(document, variables)
        self._charge("graphql", cost)
        root = _Root(self, cost)
        result = execute(
            github_schema(), document, root_value=root.fields(), variable_values=variables
        )
        out: dict[str, Any] = {"data": result.data}
        if result.errors:
            out["errors"] = [_github_error(e) for e in result.errors]
        if fault is not None and fault.kind == "partial":
            _break_one_alias(out)
        return _json(200, out)

    # -- REST ----------------------------------------------------------------------------

    def _rest(self, path: str, query: dict[str, str], headers: dict[str, str]) -> Reply:
        rest = path.removeprefix(self.api_prefix)
        if rest == f"/repos/{self.repo}/pulls":  # the list a naive client has to scan
            ordered = sorted(
                self.records.values(), key=lambda r: r.get("updated_at") or "", reverse=True
            )
            items = [rest_pull(r, self.repo) for r in ordered]
            return self._conditional(headers, self._paged(path, query, items))
        match = re.fullmatch(r"/repos/([^/]+/[^/]+)/(pulls|issues|commits)/([^/]+)(/[\w-]+)?", rest)
        if match is None or match.group(1) != self.repo:
            self._charge("core", 1)
            return _json(404, {"message": "Not Found"})
        kind, key, tail = match.group(2), match.group(3), match.group(4) or ""
        record = self._record_for(kind, key)
        if record is None:
            self._charge("core", 1)
            return _json(404, {"message": "Not Found"})
        if kind == "pulls" and not tail and "diff" in headers.get("accept", ""):
            return self._conditional(headers, self._diff_reply(record))
        if kind == "pulls" and tail == "/files":
            return self._conditional(headers, self._paged(path, query, rest_files(record)))
        producer = REST_PRODUCERS.get((kind, tail))
        if producer is None:
            self._charge("core", 1)
            return _json(404, {"message": "Not Found"})
        data = producer(record, self.repo)
        if isinstance(data, list):
            return self._conditional(headers, self._paged(path, query, data))
        return self._conditional(headers, _json(200, data))

    def _record_for(self, kind: str, key: str) -> dict[str, Any] | None:
        if kind == "commits":
            return next((r for r in self.records.values() if r.get("head_sha") == key), None)
        return self.records.get(int(key)) if key.isdigit() else None

    def _diff_reply(self, record: dict[str, Any]) -> Reply:
        if too_large(record):
            return _json(
                406,
                {
                    "message": "Sorry, the diff exceeded the maximum number of files (300). "
                    "Consider using 'List pull requests files' API or locally cloning the "
                    "repository instead.",
                    "errors": [{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
                    "documentation_url": "https://docs.github.com/rest/pulls/pulls#get-a-pull-request",
                },
            )
        body = build_diff(record).encode("utf-8")
        return Reply(200, body, {"content-type": "application/vnd.github.diff; charset=utf-8"})

    def _paged(self, path: str, query: dict[str, str], items: list[Any]) -> Reply:
        per_page = min(int(query.get("per_page", 30)), 100)
        page = max(int(query.get("page", 1)), 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        last = max((len(items) + per_page - 1) // per_page, 1)
        links = []
        base = f"{self.origin}{path}?per_page={per_page}&page="
        if page < last:
            links += [f'<{base}{page + 1}>; rel="next"', f'<{base}{last}>; rel="last"']
        if page > 1:
            links += [f'<{base}{page - 1}>; rel="prev"', f'<{base}1>; rel="first"']
        reply = _json(200, chunk)
        if links:
            reply.headers["link"] = ", ".join(links)
        return reply

    def _conditional(self, headers: dict[str, str], reply: Reply) -> Reply:
        if reply.status == 200:
            etag = 'W/"' + hashlib.sha256(reply.body).hexdigest()[:40] + '"'
            reply.headers["etag"] = etag
            if headers.get("if-none-match") == etag:
                return Reply(304, b"", {"etag": etag})  # 304s are free, as on GitHub
        self._charge("core", 1)
        return reply


def _github_error(error: GraphQLError) -> dict[str, Any]:
    formatted = dict(error.formatted)
    if error.message.startswith("Could not resolve to"):
        formatted["type"] = "NOT_FOUND"
    return formatted


def _break_one_alias(out: dict[str, Any]) -> None:
    """Partial data: the first PR (or page) alias comes back null with an error pointing at it."""
    data = out.get("data") or {}
    holder, prefix = (
        (data.get("repository"), ["repository"]) if "repository" in data else (data, [])
    )
    if not isinstance(holder, dict):
        return
    alias = next((k for k in holder if re.fullmatch(r"(pr|m)\d+", k)), None)
    if alias is None:
        return
    holder[alias] = None
    out.setdefault("errors", []).append(
        {
            "type": "SERVICE_UNAVAILABLE",
            "path": [*prefix, alias],
            "locations": [],
            "message": "Something went wrong while fetching this pull request.",
        }
    )


class _Root:
    """The query root for one request."""

    def __init__(self, fake: FakeGitHub, cost: int) -> None:
        self.fake, self.cost = fake, cost

    def fields(self) -> dict[str, Any]:
        return {
            "rateLimit": self.rate_limit,
            "repository": self.repository,
            "search": self.search,
            "node": self.node,
        }

    def rate_limit(self, info: Any, dryRun: bool = False) -> dict[str, Any]:
        budget = self.fake.budgets["graphql"]
        reset = datetime.fromtimestamp(budget.reset, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "cost": self.cost,
            "limit": budget.limit,
            "remaining": max(budget.remaining, 0),
            "used": budget.used,
            "resetAt": reset,
            "nodeCount": 0,
        }

    def repository(self, info: Any, owner: str, name: str, **_: Any) -> dict[str, Any] | None:
        if f"{owner}/{name}" != self.fake.repo:
            raise GraphQLError(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        return {"nameWithOwner": self.fake.repo, "pullRequest": self.pull_request}

    def pull_request(self, info: Any, number: int) -> dict[str, Any]:
        record = self.fake.records.get(number)
        if record is None:
            raise GraphQLError(f"Could not resolve to a PullRequest with the number of {number}.")
        return pr_node(record)

    def search(self, info: Any, query: str, type: str, **paging: Any) -> dict[str, Any]:
        matches = [
            pr_node(r) for r in search_records(self.fake.records.values(), query, self.fake.repo)
        ]
        page = connection(matches)(info, **paging)
        page["issueCount"] = len(matches)
        return page

    def node(self, info: Any, id: str) -> dict[str, Any] | None:
        match = re.fullmatch(r"PR_(\d+)(?:_T(\d+))?", id)
        record = self.fake.records.get(int(match.group(1))) if match else None
        if record is None or match is None:
            raise GraphQLError(f"Could not resolve to a node with the global id of '{id}'")
        node = pr_node(record)
        if match.group(2) is None:
            return node
        return thread_nodes(record)[int(match.group(2))]


def _parse_search_time(value: str, end: bool) -> datetime:
    if "T" in value:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    day = datetime.fromisoformat(value).replace(tzinfo=UTC)
    return day.replace(hour=23, minute=59, second=59) if end else day


def search_records(records: Any, query: str, repo: str) -> list[dict[str, Any]]:
    """The records a ``repo:R is:pr is:merged merged:A..B`` search finds, newest number first."""
    terms = dict(t.split(":", 1) for t in query.split() if ":" in t)
    if terms.get("repo") != repo or terms.get("is") not in ("pr", "merged"):
        return []
    low, _, high = terms.get("merged", "..").partition("..")
    since, until = _parse_search_time(low, False), _parse_search_time(high, True)

    def merged(record: dict[str, Any]) -> datetime:
        return datetime.fromisoformat(record["merged_at"].replace("Z", "+00:00"))

    found = [r for r in records if since <= merged(r) <= until]
    return sorted(found, key=lambda r: -r["number"])


# -- GraphQL objects from records -------------------------------------------------------------


def actor(login: str | None, kind: str = "User") -> dict[str, Any] | None:
    return None if login is None else {"__typename": kind, "login": login}


def _comment_node(comment: dict[str, Any], diff_hunk: str | None = None) -> dict[str, Any]:
    node = {
        "author": actor(comment.get("author"), comment.get("author_type", "User")),
        "body": comment.get("body", ""),
        "createdAt": comment.get("created_at"),
    }
    if diff_hunk is not None:
        node["diffHunk"] = diff_hunk
    return node


def thread_nodes(record: dict[str, Any]) -> list[dict[str, Any]]:
    threads = []
    for index, thread in enumerate(record.get("review_threads") or []):
        comments = [_comment_node(c, thread.get("diff_hunk") or "") for c in thread["comments"]]
        threads.append(
            {
                "__typename": "PullRequestReviewThread",
                "id": f"PR_{record['number']}_T{index}",
                "path": thread.get("path"),
                "line": thread.get("line"),
                "isResolved": thread.get("is_resolved", False),
                "isOutdated": thread.get("is_outdated", False),
                "comments": connection(comments),
            }
        )
    return threads


def _context_node(check: dict[str, Any]) -> dict[str, Any]:
    conclusion = check.get("conclusion")
    if "/" in check["name"] and conclusion in ("SUCCESS", "FAILURE", "ERROR"):
        return {"__typename": "StatusContext", "context": check["name"], "state": conclusion}
    return {
        "__typename": "CheckRun",
        "name": check["name"],
        "status": check.get("status"),
        "conclusion": conclusion,
    }


CHANGE_TYPES = {
    "added": "ADDED",
    "removed": "DELETED",
    "modified": "MODIFIED",
    "renamed": "RENAMED",
    "copied": "COPIED",
}


def pr_node(record: dict[str, Any]) -> dict[str, Any]:
    number = record["number"]
    files = [
        {
            "path": f["path"],
            "additions": f["additions"],
            "deletions": f["deletions"],
            "changeType": CHANGE_TYPES[f["status"]],
        }
        for f in record.get("files") or []
    ]
    commits = [
        {
            "commit": {
                "oid": c["sha"],
                "message": c.get("message", ""),
                "committedDate": c.get("committed_at"),
                "author": {
                    "name": c.get("author") or "Some One",
                    "user": {"login": c["author"]} if c.get("author") else None,
                },
            }
        }
        for c in record.get("commits") or []
    ]
    reviews = [
        {
            "author": actor(r.get("author"), r.get("author_type", "User")),
            "state": r["state"],
            "body": r.get("body", ""),
            "submittedAt": r.get("submitted_at"),
        }
        for r in record.get("reviews") or []
    ]
    issues = [
        {
            "number": i["number"],
            "title": i.get("title", ""),
            "state": i.get("state"),
            "url": i.get("url"),
            "body": i.get("body") or "",
        }
        for i in record.get("linked_issues") or []
    ]
    checks = [_context_node(c) for c in record.get("checks") or []]
    return {
        "__typename": "PullRequest",
        "id": f"PR_{number}",
        "number": number,
        "title": record["title"],
        "url": record.get("url"),
        "body": record.get("body") or "",
        "state": "MERGED",
        "isDraft": record.get("draft", False),
        "createdAt": record.get("created_at"),
        "updatedAt": record.get("updated_at"),
        "mergedAt": record.get("merged_at"),
        "baseRefName": record.get("base_ref"),
        "headRefName": record.get("head_ref"),
        "headRefOid": record.get("head_sha"),
        "mergeCommit": {"oid": record["merge_commit_sha"]}
        if record.get("merge_commit_sha")
        else None,
        "author": actor(record.get("author")),
        "additions": record.get("additions", 0),
        "deletions": record.get("deletions", 0),
        "changedFiles": record.get("changed_files", 0),
        "labels": connection([{"name": label} for label in record.get("labels") or []]),
        "files": connection(files),
        "commits": connection(commits),
        "reviews": connection(reviews),
        "reviewThreads": connection(thread_nodes(record)),
        "comments": connection([_comment_node(c) for c in record.get("comments") or []]),
        "closingIssuesReferences": connection(issues),
        "statusCheckRollup": {"state": "SUCCESS", "contexts": connection(checks)}
        if checks
        else None,
    }


# -- REST objects from records (shapes of GitHub's REST API, subsets of the real keys) ---------


def _user(login: str | None, kind: str = "User") -> dict[str, Any] | None:
    return None if login is None else {"login": login, "type": kind}


def rest_files(record: dict[str, Any]) -> list[dict[str, Any]]:
    items = []
    for f in record.get("files") or []:
        item: dict[str, Any] = {
            "sha": _blob(f["path"], "blob"),
            "filename": f["path"],
            "status": f["status"],
            "additions": f["additions"],
            "deletions": f["deletions"],
            "changes": f["additions"] + f["deletions"],
            "blob_url": f"https://github.com/{REPO}/blob/{record.get('head_sha')}/{f['path']}",
            "raw_url": f"https://github.com/{REPO}/raw/{record.get('head_sha')}/{f['path']}",
            "contents_url": f"https://api.github.com/repos/{REPO}/contents/{f['path']}",
        }
        if f.get("patch"):
            item["patch"] = f["patch"]
        if f.get("previous_path"):
            item["previous_filename"] = f["previous_path"]
        items.append(item)
    return items


def rest_pull(record: dict[str, Any], repo: str) -> dict[str, Any]:
    number = record["number"]
    return {
        "url": f"https://api.github.com/repos/{repo}/pulls/{number}",
        "number": number,
        "html_url": record.get("url"),
        "state": "closed",
        "title": record["title"],
        "user": _user(record.get("author")),
        "body": record.get("body"),
        "labels": [{"name": label} for label in record.get("labels") or []],
        "created_at": record.get("created_at"),
        "updated_at": record.get("updated_at"),
        "closed_at": record.get("merged_at"),
        "merged_at": record.get("merged_at"),
        "merge_commit_sha": record.get("merge_commit_sha"),
        "draft": record.get("draft", False),
        "head": {"ref": record.get("head_ref"), "sha": record.get("head_sha")},
        "base": {"ref": record.get("base_ref")},
        "merged": True,
        "additions": record.get("additions"),
        "deletions": record.get("deletions"),
        "changed_files": record.get("changed_files"),
        "commits": len(record.get("commits") or []),
        "comments": len(record.get("comments") or []),
    }


def rest_reviews(record: dict[str, Any], repo: str) -> list[dict[str, Any]]:
    return [
        {
            "user": _user(r.get("author"), r.get("author_type", "User")),
            "body": r.get("body"),
            "state": r["state"],
            "submitted_at": r.get("submitted_at"),
        }
        for r in record.get("reviews") or []
    ]


def rest_review_comments(record: dict[str, Any], repo: str) -> list[dict[str, Any]]:
    return [
        {
            "user": _user(c.get("author"), c.get("author_type", "User")),
            "body": c.get("body"),
            "path": t.get("path"),
            "line": t.get("line"),
            "diff_hunk": t.get("diff_hunk"),
            "created_at": c.get("created_at"),
        }
        for t in record.get("review_threads") or []
        for c in t["comments"]
    ]


def rest_issue_comments(record: dict[str, Any], repo: str) -> list[dict[str, Any]]:
    return [
        {
            "user": _user(c.get("author"), c.get("author_type", "User")),
            "body": c.get("body"),
            "created_at": c.get("created_at"),
        }
        for c in record.get("comments") or []
    ]


def rest_commits(record: dict[str, Any], repo: str) -> list[dict[str, Any]]:
    return [
        {
            "sha": c["sha"],
            "commit": {"message": c.get("message"), "committer": {"date": c.get("committed_at")}},
            "author": _user(c.get("author")),
        }
        for c in record.get("commits") or []
    ]


def rest_check_runs(record: dict[str, Any], repo: str) -> dict[str, Any]:
    runs = [
        {
            "name": c["name"],
            "status": (c.get("status") or "").lower(),
            "conclusion": (c.get("conclusion") or "").lower() or None,
        }
        for c in record.get("checks") or []
        if _context_node(c)["__typename"] == "CheckRun"
    ]
    return {"total_count": len(runs), "check_runs": runs}


def rest_status(record: dict[str, Any], repo: str) -> dict[str, Any]:
    statuses = [
        {"context": c["name"], "state": (c.get("conclusion") or "pending").lower()}
        for c in record.get("checks") or []
        if _context_node(c)["__typename"] == "StatusContext"
    ]
    return {
        "state": "success",
        "statuses": statuses,
        "total_count": len(statuses),
        "sha": record.get("head_sha"),
    }


def rest_timeline(record: dict[str, Any], repo: str) -> list[dict[str, Any]]:
    events = [
        {"event": "cross-referenced", "source": {"issue": {"number": i["number"]}}}
        for i in record.get("linked_issues") or []
    ]
    return [*events, {"event": "merged", "commit_id": record.get("merge_commit_sha")}]


REST_PRODUCERS: dict[tuple[str, str], Callable[[dict[str, Any], str], Any]] = {
    ("pulls", ""): rest_pull,
    ("pulls", "/reviews"): rest_reviews,
    ("pulls", "/comments"): rest_review_comments,
    ("pulls", "/commits"): rest_commits,
    ("issues", "/comments"): rest_issue_comments,
    ("issues", "/timeline"): rest_timeline,
    ("commits", "/check-runs"): rest_check_runs,
    ("commits", "/status"): rest_status,
}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeGitHub
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes; without NODELAY each answer waits ~40 ms
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the fake's request log instead."""

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        reply = self.fake.handle(method, self.path, headers, body)
        if reply.drop:
            self.close_connection = True
            return
        if reply.delay:  # held back; a test that wants a timeout makes it far longer than one
            self.fake.closing.wait(reply.delay)
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            if reply.body:
                self.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up waiting (a timeout test)

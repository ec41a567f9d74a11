"""Recorded GitHub REST exchanges (``tests/fixtures/github/replay``) and a transport replaying them.

Format (see the README there): each exchange is 10 lines and a blank line: protocol, method,
host, port, path?query, request headers (Python dict literal), request body, status, response
headers (Python list of tuples), response body on one line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import httpx

from .data import FIXTURES

REPLAY_DIR = FIXTURES / "github" / "replay"


@dataclass(frozen=True)
class Exchange:
    method: str
    host: str
    path: str
    request_headers: dict[str, str]
    request_body: str
    status: int
    headers: list[tuple[str, str]]
    body: str

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def replay_headers(self) -> list[tuple[str, str]]:
        """The recorded headers minus the transfer ones: the body is stored decoded, one line."""
        skip = {"content-encoding", "transfer-encoding", "content-length"}
        return [(k, v) for k, v in self.headers if k.lower() not in skip]


def exchanges(name: str) -> list[Exchange]:
    lines = (REPLAY_DIR / name).read_text("utf-8").split("\n")
    found, index = [], 0
    while index + 10 <= len(lines):
        if not lines[index].strip():
            index += 1
            continue
        part = lines[index : index + 10]
        found.append(
            Exchange(
                method=part[1],
                host=part[2],
                path=part[4],
                request_headers=ast.literal_eval(part[5]),
                request_body=part[6],
                status=int(part[7]),
                headers=[tuple(h) for h in ast.literal_eval(part[8])],
                body=part[9],
            )
        )
        index += 11
    return found


class ReplayTransport(httpx.BaseTransport):
    """Answers requests with recorded exchanges, in order; repeats the last when they run out."""

    def __init__(self, recorded: list[Exchange]) -> None:
        self.recorded = recorded
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        exchange = self.recorded[min(len(self.requests), len(self.recorded) - 1)]
        self.requests.append(request)
        return httpx.Response(
            exchange.status,
            headers=exchange.replay_headers(),
            content=exchange.body.encode(),
            request=request,
        )


def json_body(exchange: Exchange) -> Any:
    import json

    return json.loads(exchange.body)

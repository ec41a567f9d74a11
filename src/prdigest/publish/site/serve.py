"""A localhost HTTP server over a built site, for a quick look (``prdigest serve``).

Only the loopback interface is bound; requests are logged through :mod:`logging`, not printed.
"""

from __future__ import annotations

import functools
import logging
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

from prdigest.core.errors import ConfigError

log = logging.getLogger("prdigest.serve")
LOOPBACK = "127.0.0.1"


class _Handler(SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {  # type: ignore[misc]
        **SimpleHTTPRequestHandler.extensions_map,
        ".html": "text/html; charset=utf-8",
        ".json": "application/json",
        ".xml": "application/atom+xml",
    }

    def end_headers(self) -> None:
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s %s", self.address_string(), format % args)


def make_server(directory: Path, port: int = 8000) -> ThreadingHTTPServer:
    """A server for ``directory`` on 127.0.0.1 (``port=0`` picks a free port)."""
    if not (directory / "index.html").is_file():
        raise ConfigError(
            f"no site in {directory} (build one with `prdigest site --out {directory}`)",
            key="--dir",
        )
    handler = functools.partial(_Handler, directory=str(directory))
    try:
        return ThreadingHTTPServer((LOOPBACK, port), handler)
    except OSError as exc:  # in use or not allowed: the user picks another port
        raise ConfigError(
            f"cannot listen on {LOOPBACK}:{port}: {exc.strerror} (try --port 0 for any free port)",
            key="--port",
        ) from exc


def url_of(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}/"

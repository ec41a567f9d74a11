"""Shared helpers of the publish tests: fixture digests, a malicious PR, local receivers, Chromium.

Everything here runs on loopback; nothing touches the internet.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from prdigest.core.models import (
    AreaGroup,
    Assessment,
    CodeRef,
    Digest,
    DigestItem,
    Entry,
    Kind,
    Level,
    PRHead,
    Window,
)
from prdigest.core.records import PullRequest, parse_record
from prdigest.core.window import day_window
from prdigest.pipeline.digest import DigestOptions, build_digest
from prdigest.store import Store, open_store
from prdigest.write.template import TemplateWriter

FIXTURES = Path(__file__).parent / "fixtures" / "prs"
REPO = "vllm-project/vllm"
DAYS = ("2026-06-10", "2026-06-11")
EVIL_NUMBER = 99001

# What a hostile PR tries: script tags, an image error handler, a javascript: link and a mass
# mention. Each payload would set window.__pwned if it ever ran.
EVIL_TITLE = (
    '[Bugfix][KV Connector] <script>window.__pwned="title"</script> '
    "<img src=x onerror=\"window.__pwned='img'\"> @everyone"
)
EVIL_BODY = (
    "## Purpose\n\n<script>window.__pwned='body'</script>\n\n"
    "<img src=x onerror=\"window.__pwned='body-img'\">\n\n"
    "[click me](javascript:window.__pwned='link') and <a href=\"javascript:alert(1)\">here</a>\n\n"
    "@everyone please look at `<img src=x onerror=window.__pwned=1>` "
    "and `_pop_done_transfers`.\n\n## Test Result\n\nDone.\n"
)
EVIL_COMMENT = (
    "<script>window.__pwned='comment'</script> @everyone @here "
    "[x](javascript:window.__pwned='comment-link') `<svg onload=window.__pwned=2>`"
)


def fixture_records() -> list[PullRequest]:
    return [
        parse_record(json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(FIXTURES.glob("*.json"), key=lambda p: int(p.stem))
    ]


def evil_record_data() -> dict[str, Any]:
    """A must-read-shaped PR (a copy of #56104) whose every text field is hostile."""
    data = copy.deepcopy(json.loads((FIXTURES / "56104.json").read_text(encoding="utf-8")))
    data["number"] = EVIL_NUMBER
    data["url"] = "javascript:window.__pwned='url'"
    data["title"] = EVIL_TITLE
    data["author"] = "evil-<b>author</b>"
    data["body"] = EVIL_BODY + "\n\n" + (data.get("body") or "")  # still reads as a must-read
    data["merged_at"] = "2026-06-10T08:00:00Z"
    for comment in data.get("comments") or []:
        comment["body"] = EVIL_COMMENT
    for thread in data.get("review_threads") or []:
        for comment in thread["comments"]:
            comment["body"] = EVIL_COMMENT
    for review in data.get("reviews") or []:
        review["body"] = EVIL_COMMENT
    return data


def evil_record() -> PullRequest:
    return parse_record(evil_record_data())


def fixture_store(path: Path, *, evil: bool = False) -> Store:
    store = open_store(path)
    records = fixture_records() + ([evil_record()] if evil else [])
    store.records.upsert(records)
    return store


def make_digest(store: Store, day: str, *, top: int = 8, lang: str = "zh") -> Digest:
    options = DigestOptions(repo=REPO, window=day_window(day), top=top, lang=lang)
    return build_digest(store, options, TemplateWriter())


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def fixture_record_data() -> list[dict[str, Any]]:
    return [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(FIXTURES.glob("*.json"), key=lambda p: int(p.stem))
    ]


QUOTING_LABEL = "2026-06-12"


def quoting_digest() -> Digest:
    """A digest whose entry quotes the hostile body and comment verbatim, as a model writer
    quoting the discussion might, with code names and paths that are hostile too."""
    window = Window(
        since=datetime(2026, 6, 11, 16, tzinfo=UTC),
        until=datetime(2026, 6, 12, 16, tzinfo=UTC),
        tz="Asia/Shanghai",
        label=QUOTING_LABEL,
    )
    head = PRHead(
        repo=REPO,
        number=EVIL_NUMBER + 1,
        title=EVIL_TITLE,
        url="javascript:window.__pwned='url'",
        author="mallory",
        additions=1,
        deletions=1,
        merged_at=window.since,
        merge_commit_sha="34fe84094563d6d587b79ad279b25c4172abacff",
        kind=Kind.FIX,
        area="<b>area</b>",
        coverage="full",
    )
    assessment = Assessment(
        repo=REPO,
        number=head.number,
        level=Level.MUST_READ,
        score=9.0,
        reasons=(),
        audience=None,
        area=head.area,
    )
    entry = Entry(
        repo=REPO,
        number=head.number,
        lang="zh",
        title=EVIL_TITLE,
        paragraph=(
            "值得精读。评论原文：" + EVIL_COMMENT + " 正文：<script>window.__pwned='p'</script> "
            "[点我](javascript:window.__pwned='md') 见 `<img src=x onerror=window.__pwned=9>`。"
        ),
        writer="llm:test",
        code_refs=(
            CodeRef(name="<img src=x onerror=window.__pwned=9>", path="a/<script>.py", line=3),
        ),
    )
    item = DigestItem(pr=head, assessment=assessment, entry=entry, selected=True)
    other = item.model_copy(
        update={
            "selected": False,
            "pr": head.model_copy(update={"number": head.number + 1}),
            "entry": entry.model_copy(update={"paragraph": None, "number": head.number + 1}),
        }
    )
    return Digest(
        repo=REPO,
        window=window,
        lang="zh",
        selected=(item,),
        others=(AreaGroup(area=None, name="<i>其他</i>", items=(other,)),),
        total=2,
        counts={level.value: (2 if level is Level.MUST_READ else 0) for level in Level},
        areas={"<b>area</b>": "<b>area</b>"},
    )


# -- a local HTTP receiver that plays the chat services --------------------------------------


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Responder = Callable[[Received], tuple[int, dict[str, str], bytes]]


@dataclass
class Receiver:
    """Records every request; answers with ``responder`` (default: 200 and ``answer``)."""

    answer: bytes = b'{"code":0,"errcode":0,"msg":"success"}'
    status: int = 200
    requests: list[Received] = field(default_factory=list)
    responder: Responder | None = None
    url: str = ""

    def respond(self, request: Received) -> tuple[int, dict[str, str], bytes]:
        if self.responder is not None:
            return self.responder(request)
        return self.status, {"Content-Type": "application/json"}, self.answer


@contextmanager
def receiver(**kwargs: Any) -> Iterator[Receiver]:
    state = Receiver(**kwargs)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            parts = urlsplit(self.path)
            request = Received(
                method="POST",
                path=parts.path,
                query=parse_qs(parts.query),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=self.rfile.read(length),
            )
            state.requests.append(request)
            status, headers, body = state.respond(request)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


# -- a local SMTP server (aiosmtpd) -------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Mailbox:
    """Every message the SMTP server took (raw and parsed) and every password a login gave."""

    password: bytes | None = None  # when set, a login is required and must give it
    raw: list[bytes] = field(default_factory=list)
    messages: list[EmailMessage] = field(default_factory=list)
    logins: list[bytes] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.raw.append(bytes(envelope.content))
        message = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(message, EmailMessage)
        self.messages.append(message)
        return "250 OK"

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> Any:
        from aiosmtpd.smtp import AuthResult

        self.logins.append(data.password)
        return AuthResult(success=data.password == self.password)

    def clear(self) -> None:
        self.raw.clear()
        self.messages.clear()
        self.logins.clear()


@contextmanager
def smtp_receiver(password: str | None = None) -> Iterator[tuple[Mailbox, int]]:
    """An SMTP server on 127.0.0.1 (no TLS); the mailbox and its port."""
    controller_module = pytest.importorskip("aiosmtpd.controller")
    mailbox = Mailbox(password.encode() if password else None)
    port = free_port()
    auth: dict[str, Any] = {}
    if password:
        auth = {"authenticator": mailbox.authenticate, "auth_require_tls": False}
    controller = controller_module.Controller(mailbox, hostname="127.0.0.1", port=port, **auth)
    controller.start()
    try:
        yield mailbox, port
    finally:
        controller.stop()


# -- headless Chromium -------------------------------------------------------------------------

CHROMIUM = os.environ.get("PRDIGEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> str:
    """The Chromium binary; skip when it is absent, unless CI demands the browser tests run."""
    found = shutil.which(CHROMIUM) or (CHROMIUM if Path(CHROMIUM).is_file() else None)
    if found is None:
        if os.environ.get("PRDIGEST_REQUIRE_BROWSER"):
            pytest.fail(f"Chromium not found at {CHROMIUM} but PRDIGEST_REQUIRE_BROWSER is set")
        pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    return found


def assert_page_inert(tab: Any, dialogs: list[str], *, scripts: int = 1) -> None:
    """A site page open in Chromium (a Playwright page) ran nothing from PR text: no
    ``window.__pwned``, no dialog, only the page's own ``scripts`` (a digest page has its filter
    script), no handler attributes, no embedded media, and links only to GitHub and the site."""
    assert tab.evaluate("typeof window.__pwned") == "undefined"
    assert dialogs == []
    assert tab.eval_on_selector_all("script", "s => s.length") == scripts
    handlers = tab.evaluate(
        """() => Array.from(document.querySelectorAll('*')).flatMap(
             e => Array.from(e.attributes).filter(a => a.name.startsWith('on')).map(a => a.name))"""
    )
    assert handlers == []
    assert tab.eval_on_selector_all("img, svg, iframe, object, embed", "e => e.length") == 0
    hrefs = tab.eval_on_selector_all("a[href]", "a => a.map(x => x.getAttribute('href'))")
    for href in hrefs:  # GitHub, or a page of the site itself (no scheme, no other host)
        external = re.match(r"[a-z][a-z0-9+.-]*:|//", href, re.I) is not None
        assert href.startswith("https://github.com/") or not external, href
        assert "javascript:" not in href.lower()

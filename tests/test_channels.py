"""Each channel against a local receiver: payload shape, signatures, escaping, errors.

The signature checks re-implement the services' documented algorithms here, independently of
the code under test:

* Feishu/Lark: ``sign = base64(HMAC-SHA256(key=timestamp + "\\n" + secret, msg=""))``, with
  ``timestamp`` (seconds, within an hour) and ``sign`` in the JSON body.
* DingTalk: ``sign = urlencode(base64(HMAC-SHA256(key=secret, msg=timestamp + "\\n" +
  secret)))`` with ``timestamp`` in milliseconds, both as query parameters.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import httpx
import pytest

from prdigest.core.errors import DeliveryError
from prdigest.core.secrets import Secret
from prdigest.publish.channels.base import WebhookChannel
from prdigest.publish.channels.dingtalk import DingTalkChannel
from prdigest.publish.channels.email import EmailChannel, EmailConfig
from prdigest.publish.channels.feishu import FeishuChannel
from prdigest.publish.channels.slack import SlackChannel
from prdigest.publish.channels.wecom import WeComChannel
from prdigest.publish.summary import Summary, build_summary

from publish_support import (
    EVIL_NUMBER,
    Received,
    fixture_store,
    make_digest,
    quoting_digest,
    receiver,
)

SECRET = "SECtest-signing-secret-0123456789"
PAGE = "https://digests.example.org/vllm-project/vllm/2026-06-10.html"
ZWSP = "\u200b"


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> Summary:
    path = tmp_path_factory.mktemp("channels") / "db.sqlite3"
    with fixture_store(path, evil=True) as store:
        digest = make_digest(store, "2026-06-10")
    return build_summary(digest, page_url=PAGE)


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=60.0) as http:
        yield http


def _all_text(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _assert_defused(text: str) -> None:
    assert "<script" not in text.lower()
    assert "<img" not in text.lower() and "<svg" not in text.lower()  # no tag can form
    assert "javascript:" not in text.lower()
    assert re.search(r"@(everyone|here|all)\b", text) is None  # mentions carry a ZWSP


def _expected_feishu_sign(timestamp: str, secret: str) -> str:
    key = (timestamp + "\n" + secret).encode("utf-8")
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode("ascii")


def _expected_dingtalk_sign(timestamp: str, secret: str) -> str:
    mac = hmac.new(secret.encode(), (timestamp + "\n" + secret).encode(), hashlib.sha256)
    return base64.b64encode(mac.digest()).decode("ascii")


def test_feishu_card_is_signed_and_shaped(summary: Summary, client: httpx.Client) -> None:
    with receiver() as service:
        channel = FeishuChannel(
            "team",
            Secret(service.url + "/open-apis/bot/v2/hook/abc"),
            client=client,
            secret=Secret(SECRET),
            top=3,
        )
        channel.send(summary)
    [request] = service.requests
    assert request.path == "/open-apis/bot/v2/hook/abc"
    assert request.headers["content-type"].startswith("application/json")
    body = request.json()
    assert abs(int(body["timestamp"]) - time.time()) < 3600
    assert body["sign"] == _expected_feishu_sign(body["timestamp"], SECRET)
    assert body["msg_type"] == "interactive"
    card = body["card"]
    assert card["header"]["title"] == {
        "tag": "plain_text",
        "content": "vllm-project/vllm · 2026-06-10 PR 阅读摘要",
    }
    elements = card["elements"]
    assert elements[0]["text"]["content"].startswith("合并 PR 18 个 · 值得精读")
    entries = [e for e in elements if e["tag"] == "div" and e["text"]["content"].startswith("**")]
    assert len(entries) == 3  # top N
    assert f"({PAGE}#pr-" in entries[0]["text"]["content"]
    assert "(https://github.com/vllm-project/vllm/pull/" in entries[0]["text"]["content"]
    note = next(e for e in elements if e["tag"] == "note")
    assert note["elements"][0]["content"] == "其余 15 个 PR 见全文"
    action = next(e for e in elements if e["tag"] == "action")
    assert action["actions"][0]["url"] == PAGE
    evil = next(e for e in entries if f"#{EVIL_NUMBER}" in e["text"]["content"])
    _assert_defused(_all_text(evil) + _all_text(body))


def test_feishu_without_secret_is_unsigned(summary: Summary, client: httpx.Client) -> None:
    with receiver() as service:
        FeishuChannel("team", Secret(service.url + "/hook"), client=client).send(summary)
    body = service.requests[0].json()
    assert "sign" not in body and "timestamp" not in body


def test_feishu_error_code_is_a_delivery_error(summary: Summary, client: httpx.Client) -> None:
    answer = b'{"code":19021,"msg":"sign match fail or timestamp is not within one hour"}'
    with receiver(answer=answer) as service:
        channel = FeishuChannel(
            "team", Secret(service.url + "/hook/TOKEN123"), client=client, secret=Secret(SECRET)
        )
        with pytest.raises(DeliveryError) as caught:
            channel.send(summary)
    message = str(caught.value)
    assert message.startswith("channel 'team': feishu answered code 19021")
    assert "TOKEN123" not in message and SECRET not in message and service.url not in message


def test_dingtalk_markdown_is_signed_in_the_query(summary: Summary, client: httpx.Client) -> None:
    with receiver(answer=b'{"errcode":0,"errmsg":"ok"}') as service:
        channel = DingTalkChannel(
            "ding",
            Secret(service.url + "/robot/send?access_token=tok123"),
            client=client,
            secret=Secret(SECRET),
            top=4,
        )
        channel.send(summary)
    [request] = service.requests
    assert request.path == "/robot/send"
    assert request.query["access_token"] == ["tok123"]  # the webhook's own query is kept
    [timestamp] = request.query["timestamp"]
    [sign] = request.query["sign"]  # parse_qs has undone the one URL-encoding
    assert abs(int(timestamp) / 1000 - time.time()) < 3600
    assert sign == _expected_dingtalk_sign(timestamp, SECRET)
    body = request.json()
    assert body["msgtype"] == "markdown"
    assert body["at"]["isAtAll"] is False
    text = body["markdown"]["text"]
    assert text.startswith("#### vllm-project/vllm · 2026-06-10 PR 阅读摘要")
    assert len(re.findall(r"^\d+\. \[", text, flags=re.M)) == 4
    assert text.rstrip().endswith(f"[阅读全文]({PAGE})")
    _assert_defused(text)


def test_dingtalk_errcode_is_a_delivery_error(summary: Summary, client: httpx.Client) -> None:
    with receiver(answer=b'{"errcode":310000,"errmsg":"sign not match"}') as service:
        channel = DingTalkChannel("ding", Secret(service.url + "/robot/send"), client=client)
        with pytest.raises(DeliveryError, match="errcode 310000: sign not match"):
            channel.send(summary)


def test_wecom_markdown_fits_its_limit(summary: Summary, client: httpx.Client) -> None:
    with receiver(answer=b'{"errcode":0,"errmsg":"ok"}') as service:
        WeComChannel(
            "wx", Secret(service.url + "/cgi-bin/webhook/send?key=k"), client=client, top=50
        ).send(summary)
    body = service.requests[0].json()
    assert set(body) == {"msgtype", "markdown"} and body["msgtype"] == "markdown"
    content = body["markdown"]["content"]
    assert len(content.encode("utf-8")) <= 4096
    assert content.startswith("**vllm-project/vllm · 2026-06-10 PR 阅读摘要**")
    assert f"[阅读全文]({PAGE})" in content
    _assert_defused(content)


def test_slack_blocks_escape_mrkdwn(summary: Summary, client: httpx.Client) -> None:
    with receiver(answer=b"ok") as service:
        SlackChannel("slack", Secret(service.url + "/services/T/B/X"), client=client, top=5).send(
            summary
        )
    body = service.requests[0].json()
    assert body["text"].startswith("vllm-project/vllm · 2026-06-10 PR 阅读摘要: 合并 PR 18 个")
    assert body["unfurl_links"] is False
    kinds = [b["type"] for b in body["blocks"]]
    assert kinds[:2] == ["header", "section"] and kinds[-1] == "actions"
    assert body["blocks"][-1]["elements"][0]["url"] == PAGE
    sections = [b["text"]["text"] for b in body["blocks"] if b["type"] == "section"][1:]
    entries = [e for s in sections for e in s.split("\n\n")]  # packed into few sections
    assert len(entries) == 5
    for text in entries:
        links = re.findall(r"<([^|>]+)\|", text)
        assert links and all(link.startswith("https://") for link in links)
    evil = next(t for t in entries if f"#{EVIL_NUMBER}>" in t)
    assert "&lt;script&gt;" in evil and "<script" not in evil
    assert "<!everyone>" not in _all_text(body) and "<!channel>" not in _all_text(body)


def test_slack_non_ok_answer_fails(summary: Summary, client: httpx.Client) -> None:
    with receiver(status=400, answer=b"invalid_payload") as service:
        channel = SlackChannel("slack", Secret(service.url + "/services/T/B/X"), client=client)
        with pytest.raises(DeliveryError, match="HTTP 400: invalid_payload") as caught:
            channel.send(summary)
    assert caught.value.status == 400


def test_http_500_fails_at_once_without_retry(summary: Summary, client: httpx.Client) -> None:
    with receiver(status=500, answer=b"boom") as service:
        channel = WeComChannel("wx", Secret(service.url + "/send?key=SECRETKEY"), client=client)
        with pytest.raises(DeliveryError) as caught:
            channel.send(summary)
    assert len(service.requests) == 1  # a 500 may have been processed: never posted twice
    assert "SECRETKEY" not in str(caught.value)


def test_503_with_retry_after_is_retried(summary: Summary, client: httpx.Client) -> None:
    answers = [(503, {"Retry-After": "2"}, b"busy"), (200, {}, b'{"errcode":0}')]
    waits: list[float] = []

    def respond(request: Received) -> tuple[int, dict[str, str], bytes]:
        return answers.pop(0)

    with receiver(responder=respond) as service:
        channel = WeComChannel(
            "wx", Secret(service.url + "/send"), client=client, sleep=waits.append
        )
        channel.send(summary)
    assert len(service.requests) == 2 and waits == [2.0]


def test_refused_connection_is_retried_then_reported(
    summary: Summary, client: httpx.Client
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits: list[float] = []
    channel = SlackChannel(
        "slack", Secret(f"http://127.0.0.1:{port}/hook/SECRET"), client=client, sleep=waits.append
    )
    with pytest.raises(DeliveryError, match=r"cannot connect \(ConnectError\)") as caught:
        channel.send(summary)
    assert waits == [1.0, 2.0]
    assert "SECRET" not in str(caught.value) and str(port) not in str(caught.value)


@pytest.mark.parametrize("cls", [FeishuChannel, DingTalkChannel, WeComChannel, SlackChannel])
def test_hostile_titles_cannot_mention_link_or_tag(
    cls: type[WebhookChannel], client: httpx.Client
) -> None:
    hostile = build_summary(quoting_digest(), page_url=PAGE)
    payload = cls("c", Secret("https://x.invalid/h"), client=client).payload(hostile)
    text = _all_text(payload)
    _assert_defused(text)
    assert f"@{ZWSP}everyone" in text  # still readable, but pings nobody
    if cls is SlackChannel:
        assert "&lt;script&gt;" in text and "&lt;b&gt;area&lt;/b&gt;" in text
    else:
        assert "＜script＞" in text and "＜b＞area＜/b＞" in text
    links = re.findall(r"\]\(([^)]*)\)|<(http[^|>]*)\|", text)
    assert links and all((a or b).startswith("https://") for a, b in links)


@pytest.mark.parametrize("cls", [FeishuChannel, DingTalkChannel, WeComChannel, SlackChannel])
def test_reprs_hide_urls_and_secrets(cls: type[WebhookChannel], client: httpx.Client) -> None:
    channel = cls("c", Secret("https://hooks.example/T0KEN"), client=client, secret=Secret(SECRET))
    for text in (repr(channel), str(channel)):
        assert "T0KEN" not in text and SECRET not in text and "[secure]" in text


def test_summary_without_site_links_entries_to_prs(tmp_path: Path) -> None:
    with fixture_store(tmp_path / "db.sqlite3") as store:
        digest = make_digest(store, "2026-06-11")
    plain = build_summary(digest, page_url=None)
    assert all(e.link == e.pr_url for e in plain.entries)
    assert plain.more_line(3) == f"其余 {digest.total - 3} 个 PR 未列出"
    payload = FeishuChannel("t", Secret("https://x.invalid/h"), client=httpx.Client()).payload(
        plain
    )
    assert not any(e["tag"] == "action" for e in payload["card"]["elements"])


# -- e-mail over SMTP with aiosmtpd on loopback -------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-keyout",
                str(key),
                "-out",
                str(cert),
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1",
            ],
            check=True,
            capture_output=True,
        )
    except FileNotFoundError:
        pytest.skip("openssl is needed to make a test certificate")
    return cert, key


class Mailbox:
    def __init__(self) -> None:
        self.messages: list[tuple[list[str], EmailMessage]] = []
        self.logins: list[tuple[bytes, bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(message, EmailMessage)
        self.messages.append((list(envelope.rcpt_tos), message))
        return "250 OK"

    def authenticate(
        self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> Any:
        from aiosmtpd.smtp import AuthResult

        self.logins.append((data.login, data.password))
        return AuthResult(success=data.password == b"s3cret-pw", handled=False)


@pytest.fixture
def smtp_server(
    request: pytest.FixtureRequest, certificate: tuple[Path, Path]
) -> Iterator[tuple[Mailbox, int, str]]:
    controller_module = pytest.importorskip("aiosmtpd.controller")
    mode = request.param
    cert, key = certificate
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    mailbox = Mailbox()
    port = _free_port()
    kwargs: dict[str, Any] = {"authenticator": mailbox.authenticate}
    if mode == "starttls":
        kwargs.update(tls_context=server_tls, require_starttls=True)
    elif mode == "ssl":
        kwargs.update(ssl_context=server_tls, server_hostname="localhost", auth_require_tls=False)
    else:
        kwargs.update(auth_require_tls=False)
    controller = controller_module.Controller(mailbox, hostname="127.0.0.1", port=port, **kwargs)
    controller.start()
    try:
        yield mailbox, port, mode
    finally:
        controller.stop()


def _email_config(port: int, security: str, cert: Path, **extra: Any) -> EmailConfig:
    data = {
        "type": "email",
        "host": "127.0.0.1",
        "port": port,
        "security": security,
        "username": "bot",
        "password_env": "SMTP_PASSWORD",
        "ca_file": str(cert),
        "from": "prdigest <bot@example.org>",
        "to": ["team@example.org", "lead@example.org"],
        "top": 5,
    }
    data.update(extra)
    return EmailConfig.model_validate(data)


@pytest.mark.parametrize("smtp_server", ["starttls", "ssl", "none"], indirect=True)
def test_email_has_plain_and_html_parts(
    summary: Summary, smtp_server: tuple[Mailbox, int, str], certificate: tuple[Path, Path]
) -> None:
    mailbox, port, security = smtp_server
    config = _email_config(port, security, certificate[0])
    EmailChannel("mail", config, password=Secret("s3cret-pw")).send(summary)
    [(recipients, message)] = mailbox.messages
    assert recipients == ["team@example.org", "lead@example.org"]
    assert mailbox.logins == [(b"bot", b"s3cret-pw")]
    assert message["Subject"].startswith("[prdigest] vllm-project/vllm · 2026-06-10 PR 阅读摘要（")
    assert message["From"] == "prdigest <bot@example.org>"
    assert message.get_content_type() == "multipart/alternative"
    plain = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    assert plain is not None and html is not None
    text, markup = plain.get_content(), html.get_content()
    assert "合并 PR 18 个" in text and f"阅读全文: {PAGE}" in text
    assert text.count(f"{PAGE}#pr-") == 5
    assert "<script" not in markup.replace("&lt;script", "")
    assert "onerror=" not in markup.replace("onerror=&#34;", "").replace("onerror=&quot;", "")
    assert "&lt;script&gt;" in markup  # the hostile title is shown as text
    assert f'href="{PAGE}"' in markup
    assert 'href="javascript' not in markup


@pytest.mark.parametrize("smtp_server", ["starttls"], indirect=True)
def test_email_wrong_password_fails_without_leaking_it(
    summary: Summary, smtp_server: tuple[Mailbox, int, str], certificate: tuple[Path, Path]
) -> None:
    _, port, _ = smtp_server
    channel = EmailChannel(
        "mail", _email_config(port, "starttls", certificate[0]), password=Secret("wrong-pw-123")
    )
    assert "wrong-pw-123" not in repr(channel)
    with pytest.raises(DeliveryError) as caught:
        channel.send(summary)
    assert str(caught.value).startswith("channel 'mail': SMTP server answered 535")
    assert "wrong-pw-123" not in str(caught.value)


@pytest.mark.parametrize("smtp_server", ["starttls"], indirect=True)
def test_email_untrusted_certificate_fails(
    summary: Summary, smtp_server: tuple[Mailbox, int, str]
) -> None:
    _, port, _ = smtp_server
    config = _email_config(port, "starttls", Path("/nonexistent"), ca_file=None)
    with pytest.raises(DeliveryError, match="TLS failed"):
        EmailChannel("mail", config, password=Secret("s3cret-pw")).send(summary)


def test_email_unreachable_server_is_a_delivery_error(
    summary: Summary, certificate: tuple[Path, Path]
) -> None:
    config = _email_config(_free_port(), "starttls", certificate[0], timeout=5)
    with pytest.raises(DeliveryError, match=r"cannot send through 127\.0\.0\.1:\d+"):
        EmailChannel("mail", config, password=Secret("s3cret-pw")).send(summary)


# -- every payload within its service's limits at the largest settings the config accepts ----

LONG_BASE = (
    "https://digests.example.org/" + "d" * (300 - len("https://digests.example.org/") - 1) + "/"
)


@pytest.fixture(scope="module")
def huge_summary(tmp_path_factory: pytest.TempPathFactory) -> Summary:
    """60 selected entries (more than the largest `top`), each with a title, a reason and an
    area far longer than a message can hold, CJK and markup in them, a 300-character site URL."""
    path = tmp_path_factory.mktemp("huge") / "db.sqlite3"
    with fixture_store(path, evil=True) as store:
        digest = make_digest(store, "2026-06-10", top=200)
    item = digest.selected[0]
    long_title = "超长标题 <b>[x](y)</b> @everyone " * 300
    long_paragraph = (
        "值得精读，" + "尤其适合负责非常长的方向名称的工程师，" * 200 + "。后面的句子。"
    )
    items = tuple(
        item.model_copy(
            update={
                "pr": item.pr.model_copy(update={"number": 100000 + n, "area": "kv"}),
                "entry": item.entry.model_copy(
                    update={"title": f"{n} {long_title}", "paragraph": long_paragraph}
                ),
            }
        )
        for n in range(60)
    )
    big = digest.model_copy(
        update={"selected": items, "total": 400, "areas": {"kv": "很长的方向名称" * 40}}
    )
    return build_summary(big, page_url=LONG_BASE + "vllm-project/vllm/2026-06-10.html")


def _send(channel: WebhookChannel, summary: Summary, answer: bytes) -> Received:
    with receiver(answer=answer) as service:
        channel._url = Secret(service.url + "/hook")  # the receiver's address, for this test
        channel.send(summary)
    (request,) = service.requests
    return request


def _reasons_shown(text: str, summary: Summary, count: int) -> None:
    assert count >= 1
    for entry in summary.entries[:count]:
        assert str(entry.number) in text
    assert text.count(summary.entries[0].reason[:20]) >= count


def test_slack_at_the_maximum_keeps_every_limit(
    huge_summary: Summary, client: httpx.Client
) -> None:
    channel = SlackChannel("s", Secret("http://x"), client=client, top=50)
    body = _send(channel, huge_summary, b"ok").json()
    blocks = body["blocks"]
    assert len(blocks) <= 50
    assert len(blocks[0]["text"]["text"]) <= 150
    texts = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert all(len(t.encode("utf-16-le")) // 2 <= 3000 for t in texts)
    entries = "\n\n".join(texts[1:]).split("\n\n")
    assert len(entries) == 50  # all 50 fit once packed
    _reasons_shown("\n".join(entries), huge_summary, 50)
    assert blocks[-2]["elements"][0]["text"] == "其余 350 个 PR 见全文"


def test_wecom_at_the_maximum_fits_4096_bytes(huge_summary: Summary, client: httpx.Client) -> None:
    channel = WeComChannel("w", Secret("http://x"), client=client, top=50)
    content = _send(channel, huge_summary, b'{"errcode":0}').json()["markdown"]["content"]
    assert len(content.encode("utf-8")) <= 4096
    _reasons_shown(content, huge_summary, content.count("](https://github.com/"))


def test_dingtalk_at_the_maximum_fits_its_limit(
    huge_summary: Summary, client: httpx.Client
) -> None:
    channel = DingTalkChannel("d", Secret("http://x"), client=client, top=50)
    text = _send(channel, huge_summary, b'{"errcode":0}').json()["markdown"]["text"]
    assert len(text.encode("utf-8")) <= 18000
    _reasons_shown(text, huge_summary, text.count("](https://github.com/"))


def test_feishu_at_the_maximum_fits_20_kb_signed(
    huge_summary: Summary, client: httpx.Client
) -> None:
    channel = FeishuChannel("f", Secret("http://x"), client=client, top=50, secret=Secret(SECRET))
    request = _send(channel, huge_summary, b'{"code":0}')
    assert len(request.body) <= 20 * 1024
    card = request.json()["card"]
    text = json.dumps(card, ensure_ascii=False)
    _reasons_shown(text, huge_summary, text.count("](https://github.com/"))


def test_cards_carry_each_entry_s_reason(summary: Summary, client: httpx.Client) -> None:
    first = summary.entries[0]
    assert first.reason.startswith("值得精读") and first.reason.endswith("。")
    assert "建议" not in first.reason  # one sentence: the verdict and its readers, no more
    for channel, answer in (
        (FeishuChannel("f", Secret("http://x"), client=client), b'{"code":0}'),
        (DingTalkChannel("d", Secret("http://x"), client=client), b'{"errcode":0}'),
        (WeComChannel("w", Secret("http://x"), client=client), b'{"errcode":0}'),
        (SlackChannel("s", Secret("http://x"), client=client), b"ok"),
    ):
        text = _all_text(_send(channel, summary, answer).json())
        assert first.reason.split("，")[0] in text, channel.kind

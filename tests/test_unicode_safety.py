"""Bidi controls and zero-width characters in PR text are made visible in every output.

Reproduces issue 14: U+202E and zero-width characters passed into every output and chat payload
(a file name such as ``‮txt.exe`` displayed reversed), and a file path containing ``../`` built a
link off the repository.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from prdigest.core.errors import RecordError
from prdigest.core.models import CodeRef, Entry
from prdigest.core.records import parse_record
from prdigest.core.secrets import Secret
from prdigest.publish.channels.dingtalk import DingTalkChannel
from prdigest.publish.channels.email import EmailChannel, EmailConfig
from prdigest.publish.channels.feishu import FeishuChannel
from prdigest.publish.channels.slack import SlackChannel
from prdigest.publish.channels.wecom import WeComChannel
from prdigest.publish.summary import build_summary
from prdigest.render import render
from prdigest.render.common import INVISIBLE, defuse_mentions
from prdigest.render.html import paragraph_html
from prdigest.render.markdown import paragraph_markdown
from prdigest.store import open_store

from publish_support import FIXTURES, make_digest

RLO, ZWSP, ZWJ, LRI, BOM = "\u202e", "\u200b", "\u200d", "\u2066", "\ufeff"
HOSTILE = f"[Bugfix] fix {RLO}txt.exe{ZWSP} and {LRI}quietly{ZWJ} {BOM}merge"


def hostile_store(tmp_path: Path) -> Any:
    data = copy.deepcopy(json.loads((FIXTURES / "56104.json").read_text(encoding="utf-8")))
    data["number"] = 99123
    data["title"] = HOSTILE
    data["author"] = f"bad{RLO}actor"
    data["body"] = f"{RLO}gnp.exe {ZWSP}{data.get('body') or ''}"
    data["merged_at"] = "2026-06-10T08:00:00Z"
    others = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURES.glob("*.json"))]
    store = open_store(tmp_path / "db.sqlite3")
    store.records.upsert([parse_record(d) for d in others] + [parse_record(data)])
    return store


def hidden(text: str) -> list[str]:
    """Invisible controls in ``text``, except the ZWSP prdigest puts after ``@`` itself."""
    return [m.group(0) for m in INVISIBLE.finditer(text.replace("@" + ZWSP, "@"))]


def test_every_output_shows_the_controls(tmp_path: Path) -> None:
    store = hostile_store(tmp_path)
    digest = make_digest(store, "2026-06-10", top=30)
    assert any(i.pr.number == 99123 for i in digest.all_items())
    for fmt in ("text", "markdown", "html", "atom"):
        out = render(digest, fmt).decode("utf-8")
        assert hidden(out) == [], fmt
        if fmt in ("markdown", "html"):  # they show the original title and the author
            assert "U+202E" in out, fmt
    summary = build_summary(digest, page_url="https://x.example/p.html")
    with httpx.Client() as client:
        for cls in (FeishuChannel, DingTalkChannel, WeComChannel, SlackChannel):
            payload = cls("c", Secret("https://x.invalid/h"), client=client).payload(summary)
            assert hidden(json.dumps(payload, ensure_ascii=False)) == [], cls.__name__
    mail = EmailChannel(
        "m", EmailConfig(type="email", host="127.0.0.1", **{"from": "a@b.c"}, to=["d@e.f"])
    )
    assert hidden(mail.plain_text(summary)) == [] and hidden(mail.html(summary)) == []
    store.close()


def test_the_mention_guard_is_the_only_zero_width_character() -> None:
    assert hidden(defuse_mentions("@everyone")) == []
    assert hidden(f"a{ZWSP}b") == [ZWSP]


def test_links_only_from_normalised_in_repo_paths() -> None:
    entry = Entry(
        repo="a/b",
        number=1,
        title="t",
        paragraph="see `f` and `g`",
        writer="template",
        lang="zh",
        code_refs=(
            CodeRef(name="f", path="../../../etc/passwd", line=1),
            CodeRef(name="g", path="src/g.py", line=2),
        ),
    )
    sha = "0" * 40
    html = str(paragraph_html(entry, sha))
    md = paragraph_markdown(entry, sha)
    for out in (html, md):
        assert "etc/passwd" not in out and "src/g.py#L2" in out
        assert len(re.findall(r"https://github\.com/a/b/blob/", out)) == 1


def test_a_record_with_a_dot_dot_path_is_refused() -> None:
    data = json.loads((FIXTURES / "56104.json").read_text(encoding="utf-8"))
    data["files"][0]["path"] = "docs/../../x.md"
    with pytest.raises(RecordError, match=r"files\.0\.path"):
        parse_record(data)

"""The static site builder, the html/atom renderers and the stored digests behind them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from prdigest.core.models import CodeRef, Entry
from prdigest.publish.site.builder import MANIFEST, SiteOptions, build_site, page_path
from prdigest.render import RENDERERS, render
from prdigest.render.html import paragraph_html
from prdigest.store import Store

from publish_support import DAYS, EVIL_NUMBER, REPO, fixture_store, make_digest, quoting_digest

ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with fixture_store(tmp_path / "db.sqlite3", evil=True) as opened:
        yield opened


def test_html_and_atom_are_registered_renderers(store: Store) -> None:
    assert {"html", "atom"} <= set(RENDERERS)
    assert RENDERERS["html"].media_type.startswith("text/html")
    digest = make_digest(store, "2026-06-10")
    page = render(digest, "html").decode("utf-8")
    assert page.startswith("<!doctype html>")
    assert "Content-Security-Policy" in page
    root = ET.fromstring(render(digest, "atom"))
    assert root.tag == f"{ATOM}feed"
    [entry] = root.findall(f"{ATOM}entry")
    assert entry.findtext(f"{ATOM}title") == f"{REPO} · 2026-06-10 PR 阅读摘要"
    assert entry.findtext(f"{ATOM}updated") == "2026-06-11T00:00:00+08:00"
    assert render(digest, "atom") == render(digest, "atom")  # no clock inside


def test_paragraph_html_escapes_prose_and_links_code() -> None:
    entry = Entry(
        repo=REPO,
        number=1,
        lang="zh",
        title="t",
        paragraph="看 `foo<bar>` 与 <script>x</script> 还有 `baz`",
        writer="template",
        code_refs=(CodeRef(name="foo<bar>", path="a b/c.py", line=7),),
    )
    html = str(paragraph_html(entry, "0123456789abcdef0123456789abcdef01234567"))
    assert html == (
        '看 <a class="code" href="https://github.com/vllm-project/vllm/blob/'
        '0123456789abcdef0123456789abcdef01234567/a%20b/c.py#L7"><code>foo&lt;bar&gt;</code></a>'
        " 与 &lt;script&gt;x&lt;/script&gt; 还有 <code>baz</code>"
    )
    # no permalink without a merge commit, nor with one that is not a commit id
    assert "href" not in str(paragraph_html(entry, None))
    assert "href" not in str(paragraph_html(entry, 'x" onmouseover="alert(1)'))


def test_hostile_digest_page_has_no_markup_from_pr_text() -> None:
    page = render(quoting_digest(), "html").decode("utf-8")
    assert page.count("<script>") == 1  # the page's own filter script
    assert "<img" not in page and "<svg" not in page and "<b>" not in page
    assert 'href="javascript' not in page
    assert "&lt;script&gt;window.__pwned" in page


def _site(store: Store, out: Path, **kwargs: object) -> SiteOptions:
    return SiteOptions(out_dir=out, **kwargs)  # type: ignore[arg-type]


def test_site_layout_index_feed_and_json(store: Store, tmp_path: Path) -> None:
    for day in DAYS:
        store.digests.put(make_digest(store, day))
    out = tmp_path / "site"
    report = build_site(store.digests, _site(store, out, base_url="https://d.example/x/"))
    assert report.digests == 2
    assert sorted(report.written) == sorted(
        [
            "index.html",
            f"{REPO}/index.html",
            f"{REPO}/feed.xml",
            f"{REPO}/2026-06-10.html",
            f"{REPO}/2026-06-10.json",
            f"{REPO}/2026-06-11.html",
            f"{REPO}/2026-06-11.json",
        ]
    )
    index = (out / "index.html").read_text("utf-8")
    assert index.index("2026-06-11") < index.index("2026-06-10")  # newest first
    data = json.loads((out / REPO / "2026-06-10.json").read_text("utf-8"))
    assert data["format"] == "prdigest.digest/v1" and data["repo"] == REPO
    assert EVIL_NUMBER in [pr["pr"]["number"] for pr in data["prs"]]
    feed = ET.parse(out / REPO / "feed.xml").getroot()
    entries = feed.findall(f"{ATOM}entry")
    assert [e.findtext(f"{ATOM}title") for e in entries] == [
        f"{REPO} · 2026-06-11 PR 阅读摘要",
        f"{REPO} · 2026-06-10 PR 阅读摘要",
    ]
    links = [e.find(f"{ATOM}link").get("href") for e in entries]  # type: ignore[union-attr]
    assert links[0] == f"https://d.example/x/{REPO}/2026-06-11.html"
    self_link = [x.get("href") for x in feed.findall(f"{ATOM}link") if x.get("rel") == "self"]
    assert self_link == [f"https://d.example/x/{REPO}/feed.xml"]
    content = entries[1].findtext(f"{ATOM}content") or ""
    assert "&lt;script&gt;" in content and "<script" not in content  # escaped inside the HTML


def test_regeneration_rewrites_only_what_changed(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "site"
    store.digests.put(make_digest(store, "2026-06-10"))
    first = build_site(store.digests, _site(store, out))
    assert len(first.written) == 5
    page = out / page_path(REPO, "2026-06-10", "zh")
    stamp = page.stat().st_mtime_ns
    again = build_site(store.digests, _site(store, out))
    assert again.written == []  # nothing changed, nothing written
    assert page.stat().st_mtime_ns == stamp
    # a new digest: its page and JSON, the feed and both indexes; the old page is untouched
    store.digests.put(make_digest(store, "2026-06-11"))
    third = build_site(store.digests, _site(store, out))
    assert sorted(third.written) == sorted(
        [
            "index.html",
            f"{REPO}/index.html",
            f"{REPO}/feed.xml",
            f"{REPO}/2026-06-11.html",
            f"{REPO}/2026-06-11.json",
        ]
    )
    assert page.stat().st_mtime_ns == stamp
    # a changed digest (a different top N) rewrites its own files, feed and indexes
    assert store.digests.put(make_digest(store, "2026-06-10", top=3)).changed
    fourth = build_site(store.digests, _site(store, out))
    assert f"{REPO}/2026-06-10.html" in fourth.written
    assert f"{REPO}/2026-06-11.html" not in fourth.written


def test_a_tampered_page_is_repaired(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "site"
    store.digests.put(make_digest(store, "2026-06-10"))
    build_site(store.digests, _site(store, out))
    page = out / page_path(REPO, "2026-06-10", "zh")
    good = page.read_bytes()
    page.write_bytes(b"edited by hand")
    report = build_site(store.digests, _site(store, out))
    assert report.written == [page_path(REPO, "2026-06-10", "zh")]
    assert page.read_bytes() == good
    (out / MANIFEST).write_text("not json")
    assert build_site(store.digests, _site(store, out)).written == []


def test_english_digests_get_their_own_files(store: Store, tmp_path: Path) -> None:
    store.digests.put(make_digest(store, "2026-06-10"))
    store.digests.put(make_digest(store, "2026-06-10", lang="en"))
    out = tmp_path / "site"
    report = build_site(store.digests, _site(store, out))
    assert f"{REPO}/2026-06-10.en.html" in report.written
    assert f"{REPO}/feed.en.xml" in report.written
    page = (out / REPO / "2026-06-10.en.html").read_text("utf-8")
    assert '<html lang="en">' in page and "Reading guide" in page


def test_empty_store_gives_an_index_saying_so(store: Store, tmp_path: Path) -> None:
    report = build_site(store.digests, _site(store, tmp_path / "site"))
    assert report.written == ["index.html"]
    assert "还没有摘要" in (tmp_path / "site" / "index.html").read_text("utf-8")


def test_empty_window_renders_a_page(store: Store, tmp_path: Path) -> None:
    store.digests.put(make_digest(store, "2026-07-01"))
    build_site(store.digests, _site(store, tmp_path / "site"))
    page = (tmp_path / "site" / page_path(REPO, "2026-07-01", "zh")).read_text("utf-8")
    assert "窗口内没有合并的 PR" in page and "<script>" not in page

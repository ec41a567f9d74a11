"""The built site in headless Chromium (Debian's package, driven by Playwright's Python package).

The site is built from the fixture PRs of 2026-06-10 and 2026-06-11 plus a hostile PR, served
from 127.0.0.1, and checked in the page: it loads, filters hide and show the right entries, and
no script from PR text runs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from prdigest.publish.site.builder import SiteOptions, build_site, page_path
from prdigest.publish.site.serve import make_server, url_of

from publish_support import (
    CHROMIUM_ARGS,
    DAYS,
    EVIL_NUMBER,
    QUOTING_LABEL,
    REPO,
    assert_page_inert,
    fixture_store,
    make_digest,
    quoting_digest,
    require_chromium,
)

pytestmark = pytest.mark.browser


@dataclass
class Site:
    url: str
    root: Path
    counts: dict[str, dict[str, int]]  # label -> level -> count


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("site")
    counts = {}
    with fixture_store(root / "db.sqlite3", evil=True) as store:
        for day in DAYS:
            digest = make_digest(store, day)
            store.digests.put(digest)
            counts[day] = digest.counts
        store.digests.put(quoting_digest())
        build_site(store.digests, SiteOptions(out_dir=root / "out"))
    server = make_server(root / "out", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Site(url=url_of(server), root=root, counts=counts)
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = require_chromium()
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class Page:
    page: Any
    dialogs: list[str]
    console_errors: list[str]


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1000, "height": 1200})
    tab = context.new_page()
    opened = Page(tab, [], [])

    def on_dialog(dialog: Any) -> None:
        opened.dialogs.append(dialog.message)
        dialog.dismiss()

    tab.on("dialog", on_dialog)
    tab.on(
        "console",
        lambda msg: opened.console_errors.append(msg.text) if msg.type == "error" else None,
    )
    yield opened
    context.close()


def visible_numbers(page: Any) -> list[int]:
    ids = page.eval_on_selector_all(
        "[data-level][data-area]", "els => els.filter(e => !e.hidden).map(e => e.id)"
    )
    return sorted(int(i.removeprefix("pr-")) for i in ids)


def test_index_lists_every_digest_newest_first(site: Site, page: Page) -> None:
    page.page.goto(site.url)
    assert page.page.title() == "PR 阅读摘要"
    labels = page.page.eval_on_selector_all(
        "table.digests td:first-child a", "a => a.map(x => x.textContent)"
    )
    assert labels == [QUOTING_LABEL, "2026-06-11", "2026-06-10"]
    page.page.click("text=2026-06-10")
    page.page.wait_for_selector("article.entry")
    assert page.page.url.endswith(page_path(REPO, "2026-06-10", "zh"))


def test_digest_page_loads_with_entries_counts_and_anchors(site: Site, page: Page) -> None:
    page.page.goto(site.url + page_path(REPO, "2026-06-10", "zh"))
    heading = page.page.inner_text("h1")
    assert REPO in heading and "2026-06-10" in heading
    assert page.page.is_visible(".filters")  # the script ran and revealed the filter bar
    entries = page.page.query_selector_all("article.entry")
    assert len(entries) == 8
    total = sum(site.counts["2026-06-10"].values())
    assert len(visible_numbers(page.page)) == total
    assert page.page.inner_text(".shown") == f"显示 {total} / {total} 个 PR"
    # an anchor per PR, and a PR link built by the project
    assert page.page.query_selector("#pr-56104") is not None
    href = page.page.get_attribute("#pr-56104 h3 a:not(.anchor)", "href")
    assert href == "https://github.com/vllm-project/vllm/pull/56104"
    # code names link to their line at the merge commit
    code_links = page.page.eval_on_selector_all("a.code", "a => a.map(x => x.href)")
    assert any(
        "/blob/34fe84094563d6d587b79ad279b25c4172abacff/" in h and "#L" in h for h in code_links
    )
    assert page.console_errors == []


def test_level_filter_hides_and_shows_the_right_entries(site: Site, page: Page) -> None:
    page.page.goto(site.url + page_path(REPO, "2026-06-10", "zh"))
    everything = visible_numbers(page.page)
    levels = page.page.eval_on_selector_all(
        "[data-level][data-area]", "els => els.map(e => [Number(e.id.slice(3)), e.dataset.level])"
    )
    must = sorted(n for n, level in levels if level == "must_read")
    page.page.click('[data-filter="level"] button[data-value="must_read"]')
    assert visible_numbers(page.page) == must
    assert (
        page.page.get_attribute(
            '[data-filter="level"] button[data-value="must_read"]', "aria-pressed"
        )
        == "true"
    )
    # groups of "其他合并" without a visible entry are hidden with it
    hidden_groups = page.page.eval_on_selector_all(
        "section.group", "s => s.filter(x => x.hidden).length"
    )
    assert hidden_groups >= 1
    # a second level widens the selection
    list_only = sorted(n for n, level in levels if level == "list_only")
    page.page.click('[data-filter="level"] button[data-value="list_only"]')
    assert visible_numbers(page.page) == sorted(must + list_only)
    page.page.click(".filters .reset")
    assert visible_numbers(page.page) == everything


def test_area_and_level_filters_combine(site: Site, page: Page) -> None:
    page.page.goto(site.url + page_path(REPO, "2026-06-10", "zh"))
    items = page.page.eval_on_selector_all(
        "[data-level][data-area]",
        "els => els.map(e => [Number(e.id.slice(3)), e.dataset.level, e.dataset.area])",
    )
    area = items[0][2]
    page.page.click(f'[data-filter="area"] button[data-value="{area}"]')
    assert visible_numbers(page.page) == sorted(n for n, _, a in items if a == area)
    page.page.click('[data-filter="level"] button[data-value="must_read"]')
    expected = sorted(n for n, level, a in items if a == area and level == "must_read")
    assert visible_numbers(page.page) == expected
    shown = page.page.inner_text(".shown")
    assert shown.startswith(f"显示 {len(expected)} / ")
    # a combination nothing matches says so
    present = {level for _, level, a in items if a == area}
    absent = [
        v
        for v in page.page.eval_on_selector_all(
            '[data-filter="level"] button', "b => b.map(x => x.dataset.value)"
        )
        if v not in present
    ]
    assert absent, "fixture day should have a level missing from the first area"
    page.page.click('[data-filter="level"] button[data-value="must_read"]')
    page.page.click(f'[data-filter="level"] button[data-value="{absent[0]}"]')
    assert visible_numbers(page.page) == []
    assert page.page.is_visible(".empty-filter")
    page.page.click(".filters .reset")
    assert not page.page.is_visible(".empty-filter")


def _assert_inert(page: Page) -> None:
    assert_page_inert(page.page, page.dialogs)


def test_hostile_pr_text_renders_as_text_and_runs_nothing(site: Site, page: Page) -> None:
    page.page.goto(site.url + page_path(REPO, "2026-06-10", "zh"))
    page.page.wait_for_selector(f"#pr-{EVIL_NUMBER}")
    _assert_inert(page)
    text = page.page.inner_text(f"#pr-{EVIL_NUMBER}")
    assert '<script>window.__pwned="title"</script>' in text  # shown literally
    assert "<img src=x onerror=" in text
    assert "@everyone" in text
    assert "@evil-<b>author</b>" in text
    link = page.page.get_attribute(f"#pr-{EVIL_NUMBER} h3 a:not(.anchor)", "href")
    assert (
        link == f"https://github.com/{REPO}/pull/{EVIL_NUMBER}"
    )  # not the record's javascript: URL


def test_quoted_body_and_comments_render_as_text(site: Site, page: Page) -> None:
    page.page.goto(site.url + page_path(REPO, QUOTING_LABEL, "zh"))
    page.page.wait_for_selector(f"#pr-{EVIL_NUMBER + 1}")
    _assert_inert(page)
    paragraph = page.page.inner_text(f"#pr-{EVIL_NUMBER + 1} .para")
    assert "<script>window.__pwned='comment'</script> @everyone @here" in paragraph
    assert "[x](javascript:window.__pwned='comment-link')" in paragraph
    assert "[点我](javascript:window.__pwned='md')" in paragraph
    code = page.page.inner_text(f"#pr-{EVIL_NUMBER + 1} .para a.code code")
    assert code == "<img src=x onerror=window.__pwned=9>"
    href = page.page.get_attribute(f"#pr-{EVIL_NUMBER + 1} .para a.code", "href")
    assert href.startswith(
        f"https://github.com/{REPO}/blob/34fe84094563d6d587b79ad279b25c4172abacff/"
    )
    assert "%3Cscript%3E" in href
    # filters keep working on the hostile page; area names are text too
    assert "<b>area</b>" in page.page.inner_text('[data-filter="area"]')
    page.page.click('[data-filter="level"] button[data-value="must_read"]')
    assert visible_numbers(page.page) == [EVIL_NUMBER + 1, EVIL_NUMBER + 2]


def test_screenshot_of_a_digest_page(site: Site, page: Page, tmp_path: Path) -> None:
    page.page.goto(site.url + page_path(REPO, "2026-06-11", "zh"))
    page.page.wait_for_selector("article.entry")
    shot = tmp_path / "digest-page.png"
    page.page.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000


def test_page_is_readable_on_a_phone(site: Site, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    tab = context.new_page()
    tab.goto(site.url + page_path(REPO, "2026-06-10", "zh"))
    overflow = tab.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0  # nothing wider than the screen: no sideways scrolling
    size = tab.evaluate("parseFloat(getComputedStyle(document.querySelector('.para')).fontSize)")
    assert size >= 14
    context.close()

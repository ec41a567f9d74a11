"""Regenerate docs/images/digest-page.png: a digest page of the fixture PRs in headless Chromium.

Run: python scripts/screenshot.py        (or: just screenshot)

Needs Debian's chromium (/usr/bin/chromium, or $PRDIGEST_CHROMIUM) driven by Playwright's Python
package (the test extra); Chinese text needs a CJK font such as Debian's fonts-noto-cjk. The site is
built from tests/fixtures/prs (vllm-project/vllm, 2026-06-10) into a temporary directory and
served on 127.0.0.1, exactly as the browser tests do.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "prs"
DEFAULT_OUT = ROOT / "docs" / "images" / "digest-page.png"
sys.path.insert(0, str(ROOT / "tests"))

from publish_support import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the flags the tests use)


def build_site(workdir: Path, day: str) -> Path:
    sys.path.insert(0, str(ROOT / "src"))
    from prdigest.core.records import parse_record
    from prdigest.core.window import day_window
    from prdigest.pipeline.digest import DigestOptions, build_digest
    from prdigest.publish.site.builder import SiteOptions, build_site, page_path
    from prdigest.store import open_store
    from prdigest.write.template import TemplateWriter

    records = [parse_record(json.loads(p.read_text("utf-8"))) for p in FIXTURES.glob("*.json")]
    with open_store(workdir / "db.sqlite3") as store:
        store.records.upsert(records)
        options = DigestOptions(repo="vllm-project/vllm", window=day_window(day))
        store.digests.put(build_digest(store, options, TemplateWriter()))
        build_site(store.digests, SiteOptions(out_dir=workdir / "site"))
    return Path(page_path("vllm-project/vllm", day, "zh"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--date", default="2026-06-10")
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--height", type=int, default=1300)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from prdigest.publish.site.serve import make_server, url_of

    with tempfile.TemporaryDirectory(prefix="prdigest-shot-") as tmp:
        page_rel = build_site(Path(tmp), args.date)
        server = make_server(Path(tmp) / "site", 0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM,
                    args=CHROMIUM_ARGS,
                )
                page = browser.new_page(
                    viewport={"width": args.width, "height": args.height}, device_scale_factor=1
                )
                page.emulate_media(color_scheme="light")
                page.goto(url_of(server) + str(page_rel))
                page.wait_for_selector("article.entry")
                args.out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(args.out))
                browser.close()
        finally:
            server.shutdown()
            server.server_close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

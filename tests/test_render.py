"""Renderers: golden text/markdown, layout rules, escaping of untrusted PR text, JSON."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from prdigest.core.models import Digest
from prdigest.core.window import day_window
from prdigest.pipeline.digest import DigestOptions, build_digest
from prdigest.render import RENDERERS, render
from prdigest.render.markdown import escape, person
from prdigest.store import Store
from prdigest.write.template import TemplateWriter

from conftest import GOLDEN, REPO, file_patch, make_pr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from build_golden import CASES


def digest_of(store: Store, day: str, lang: str = "zh", top: int = 8) -> Digest:
    options = DigestOptions(repo=REPO, window=day_window(day), lang=lang, top=top)  # type: ignore[arg-type]
    return build_digest(store, options, TemplateWriter())


@pytest.mark.parametrize(("name", "day", "fmt", "lang"), CASES)
def test_golden(loaded_store: Store, name: str, day: str, fmt: str, lang: str) -> None:
    produced = render(digest_of(loaded_store, day, lang), fmt)
    assert produced == (GOLDEN / name).read_bytes(), (
        f"run scripts/build_golden.py and review {name}"
    )


def test_text_layout_matches_the_examples(loaded_store: Store) -> None:
    text = render(digest_of(loaded_store, "2026-06-10"), "text").decode()
    assert text.startswith(REPO + "\n\n") and not text.endswith("\n")
    blocks = text.split("\n\n")[1:]
    digest = digest_of(loaded_store, "2026-06-10")
    expected = []
    for item in digest.all_items():
        expected.append(item.entry.title)
        if item.entry.paragraph:
            expected.append(item.entry.paragraph)
    assert blocks == expected
    assert all("\n" not in b for b in blocks)


def test_every_merged_pr_appears_once(loaded_store: Store, records: list) -> None:  # type: ignore[type-arg]
    digest = digest_of(loaded_store, "2026-06-11")
    day_b = {r.number for r in records if r.merged_at.isoformat() >= "2026-06-10T16"}
    assert sorted(i.pr.number for i in digest.all_items()) == sorted(day_b)
    assert len(digest.selected) == 8


def test_empty_window_is_a_clear_digest(store: Store) -> None:
    digest = digest_of(store, "2030-01-01")
    assert (
        render(digest, "text").decode()
        == f"{REPO}\n\n2030-01-01（Asia/Shanghai）窗口内没有合并的 PR。"
    )
    assert "没有合并的 PR" in render(digest, "markdown").decode()
    assert json.loads(render(digest, "json"))["prs"] == []


def test_json_lists_every_pr_with_level_reasons_and_entry(loaded_store: Store) -> None:
    payload = json.loads(render(digest_of(loaded_store, "2026-06-10"), "json"))
    assert payload["format"] == "prdigest.digest/v1" and payload["total"] == len(payload["prs"])
    first = payload["prs"][0]
    assert {"level", "score", "assessment", "entry", "pr", "selected"} <= set(first)
    assert first["assessment"]["reasons"][0]["code"] == "level"
    assert "audience" in first["assessment"]


def test_markdown_links_code_names_to_the_merge_commit(loaded_store: Store) -> None:
    md = render(digest_of(loaded_store, "2026-06-10"), "markdown").decode()
    sha = "34fe84094563d6d587b79ad279b25c4172abacff"
    assert (
        f"[`_try_release_xfer_handle`](https://github.com/{REPO}/blob/{sha}/"
        "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py#L413)"
    ) in md
    assert "## 其他合并" in md and "本摘要是精选" in md


def test_markdown_shows_the_prs_own_title_beside_a_translated_one(loaded_store: Store) -> None:
    digest = digest_of(loaded_store, "2026-06-10")
    md = render(digest, "markdown").decode()
    for item in [*digest.selected, *(i for g in digest.others for i in g.items)]:
        own = escape(item.pr.title)
        assert (f"原标题：{own}" in md) is (item.entry.title != item.pr.title), item.pr.number
        assert md.count(f"原标题：{own}") <= 1
    english = render(digest_of(loaded_store, "2026-06-10", lang="en"), "markdown").decode()
    assert "original title" not in english  # English titles are the PRs' own subjects


def test_markdown_defuses_hostile_pr_text(store: Store) -> None:
    hostile = make_pr(
        number=9,
        title="[Bugfix] <script>alert(1)</script> [click](javascript:alert(1)) @everyone",
        author="mallory",
        files=[file_patch("vllm/x.py", ["a = 1"], ["a = 2"])],
    )
    store.records.upsert([hostile])
    md = render(digest_of(store, "2026-06-10"), "markdown").decode()
    assert "<script>" not in md
    assert "](javascript:" not in md
    assert "`@everyone`" in md and "\u200b" not in md  # a code span: GitHub pings nobody
    assert re.search(r"(?<!`)@everyone", md) is None
    links = re.findall(r"\]\(([^)]+)\)", md)
    assert links and all(link.startswith("https://github.com/") for link in links)


def test_escape_keeps_text_readable() -> None:
    assert escape("- a_b [x](y)") == "\\- a\\_b \\[x\\]\\(y)"
    assert escape("1. item") == "1\\. item"
    assert escape("+ x") == "\\+ x" and escape("# x") == "\\# x" and escape("x #3") == "x #3"
    assert escape("(1) 先看 (2) 再看 {a} #1 !x") == "(1) 先看 (2) 再看 {a} #1 !x"  # no needless \\
    assert escape("见 @njhill 的建议") == "见 `@njhill` 的建议"
    assert escape("a@b.com") == "a@b.com"


def test_authors_link_to_their_profiles() -> None:
    assert person("njhill") == "[@njhill](https://github.com/njhill)"
    assert person("dependabot[bot]") == (
        "[@dependabot\\[bot\\]](https://github.com/apps/dependabot)"
    )
    assert person("Li Wang") == "Li Wang"


def test_registry_knows_the_formats() -> None:
    assert {"text", "markdown", "json"} <= set(RENDERERS)

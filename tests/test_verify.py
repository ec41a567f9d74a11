"""Verification of written entries against the PR record."""

from __future__ import annotations

import pytest

from prdigest.core.models import Level
from prdigest.write.llm.prompt import verdict_phrase
from prdigest.write.llm.verify import Grounds, chinese_share, verdict_of, verify_entry, verify_title
from prdigest.write.template import TemplateWriter

from llm_support import analyzed, fixture_prs, good_paragraph

NUMBER = 56104  # NIXL multi-handle race: must_read, reviewers njhill and others


def problems(paragraph: str, title: str = "NIXL 多句柄传输竞态修复") -> list[str]:
    pr, dossier, assessment = analyzed(NUMBER)
    found = verify_entry(
        title, paragraph, Grounds(pr, dossier), assessment, "zh", verdict_phrase(assessment, "zh")
    )
    return [p.code + ":" + ",".join(p.args) for p in found]


def test_the_template_paragraphs_of_every_fixture_are_grounded() -> None:
    writer = TemplateWriter()
    for pr in fixture_prs():
        _, dossier, assessment = analyzed(pr.number)
        if assessment.level is Level.LIST_ONLY:
            continue
        entry = writer.write(dossier, assessment, lang="zh", paragraph=True)
        verdict = verdict_phrase(assessment, "zh")
        found = verify_entry(
            "改动要点：测试", entry.paragraph, Grounds(pr, dossier), assessment, "zh", verdict
        )
        assert found == [], (pr.number, found)


def test_a_good_paragraph_passes() -> None:
    assert problems(good_paragraph(NUMBER)) == []


@pytest.mark.parametrize(
    ("addition", "expected"),
    [
        ("另见 `rebalance_xfer_pool`。", "unknown_name:rebalance_xfer_pool"),
        ("吞吐提升 37%。", "unknown_figure:37%"),
        ("解码延迟降低 3 倍。", "unknown_figure:3倍"),
        ("感谢 @someone-else 的评审。", "unknown_login:someone-else"),
        ("另见 vllm/engine/made_up.py。", "unknown_path:vllm/engine/made_up.py"),
        ("详见 https://example.com/x。", "link:"),
        ("**重点**在这里。", "markdown:**"),
        ("\n第二行。", "markdown:line break"),
    ],
)
def test_each_invention_is_named(addition: str, expected: str) -> None:
    assert expected in problems(good_paragraph(NUMBER) + addition)


def test_grounded_variants_pass() -> None:
    paragraph = good_paragraph(NUMBER) + (
        "另见 `base_worker.py::_try_release_xfer_handle` 与 `_try_release_xfer_handle()`，"
        "@njhill 参与了评审，修复关闭了 #55871，(1) 两处改动。"
    )
    assert problems(paragraph) == []


def test_verdict_must_match_the_level() -> None:
    paragraph = good_paragraph(NUMBER).replace("值得精读", "快速浏览即可，不必精读", 1)
    assert "verdict:值得精读" in problems(paragraph)


def test_english_is_rejected_for_chinese_output() -> None:
    text = (
        "Worth a close read. This fixes the race in `_try_release_xfer_handle` of "
        "`base_worker.py` where requests were reported before every handle finished, and it "
        "adds regression tests for the sibling handle case."
    )
    found = problems(text, title="Fix the NIXL race")
    assert any(p.startswith("language") for p in found)
    assert chinese_share(text) < 0.1 < chinese_share(good_paragraph(NUMBER))


def test_length_bounds() -> None:
    assert "length:11,100–650" in problems("值得精读。内容太短了。")


def test_title_checks() -> None:
    pr, dossier, _ = analyzed(NUMBER)
    grounds = Grounds(pr, dossier)
    assert verify_title("修复 NIXL 多句柄竞态", grounds, "zh") == []
    codes = {p.code for p in verify_title("NIXL race fix, 40% faster", grounds, "zh")}
    assert codes == {"language", "unknown_figure"}


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("值得精读。改动虽小……", Level.MUST_READ),
        ("值得精读，但重点不在代码量", Level.MUST_READ),
        ("值得中等优先级精读（限于 CI 方向），尤其是……", Level.WORTH_READING),
        ("值得选读。", Level.WORTH_READING),
        ("建议 5 分钟内快速浏览即可，不必精读：改动是一行正则", Level.SKIM),
        ("无需精读：只改了代码归属文件。", Level.SKIP),
        ("这段话没有判定。" * 3, None),
        (None, Level.LIST_ONLY),
    ],
)
def test_verdict_of(text: str | None, level: Level | None) -> None:
    assert verdict_of(text) is level

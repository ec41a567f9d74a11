"""Reference digests: parsing the text layout, style examples, and ``evaluate`` checked by hand.

The expected numbers below were computed by hand from tests/fixtures/eval/ (see comments).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prdigest.core.errors import InputError
from prdigest.core.models import Level
from prdigest.write.evaluate import bigram_jaccard, evaluate, format_table, load_generated, load_map
from prdigest.write.llm.style import (
    default_reference,
    load_reference,
    parse_reference,
    pick_examples,
)

EVAL = Path(__file__).parent / "fixtures" / "eval"


def test_parse_reference_layout() -> None:
    ref = load_reference(EVAL / "reference.txt")
    assert ref.repo == "example/engine"
    assert [e.level for e in ref.entries] == [
        Level.MUST_READ,
        Level.SKIM,
        Level.LIST_ONLY,
        Level.WORTH_READING,
    ]
    assert ref.entries[2].paragraph is None and ref.entries[2].title == "更新 CODEOWNERS"


def test_parse_rejects_empty_input() -> None:
    with pytest.raises(InputError):
        parse_reference("owner/name\n\n")


def test_default_style_has_examples_of_different_levels() -> None:
    examples = pick_examples(default_reference())
    assert len(examples) == 3
    assert {e.level for e in examples} == {Level.MUST_READ, Level.SKIM}
    assert len({e.title for e in examples}) == 3


def test_title_overlap_by_hand() -> None:
    # "更新 CODEOWNERS" equals itself; disjoint strings share nothing
    assert bigram_jaccard("更新 CODEOWNERS", "更新 CODEOWNERS") == 1.0
    assert bigram_jaccard("甲乙", "丙丁") == 0.0
    # 为cpu后端启用已有单测 (11 bigrams) vs cpu后端启用单测 (8): 7 shared, union 12
    assert bigram_jaccard("为 CPU 后端启用已有单测", "CPU 后端启用单测") == pytest.approx(7 / 12)


def test_evaluate_reproduces_the_hand_checked_comparison() -> None:
    ref = load_reference(EVAL / "reference.txt")
    report = evaluate(
        ref,
        load_map(EVAL / "map.json"),
        load_generated(EVAL / "generated.json"),
        participants={104: {"bob", "carol"}},
    )
    rows = {s.number: s for s in report.entries}
    # verdicts: 101 must=must ✓, 102 skim vs listed ✗, 103 listed=listed ✓, 104 worth=worth ✓
    assert [rows[n].verdict_match for n in (101, 102, 103, 104)] == [True, False, True, True]
    assert report.verdict_agreement == 0.75
    # names: ref {Scheduler.preempt, free_blocks, test_preempt_frees_once} | {cpu.yaml} | {} |
    # {merge_chunks, chunking.py, MAX_CHUNK = 512}; generated adds _release, lacks the rest
    assert [(rows[n].names_common, rows[n].names_ref, rows[n].names_gen) for n in rows] == [
        (3, 3, 4),
        (0, 1, 0),
        (0, 0, 0),
        (2, 3, 2),
    ]
    assert report.name_recall == pytest.approx(5 / 7)
    assert report.name_precision == pytest.approx(5 / 6)
    # people: @alice found; bare "bob" (a participant of 104) missed
    assert report.people_recall == 0.5
    # figures: {120, 95} → 95 found; {2} missed; {8} missed (512 was in backticks in the ref)
    assert report.figure_recall == 0.25
    # titles: 9/19, 7/12, 1, 11/16
    assert rows[101].title_overlap == pytest.approx(9 / 19)
    assert rows[104].title_overlap == pytest.approx(11 / 16)
    assert report.title_overlap == pytest.approx((9 / 19 + 7 / 12 + 1 + 11 / 16) / 4)
    assert report.unmapped == () and report.missing == ()
    summary = report.to_json()["summary"]
    assert summary["entries"] == 4 and summary["verdict_agreement"] == 0.75


def test_map_by_title_and_missing_entries(tmp_path: Path) -> None:
    mapping = tmp_path / "map.json"
    mapping.write_text(json.dumps({"更新 CODEOWNERS": 103, "为 CPU 后端启用已有单测": 999}))
    report = evaluate(
        load_reference(EVAL / "reference.txt"),
        load_map(mapping),
        load_generated(EVAL / "generated.json"),
    )
    assert len(report.unmapped) == 2 and report.missing == (999,)


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a digest"}')
    with pytest.raises(InputError, match="--format json"):
        load_generated(bad)
    with pytest.raises(InputError, match="map"):
        load_map(bad)


def test_title_chinese_share_by_hand() -> None:
    from prdigest.write.evaluate import chinese_share

    assert chinese_share("DeepEP v2 combine 异步化，解码 ITL 降 5-9%") == pytest.approx(6 / 29)
    assert chinese_share("修复块大小") == 1.0
    assert chinese_share("【修复】Fix it") == pytest.approx(2 / 9)
    assert chinese_share("") == 0.0


def test_false_claim_candidates_and_title_rules_with_the_records() -> None:
    from prdigest.write.llm.style import Reference, ReferenceEntry
    from prdigest.write.llm.verify import Grounds

    from llm_support import analyzed, good_paragraph

    pr, dossier, _ = analyzed(56104)
    claim = "实测 decode 吞吐提升约一倍。"
    generated = {
        "lang": "zh",
        "prs": [
            {
                "pr": {"number": 56104},
                "level": "must_read",
                "entry": {
                    "title": "NIXL 修复多传输句柄的竞态",
                    "paragraph": good_paragraph(56104) + claim,
                },
            }
        ],
    }
    reference = Reference(
        pr.repo, (ReferenceEntry("参考标题", "值得精读。`base_worker.py`", None),)
    )
    report = evaluate(reference, [56104], generated, None, {56104: Grounds(pr, dossier)})
    assert report.false_claims == 1 and report.entries[0].false_claims == (claim,)
    assert report.titles_ok == 1.0
    assert "false-claim candidates 1" in format_table(report) and claim in format_table(report)
    plain = evaluate(reference, [56104], generated)
    assert plain.false_claims is None and plain.entries[0].title_ok is None

"""Triage: levels with reasons, ranking and selection; PR text cannot buy a verdict."""

from __future__ import annotations

import pytest

from prdigest.analyze import analyze
from prdigest.core.models import Dossier, Level
from prdigest.core.presets import Preset
from prdigest.triage import assess, rank, select

from conftest import file_patch, make_pr

EXPECTED = {
    # two or more fixtures per level, each for the rule named in triage's docstring
    52781: Level.MUST_READ,  # perf in expert parallel, tests, review
    56104: Level.MUST_READ,  # core fix with tests
    55602: Level.MUST_READ,  # two-line fix shaped by a long review
    56941: Level.WORTH_READING,  # CI infrastructure with tests
    56992: Level.WORTH_READING,  # docs guide
    56993: Level.WORTH_READING,  # dependency bump with adaptations
    55823: Level.WORTH_READING,  # test-infrastructure fixture with monkeypatch
    56597: Level.SKIM,  # one-line regex
    56929: Level.SKIM,  # enabling existing tests on a new platform
    56903: Level.SKIP,  # CODEOWNERS
    56915: Level.SKIP,  # typo
    56991: Level.SKIP,  # version pin without code change
    56922: Level.LIST_ONLY,  # bot author
    56819: Level.LIST_ONLY,  # two-line script fix, thin description
}


@pytest.mark.parametrize(("number", "level"), sorted(EXPECTED.items()))
def test_fixture_levels(dossiers: dict[int, Dossier], number: int, level: Level) -> None:
    assessment = assess(dossiers[number])
    assert assessment.level is level, assessment.reasons


def test_reasons_add_up_to_the_score(dossiers: dict[int, Dossier]) -> None:
    for dossier in dossiers.values():
        a = assess(dossier)
        assert a.reasons[0].code == "level"
        assert a.score == pytest.approx(sum(r.weight for r in a.reasons), abs=0.05)


def test_body_cannot_talk_its_way_into_must_read(vllm_preset: Preset) -> None:
    files = [file_patch("docs/features/x.md", ["word"], ["wrod"])]
    plain = assess(analyze(make_pr(title="[Doc] Fix typo", files=files), vllm_preset))
    loud_body = (
        "## Purpose\nCRITICAL must-read fix: throughput +300%, latency -90%, fixes a race "
        "and a leak in the scheduler. Reviewers: this is the most important PR.\n" * 20
    )
    loud = assess(
        analyze(make_pr(title="[Doc] Fix typo", files=files, body=loud_body), vllm_preset)
    )
    assert plain.level is loud.level is Level.SKIP


def test_audience_only_when_focused(dossiers: dict[int, Dossier], vllm_preset: Preset) -> None:
    audience = assess(dossiers[56104]).audience
    rule = vllm_preset.area_by_id(audience or "")
    assert rule is not None and rule.text("zh").audience == "负责 KV 连接器与 PD 分离的工程师"
    for dossier in dossiers.values():
        a = assess(dossier)
        if a.audience:
            assert dossier.primary_area is not None and dossier.primary_area.share >= 0.5


def test_rank_and_select(dossiers: dict[int, Dossier]) -> None:
    assessments = [assess(d) for d in dossiers.values()]
    ranked = rank(assessments)
    assert [a.level.rank for a in ranked] == sorted(a.level.rank for a in ranked)
    chosen = select(assessments, 5)
    assert len(chosen) == 5 and all(a.level is Level.MUST_READ for a in chosen)
    everything = select(assessments, 1000)
    assert all(a.level is not Level.LIST_ONLY for a in everything)
    assert select(assessments, 0) == []

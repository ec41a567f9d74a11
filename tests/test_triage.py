"""Triage: rules where a rule is the truth, a fitted model elsewhere, selection by merit; PR text
cannot buy a verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prdigest.analyze import analyze
from prdigest.core.models import Dossier, Level
from prdigest.core.presets import Preset, load_preset
from prdigest.triage import assess, rank, select
from prdigest.triage.features import NAMES, features, lesson
from prdigest.triage.model import bundled_model

from conftest import file_patch, make_pr

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "eval" / "labels" / "vllm" / "examples.jsonl"
ASCEND = "vllm-project/vllm-ascend"


def example_labels() -> dict[int, Level]:
    lines = EXAMPLES.read_text(encoding="utf-8").splitlines()
    return {json.loads(x)["number"]: Level(json.loads(x)["level"]) for x in lines}


def test_the_example_digests_keep_their_verdicts(
    dossiers: dict[int, Dossier], vllm_preset: Preset
) -> None:
    labels = example_labels()
    assert len(labels) == 16
    agree = [
        n
        for n, level in labels.items()
        if assess(dossiers[n], bots=vllm_preset.bots).level is level
    ]
    assert len(agree) >= 14, sorted(set(labels) - set(agree))


def test_bots_in_the_preset_are_bot_churn_as_authors(vllm_preset: Preset) -> None:
    preset = load_preset(ASCEND)
    files = [file_patch("tests/e2e/config/test_times.yaml", ["t: 31"], ["t: 30"])]
    churn = analyze(
        make_pr(
            author="vllm-ascend-ci", title="[CI] Auto-update test times", files=files, repo=ASCEND
        ),
        preset,
    )
    person = analyze(
        make_pr(author="wangxiyuan", title="[CI] Auto-update test times", files=files, repo=ASCEND),
        preset,
    )
    assert assess(churn, bots=preset.bots).level is Level.SKIP
    assert assess(churn, bots=preset.bots).reasons[0].detail.startswith("authored by a bot")
    assert assess(person, bots=preset.bots).level is not Level.SKIP
    bumped = analyze(make_pr(author="dependabot[bot]", files=files), vllm_preset)
    assert assess(bumped).level is Level.SKIP  # a [bot] login needs no preset entry


def test_ownership_files_are_skip(vllm_preset: Preset) -> None:
    files = [file_patch(".github/CODEOWNERS", ["/vllm/v1/worker/gpu @alice"])]
    d = analyze(make_pr(title="[Misc] Add CODEOWNERS entries", files=files), vllm_preset)
    assert assess(d).level is Level.SKIP


def test_a_docs_change_is_listed_unless_it_documents_a_new_knob(vllm_preset: Preset) -> None:
    guide = [file_patch("docs/features/guide.md", [f"line {i}" for i in range(120)])]
    plain = analyze(make_pr(title="[Doc] Add a deployment guide", files=guide), vllm_preset)
    assert assess(plain).level is Level.LIST_ONLY
    knob = [file_patch("docs/configuration/env_vars.md", ["- `VLLM_NEW_SWITCH`: turns it on."])]
    documented = analyze(make_pr(title="[Doc] Document the switch", files=knob), vllm_preset)
    assert features(documented)["new_knob"] == 1
    assert assess(documented).level is Level.SKIM
    # A tutorial that names a variable in its recipe declares nothing new.
    recipe = [file_patch("docs/tutorials/model.md", ["export VLLM_NEW_SWITCH=1"])]
    tutorial = analyze(make_pr(title="[Doc] Add a tutorial", files=recipe), vllm_preset)
    assert features(tutorial)["new_knob"] == 0
    assert assess(tutorial).level is Level.LIST_ONLY


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
    assert plain.level is loud.level is Level.LIST_ONLY


def test_a_fix_tag_is_corroborated_by_the_diff(vllm_preset: Preset) -> None:
    logging = [file_patch("vllm/v1/worker/gpu_worker.py", ['    logger.info("profile: %s", mem)'])]
    d = analyze(make_pr(title="[BugFix] Add profile memory logger", files=logging), vllm_preset)
    assert d.kind.value == "chore" and "only adds logging" in d.kind_evidence
    ci = [file_patch(".buildkite/test-pipeline.yaml", ["  - retry: 2"])]
    c = analyze(make_pr(title="[BugFix][CI] Fix flaky CI", files=ci), vllm_preset)
    assert c.kind.value == "ci" and "no source file changed" in c.kind_evidence
    assert assess(d).level is not Level.MUST_READ and assess(c).level is not Level.MUST_READ


def test_a_ci_or_test_tag_over_runtime_source_takes_the_code_kind_the_title_states(
    vllm_preset: Preset,
) -> None:
    runtime = [
        file_patch("vllm/model_executor/layers/fused_moe/layer.py", ["w = w.contiguous()"], ["w"]),
        file_patch("tests/kernels/test_moe.py", ["assert w.is_contiguous()"]),
    ]
    fixed = analyze(make_pr(title="[CI] fix nightly test", files=runtime), vllm_preset)
    assert fixed.kind.value == "fix" and "runtime source changed" in fixed.kind_evidence
    tagged = analyze(
        make_pr(title="[CI][BugFix] Fix logprobs signature", files=runtime), vllm_preset
    )
    assert tagged.kind.value == "fix" and "[BugFix]" in tagged.kind_evidence
    # runtime source is a small part of the change: the CI tag stands
    moved = [file_patch(f"tests/unit/test_{i}.py", ["x = 1"] * 40) for i in range(3)]
    mostly_tests = analyze(
        make_pr(title="[CI] Refactor test folder", files=[*moved, runtime[0]]), vllm_preset
    )
    assert mostly_tests.kind.value == "ci"
    # no code kind in the title: the tag stands too
    plain = analyze(make_pr(title="[CI] enable dsv4 test", files=runtime), vllm_preset)
    assert plain.kind.value == "ci"


def test_the_primary_area_ignores_tests(vllm_preset: Preset) -> None:
    code = file_patch(
        "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py", ["x = 1"] * 3
    )
    test = file_patch("tests/v1/kv_connector/unit/test_nixl.py", ["assert x"] * 60)
    d = analyze(make_pr(title="[Bugfix] Fix a race", files=[code, test]), vllm_preset)
    assert d.primary_area is not None and d.primary_area.id != "tests"
    only_tests = analyze(make_pr(title="[Test] More tests", files=[test]), vllm_preset)
    assert only_tests.primary_area is not None


def test_removing_dead_code_is_not_a_reading_event(vllm_preset: Preset) -> None:
    gone = [
        file_patch(
            "vllm/model_executor/layers/fused_moe/old_kernel.py",
            [],
            [f"    step_{i}()" for i in range(450)],
        )
    ]
    d = analyze(make_pr(title="[Refactor] Remove obsolete kernel patch", files=gone), vllm_preset)
    assert features(d)["removal"] == 1 and features(d)["title_remove"] == 1
    assert assess(d).level in (Level.LIST_ONLY, Level.SKIM)


def test_withdrawn_tests_or_docs_are_named_not_buried() -> None:
    # a PR that takes whole test and docs files away, with no source change, withdraws
    # coverage or a documented feature; a test merged into another file does not
    preset = load_preset(ASCEND)

    def gone(path: str, n: int) -> dict[str, object]:
        return file_patch(path, [], [f"    check_{i}()" for i in range(n)], status="removed")

    withdrawn = [
        gone("tests/e2e/nightly/test_prefix_caching_cp.py", 400),
        gone("docs/source/tutorials/long_sequence_context_parallel.md", 300),
        file_patch("tests/e2e/nightly/config.yaml", [], ["  - name: pcp"] * 20),
    ]
    body = (
        "### What this PR does / why we need it?\n"
        "The upstream PCP code has been merged, so the PCP use cases and their documents are "
        "taken offline until the refactor lands.\n"
        "### How was this patch tested?\nCI passed."
    )
    pr = make_pr(title="[CI] Take the PCP cases offline", body=body, files=withdrawn, repo=ASCEND)
    d = analyze(pr, preset)
    assert features(d)["withdrawal"] == 1
    assert assess(d).level is Level.SKIM
    weights = {r.code: r.weight for r in assess(d).reasons[1:]}
    assert weights["withdrawal"] > 0
    merged = [
        gone("tests/e2e/singlecard/test_batch_invariant_graph.py", 640),
        file_patch("tests/e2e/singlecard/test_batch_invariant.py", ["    run_graph()"] * 17),
    ]
    m = analyze(make_pr(title="[Test] Merge two test cases", files=merged, repo=ASCEND), preset)
    assert features(m)["withdrawal"] == 0
    assert assess(m).level is Level.LIST_ONLY


def test_a_reported_issue_the_pr_closes_counts_a_mention_does_not() -> None:
    # "Fixes #N" (or a linked closing issue) says someone hit the problem; "See #N" only
    # points at related work
    preset = load_preset(ASCEND)
    files = [
        file_patch(
            "vllm_ascend/worker/model_runner_v1.py",
            ["        if finished:", "            torch.npu.current_stream().synchronize()"],
        )
    ]

    def dossier(body: str, **fields: object) -> Dossier:
        pr = make_pr(title="[BugFix] Repair decode", body=body, files=files, repo=ASCEND, **fields)
        return analyze(pr, preset)

    closing = dossier("### What this PR does / why we need it?\nGarbled output.\nFixes #9730\n")
    mention = dossier("### What this PR does / why we need it?\nGarbled output.\nSee #9730\n")
    linked = dossier(
        "Garbled output.", linked_issues=[{"number": 9730, "title": "bug", "state": "CLOSED"}]
    )
    assert features(closing)["closes_issue"] == 1
    assert features(linked)["closes_issue"] == 1
    assert features(mention)["closes_issue"] == 0
    model = bundled_model()
    assert all(b.weights.get("closes_issue", 0) > 0 for b in model.boundaries)
    assert assess(closing).score > assess(mention).score


def test_must_read_needs_a_lesson_not_volume(vllm_preset: Preset) -> None:
    added = [f"    value_{i} = compute_{i}(x)" for i in range(900)]
    big = [file_patch("vllm/v1/worker/gpu_model_runner.py", added)]
    d = analyze(make_pr(title="[Feature] Add many values", files=big), vllm_preset)
    assert not lesson(d)
    assert assess(d).level is not Level.MUST_READ


def test_every_contribution_is_a_reason(dossiers: dict[int, Dossier]) -> None:
    model = bundled_model()
    for dossier in dossiers.values():
        a = assess(dossier)
        assert a.reasons[0].code == "level"
        if a.reasons[0].detail.startswith("model:"):
            known = set(model.features) | {"review_shaped", "commits_after_review"}
            assert {r.code for r in a.reasons[1:]} <= known
            assert all(r.weight != 0 for r in a.reasons[1:])
            magnitudes = [abs(r.weight) for r in a.reasons[1:]]
            assert magnitudes == sorted(magnitudes, reverse=True)
        assert 0.0 <= a.score <= 3.0


def test_the_model_knows_every_feature_it_weighs() -> None:
    model = bundled_model()
    assert set(model.features) <= set(NAMES)
    for boundary in model.boundaries:
        assert set(boundary.weights) <= set(model.features)
    assert model.info.get("cv", {}).get("count", 0) >= 350  # fitted on the development set


def test_audience_only_when_focused(dossiers: dict[int, Dossier], vllm_preset: Preset) -> None:
    audience = assess(dossiers[56104]).audience
    rule = vllm_preset.area_by_id(audience or "")
    assert rule is not None and rule.text("zh").audience == "负责 KV 连接器与 PD 分离的工程师"
    for dossier in dossiers.values():
        a = assess(dossier)
        if a.audience:
            assert dossier.primary_area is not None and dossier.primary_area.share >= 0.5


def test_selection_is_by_merit_and_top_is_a_cap(dossiers: dict[int, Dossier]) -> None:
    assessments = [assess(d) for d in dossiers.values()]
    ranked = rank(assessments)
    assert [a.level.rank for a in ranked] == sorted(a.level.rank for a in ranked)
    everything = select(assessments, 1000)
    assert everything and len(everything) < len(assessments)  # not a quota
    assert all(a.level in (Level.MUST_READ, Level.WORTH_READING, Level.SKIM) for a in everything)
    assert all(
        a.level is not Level.SKIM or a.score >= bundled_model().pick_floor for a in everything
    )
    must = [a for a in assessments if a.level is Level.MUST_READ]
    assert set(a.number for a in must) <= {a.number for a in everything}
    assert select(assessments, 3) == everything[:3]
    assert select(assessments, 0) == []
    quiet = [a for a in assessments if a.level in (Level.LIST_ONLY, Level.SKIP)]
    assert select(quiet, 8) == []  # a day with nothing to say gets no paragraph


@pytest.mark.parametrize("number", [56922, 56903])
def test_rules_come_before_the_model(
    dossiers: dict[int, Dossier], vllm_preset: Preset, number: int
) -> None:
    a = assess(dossiers[number], bots=vllm_preset.bots)
    assert a.level is Level.SKIP and a.score == 0.0 and len(a.reasons) == 1

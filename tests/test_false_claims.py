"""The false-claim suite: for each kind of false sentence seen on real days, a fixture PR
written by the project (``tests/fixtures/falseclaims``) whose entry must not say the false thing
and must say the true one."""

from __future__ import annotations

import re

import pytest

from falseclaim_support import Case, all_cases
from prdigest.analyze import analyze
from prdigest.core.models import Assessment, Level, SignalKind
from prdigest.core.presets import load_preset
from prdigest.write.template import TemplateWriter

CASES = all_cases()


def _entry(case: Case, lang: str) -> str:
    preset = load_preset(case.record.repo)
    dossier = analyze(case.record, preset)
    assessment = Assessment(
        repo=dossier.repo,
        number=dossier.number,
        level=Level(case.level),
        score=1.0,
        reasons=(),
        audience=None,
        area=None,
    )
    entry = TemplateWriter().write(dossier, assessment, lang=lang, paragraph=True)
    return f"{entry.title}\n{entry.paragraph or ''}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_entry_says_the_true_thing_and_not_the_false_one(case: Case) -> None:
    text = _entry(case, "zh")
    for pattern in case.must:
        assert re.search(pattern, text), (case.name, pattern, text)
    for pattern in case.must_not:
        assert not re.search(pattern, text), (case.name, pattern, text)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.must_en or c.must_not_en], ids=lambda c: c.name
)
def test_english_entry_too(case: Case) -> None:
    text = _entry(case, "en")
    for pattern in case.must_en:
        assert re.search(pattern, text), (case.name, pattern, text)
    for pattern in case.must_not_en:
        assert not re.search(pattern, text), (case.name, pattern, text)


def test_every_case_file_loads_and_differs() -> None:
    assert len(CASES) >= 10
    assert len({c.record.number for c in CASES}) == len(CASES)
    for case in CASES:
        assert case.record.files and (case.must or case.must_not), case.name


def _signals(name: str) -> dict[SignalKind, list[str]]:
    case = next(c for c in CASES if c.name == name)
    dossier = analyze(case.record, load_preset(case.record.repo))
    found: dict[SignalKind, list[str]] = {}
    for s in dossier.signals:
        found.setdefault(s.kind, []).append(s.detail)
    return found


@pytest.mark.parametrize(
    "name",
    [
        "renamed_test",
        "moved_test_file",
        "package_init_removed",
        "rewritten_test",
        "tests_gone_with_module",
    ],
)
def test_replaced_tests_are_no_caveat_for_any_writer(name: str) -> None:
    """The LLM writer is given signals as caveats: a replaced test must not be one."""
    assert SignalKind.TESTS_DELETED not in _signals(name)


def test_a_test_removed_for_good_is_a_caveat() -> None:
    assert _signals("deleted_test_control")[SignalKind.TESTS_DELETED] == [
        "test_eplb_warmup_runs_once"
    ]


def test_only_the_tunable_is_a_magic_threshold() -> None:
    assert _signals("model_constant_not_threshold")[SignalKind.MAGIC_NUMBER] == [
        "if waited_ms > 500:"
    ]


def test_pure_renames_leave_the_diff_complete() -> None:
    case = next(c for c in CASES if c.name == "pure_renames_without_patch")
    dossier = analyze(case.record, load_preset(case.record.repo))
    assert dossier.coverage.diff.value == "full" and not dossier.coverage.note


def test_moved_class_is_said_where_it_arrives() -> None:
    case = next(c for c in CASES if c.name == "moved_class")
    dossier = analyze(case.record, load_preset(case.record.repo))
    by_change = {(s.name, s.change): s for s in dossier.symbols}
    assert by_change[("KVCacheSpecAdapter", "added")].moved_from == (
        "vllm_ascend/worker/model_runner_v1.py"
    )
    assert by_change[("KVCacheSpecAdapter", "removed")].moved_to == "vllm_ascend/worker/kv_spec.py"

"""The fitted model's arithmetic, the facts it weighs, its evaluation and the preset draft."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from git_helpers import DEPENDABOT, ScriptedRepo
from prdigest.analyze import analyze
from prdigest.analyze.body import extract_rationale, extract_sections
from prdigest.cli import cli
from prdigest.core.errors import ConfigError
from prdigest.core.models import Dossier, Level
from prdigest.core.presets import Preset, load_preset, parse_preset
from prdigest.pipeline.evaluate import cross_validate
from prdigest.sources.base import sync
from prdigest.sources.jsonl import JsonlSource
from prdigest.store import open_store
from prdigest.triage import assess, fit
from prdigest.triage.evaluate import Judged, report
from prdigest.triage.features import NAMES, features
from prdigest.triage.labels import Label, load_labels
from prdigest.triage.model import (
    ORDER,
    Boundary,
    TriageModel,
    bundled_model,
    decide,
    expected,
    load_model,
    parse_model,
)

from cli_support import run
from conftest import file_patch, make_pr

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "eval" / "labels" / "vllm" / "examples.jsonl"
SAMPLE = ROOT / "src" / "prdigest" / "samples" / "vllm-sample.jsonl"


def toy_model(threshold: float = 0.5) -> TriageModel:
    boundaries = (
        Boundary(Level.LIST_ONLY, 0.0, {"x": 2.0}),
        Boundary(Level.SKIM, -1.0, {"x": 2.0}),
        Boundary(Level.WORTH_READING, -2.0, {"x": 2.0}),
    )
    return TriageModel("toy/1", ("x",), boundaries, threshold, 1.0, {})


def test_level_chances_form_a_distribution_and_follow_the_weights() -> None:
    model = toy_model()
    low, high = model.probabilities({"x": -2.0}), model.probabilities({"x": 3.0})
    for chances in (low, high):
        assert sum(chances.values()) == pytest.approx(1.0)
        assert all(p >= 0 for p in chances.values())
    assert max(low, key=low.__getitem__) is Level.LIST_ONLY
    assert max(high, key=high.__getitem__) is Level.MUST_READ
    assert expected(high) > expected(low)
    # at x = 0: P(>list_only) = σ(0) = 0.5, P(>skim) = σ(-1), P(>worth) = σ(-2)
    zero = model.probabilities({"x": 0.0})
    assert zero[Level.LIST_ONLY] == pytest.approx(0.5)
    assert zero[Level.MUST_READ] == pytest.approx(1 / (1 + 2.718281828**2), rel=1e-6)


def test_crossing_boundaries_never_give_a_negative_chance() -> None:
    crossed = (
        Boundary(Level.LIST_ONLY, -3.0, {}),
        Boundary(Level.SKIM, 2.0, {}),  # would say P(>skim) > P(>list_only)
        Boundary(Level.WORTH_READING, -5.0, {}),
    )
    chances = TriageModel("toy/1", (), crossed, 0.5, 1.0, {}).probabilities({})
    assert min(chances.values()) >= 0 and sum(chances.values()) == pytest.approx(1.0)


def test_must_read_needs_the_threshold_and_a_lesson() -> None:
    chances = {
        Level.LIST_ONLY: 0.1,
        Level.SKIM: 0.2,
        Level.WORTH_READING: 0.4,
        Level.MUST_READ: 0.3,
    }
    assert decide(chances, lesson=True, threshold=0.25) is Level.MUST_READ
    assert decide(chances, lesson=True, threshold=0.35) is Level.WORTH_READING
    assert decide(chances, lesson=False, threshold=0.25) is Level.WORTH_READING
    sure = {Level.LIST_ONLY: 0.0, Level.SKIM: 0.0, Level.WORTH_READING: 0.1, Level.MUST_READ: 0.9}
    assert decide(sure, lesson=False, threshold=0.5) is Level.WORTH_READING


def test_a_model_file_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    good = json.loads((ROOT / "src/prdigest/triage/model.json").read_text(encoding="utf-8"))
    bad = dict(good, boundaries=good["boundaries"][:2])
    with pytest.raises(ConfigError, match="boundar"):
        parse_model(bad, origin="x.json")
    unknown = json.loads(json.dumps(good))
    unknown["boundaries"][0]["weights"]["no_such_feature"] = 1.0
    with pytest.raises(ConfigError, match="no_such_feature"):
        parse_model(unknown, origin="x.json")
    path = tmp_path / "model.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=str(path)):
        load_model(path)


def test_the_shipped_model_weighs_known_features_and_carries_its_figures() -> None:
    model = bundled_model()
    assert set(model.features) <= set(NAMES)
    assert [b.above for b in model.boundaries] == list(ORDER[:-1])
    cv = model.info["cv"]
    assert cv["count"] >= 350 and 0 < cv["exact"] <= 1 and cv["complete_days"] >= 20


def test_the_runtime_imports_no_fitting_library() -> None:
    code = (
        "import sys; import prdigest.triage as t; from prdigest.triage.model import bundled_model;"
        "bundled_model(); print(any(m.split('.')[0] in ('sklearn', 'numpy', 'scipy') "
        "for m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_design_facts_name_the_mechanism_and_where_it_is(vllm_preset: Preset) -> None:
    source = file_patch(
        "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py",
        [
            "class LookupState(enum.Enum):",
            "    PENDING = 1",
            "        with self._agents_lock:",
            '            raise NotImplementedError("hybrid groups are not supported")',
        ],
    )
    test = file_patch(
        "tests/v1/kv_connector/test_lookup.py",
        ["def test_order():", "    started = threading.Event()", "    assert started.wait(5)"],
        status="added",
    )
    d = analyze(make_pr(title="[Bugfix] Guard agents", files=[source, test]), vllm_preset)
    found = {(x.pattern, x.in_test) for x in d.design}
    assert {("state_enum", False), ("lock", False), ("fail_closed", False)} <= found
    assert ("event", True) in found
    lock = next(x for x in d.design if x.pattern == "lock")
    assert lock.path.endswith("base_worker.py") and lock.line == 3
    values = features(d)
    assert values["ordered_tests"] == 1 and values["fail_closed"] == 1


def test_a_removed_host_sync_is_seen_on_the_deleted_side(vllm_preset: Preset) -> None:
    patch = file_patch(
        "vllm/v1/worker/gpu_model_runner.py",
        ["    n = seq_lens_cpu[:num_reqs]"],
        ["    n = seq_lens[:num_reqs].cpu().tolist()"],
    )
    d = analyze(make_pr(title="[Perf] Avoid a sync", files=[patch]), vllm_preset)
    assert [x.pattern for x in d.design] == ["host_sync_removed"]


def test_rationale_sentences_keep_their_kind_and_words() -> None:
    body = (
        "### What this PR does / why we need it?\n"
        "The root cause is that `condense()` rewrites the CPU block table while the previous "
        "graph replay is still in flight.\n"
        "Long decodes then produce garbled output.\n"
        "We need this to run Qwen3.5 on 310P.\n"
        "### How was this patch tested?\nCI passed.\n"
    )
    kinds = {r.kind: r.text for r in extract_rationale(body)}
    assert set(kinds) == {"root_cause", "symptom", "motivation"}
    assert "`condense()`" in kinds["root_cause"]


def test_a_pasted_list_of_review_remarks_is_not_the_prs_rationale() -> None:
    body = (
        "### What this PR does / why we need it?\n"
        "This PR fixes the draft verification when pipeline parallel is on.\n\n"
        "Feedback on the changes:\n"
        "- In `chunk.py`, slicing `spec_token_ids` in-place can lead to duplicate\n"
        "scheduling; slicing a copy is recommended.\n\n"
        "- Reading `req_id_to_index[req_id]` may raise a `KeyError`.\n\n"
        "The root cause is that the last stage drops the draft tokens.\n"
        "### How was this patch tested?\nCI passed.\n"
    )
    texts = [r.text for r in extract_rationale(body)]
    assert not any("spec_token_ids" in t or "KeyError" in t for t in texts)
    advice = body.replace(
        "The root cause",
        "The call passes its arguments by position, which causes errors. "
        "We recommend keyword arguments.\n\nThe root cause",
    )
    texts = [r.text for r in extract_rationale(advice)]
    assert not any("by position" in t for t in texts) and any("last stage" in t for t in texts)
    assert any("root cause is that the last stage" in t for t in texts)


def test_the_vllm_ascend_template_headings_are_sections() -> None:
    body = (
        "### What this PR does / why we need it?\nFix the mask.\n"
        "### Does this PR introduce _any_ user-facing change?\nNo.\n"
        "### How was this patch tested?\nbefore 4360us, after 3949us\n"
    )
    names = {s.name: s.text for s in extract_sections(body)}
    assert names["user_facing"] == "No."
    assert "3949us" in names["test_plan"]
    assert "purpose" in names


def test_a_title_word_cannot_lift_a_verdict(dossiers: dict[int, Dossier]) -> None:
    """Rewording a title as a critical fix moves nothing unless the diff shows a fix."""
    added_only = [
        file_patch(f"vllm/entrypoints/openai/new_{i}.py", [f"x{j} = {j}" for j in range(40)], [])
        | {"status": "added"}
        for i in range(2)
    ]
    plain = make_pr(title="[Frontend] Add a helper module", files=added_only)
    loud = make_pr(title="[BugFix] CRITICAL fix for a crash and data corruption", files=added_only)
    preset = load_preset("vllm-project/vllm")
    quiet, shouted = analyze(plain, preset), analyze(loud, preset)
    assert shouted.kind is quiet.kind
    assert "only adds code" in shouted.kind_evidence
    assert assess(shouted).level is assess(quiet).level
    assert assess(shouted).score == pytest.approx(assess(quiet).score, abs=0.2)


def test_a_fix_that_only_adds_lines_to_existing_code_is_a_fix() -> None:
    """A reset or a guard adds lines to an existing file: the diff corroborates the fix."""
    from prdigest.core.models import Kind

    reset = make_pr(
        title="[BugFix][Worker] Reset slot_mapping to pad id for dummy graph capture",
        files=[
            file_patch(
                "vllm_ascend/worker/model_runner_v1.py",
                ["            if not is_graph_capturing:", "                table.fill_(-1)"],
            )
        ],
    )
    d = analyze(reset, load_preset("vllm-project/vllm-ascend"))
    assert d.kind is Kind.FIX, d.kind_evidence


def test_report_counts_levels_picks_and_the_reading_scale() -> None:
    def judged(number: int, label: Level, level: Level, pick: int | None, picked: bool) -> Judged:
        return Judged(Label("o/r", number, "2026-06-01", label, "why", pick), level, 0.0, picked)

    result = report(
        [
            judged(1, Level.MUST_READ, Level.MUST_READ, 1, True),
            judged(2, Level.MUST_READ, Level.WORTH_READING, 2, True),
            judged(3, Level.SKIP, Level.LIST_ONLY, None, False),  # both "no read": within one
            judged(4, Level.SKIM, Level.MUST_READ, None, True),  # two levels off
        ],
        complete_days={"2026-06-01"},
    )
    assert result.count == 4 and result.exact == 0.25
    assert result.within_one == 0.75
    assert result.must_recall == 0.5 and result.must_precision == 0.5
    assert result.pick_precision == pytest.approx(2 / 3) and result.pick_recall == 1.0
    assert result.confusion[(Level.SKIM, Level.MUST_READ)] == 1


@pytest.fixture
def sample_db(tmp_path: Path) -> Path:
    db = tmp_path / "store.db"
    with open_store(db) as store:
        sync(JsonlSource(SAMPLE), store.records, None)
    return db


def test_eval_triage_reports_what_assess_gives(
    sample_db: Path, dossiers: dict[int, Dossier], vllm_preset: Preset
) -> None:
    labels = {x.number: x.level for x in load_labels([EXAMPLES])}
    agree = sum(assess(dossiers[n], bots=vllm_preset.bots).level is lv for n, lv in labels.items())
    args = ["eval", "triage", "--labels", str(EXAMPLES), "--db", str(sample_db)]
    done = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["count"] == 16 and data["exact"] == pytest.approx(agree / 16)
    assert sum(data["confusion"].values()) == 16
    table = CliRunner().invoke(cli, args)
    assert table.exit_code == 0 and "must-read recall" in table.output
    assert "label / triage" in table.output


def test_eval_triage_names_labels_it_cannot_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.db"
    with open_store(empty):
        pass
    code, _, err = run(capsys, "eval", "triage", "--labels", str(EXAMPLES), "--db", str(empty))
    assert code != 0
    assert "not in the store" in err and "vllm-project/vllm#" in err
    assert len(err.strip().splitlines()) == 1


def _synthetic_day(day: str, base: int) -> tuple[list[dict[str, object]], list[Label]]:
    """A must-read fix with a stated cause and a regression test, a docs page, a small chore."""
    records = []
    labels = []
    when = f"{day}T04:00:00Z"
    fix_body = (
        "## Purpose\nThe root cause is that the scheduler frees blocks twice, which causes a "
        "crash under preemption.\n"
    )
    shapes = [
        (
            "[Bugfix] Fix double free of KV blocks",
            fix_body,
            [
                file_patch(
                    "vllm/v1/core/sched/scheduler.py",
                    [f"        self._free(b{i})" for i in range(30)],
                    [f"        free(b{i})" for i in range(20)],
                ),
                file_patch("tests/v1/core/test_free.py", ["def test_free_once():", "    pass"]),
            ],
            Level.MUST_READ,
        ),
        (
            "[Doc] Update a tutorial",
            "",
            [file_patch("docs/usage/tutorial.md", [f"line {i}" for i in range(30)])],
            Level.LIST_ONLY,
        ),
        (
            "[Misc] Tidy an import",
            "",
            [file_patch("vllm/utils/misc.py", ["import os"], ["import os, sys"])],
            Level.SKIM,
        ),
    ]
    for offset, (title, body, files, level) in enumerate(shapes):
        number = base + offset
        pr = make_pr(number, title=title, body=body, files=files, merged_at=when)
        records.append(pr.model_dump(mode="json", exclude_none=True))
        labels.append(Label(pr.repo, number, day, level, "synthetic", None))
    return records, labels


def test_the_must_read_boundary_is_regularised_harder_than_the_lower_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a few dozen must-reads carry the top boundary; the lower ones have hundreds of labels
    # on either side and are given room for weights of their own
    pytest.importorskip("sklearn")
    numpy, logistic, scaler = fit._sklearn()
    strengths: list[float] = []

    def recording(**kwargs: float) -> object:
        strengths.append(kwargs["C"])
        return logistic(**kwargs)

    monkeypatch.setattr(fit, "_sklearn", lambda: (numpy, recording, scaler))
    samples = [
        fit.Sample(
            Label("vllm-project/vllm-ascend", n, "2026-05-01", level, "synthetic", None),
            {"x": float(n)},
            True,
        )
        for n, level in enumerate(ORDER * 3)
    ]
    fit.fit_boundaries(samples, ["x"], c=0.02)
    assert strengths == pytest.approx([0.05, 0.05, 0.02])


@pytest.mark.slow
def test_cross_validation_holds_out_whole_days(tmp_path: Path) -> None:
    records: list[dict[str, object]] = []
    labels: list[Label] = []
    for i in range(12):
        day_records, day_labels = _synthetic_day(f"2026-05-{i + 1:02d}", 1000 + 10 * i)
        records += day_records
        labels += day_labels
    path = tmp_path / "synthetic.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    with open_store(tmp_path / "s.db") as store:
        sync(JsonlSource(path), store.records, None)
        result = cross_validate(store, labels, names=NAMES, c=1.0)
    assert result.count == 36
    # three separable shapes: a model that never saw a day still levels it
    assert result.exact == 1.0 and result.must_recall == 1.0


def test_preset_draft_reads_the_tree_owners_and_bots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = ScriptedRepo(tmp_path / "clone")
    for name in ("engine", "kernels"):
        for i in range(4):
            repo.write(f"pkg/{name}/m{i}.py", "x = 1\n")
    repo.write("pkg/tiny/only.py", "x = 1\n")
    repo.write("tests/test_a.py", "def test(): pass\n")
    repo.write("docs/index.md", "# docs\n")
    repo.write(".github/CODEOWNERS", "/pkg/engine/ @engine-team\n")
    repo.commit("Initial layout", "2026-06-01T00:00:00+00:00")
    repo.write("requirements.txt", "torch==2.9\n")
    repo.commit("Bump torch", "2026-06-02T00:00:00+00:00", author=DEPENDABOT)
    out = tmp_path / "preset.toml"
    done = CliRunner().invoke(
        cli,
        ["preset", "draft", "--git", str(repo.path), "--repo", "acme/widget", "--out", str(out)],
    )
    assert done.exit_code == 0, done.output
    text = out.read_text(encoding="utf-8")
    preset = parse_preset(text, origin=str(out))
    ids = {a.id for a in preset.area}
    assert {"engine", "kernels", "tests", "docs"} <= ids and "tiny" not in ids
    assert "@engine-team" in text
    assert "dependabot" in preset.bots
    assert not any(a.core for a in preset.area)  # core is the reader's call
    code, _, err = run(capsys, "preset", "draft", "--git", str(repo.path), "--repo", "../etc")
    assert code != 0 and "owner/name" in err


def test_a_review_bots_list_of_issues_pasted_in_the_body_is_no_rationale() -> None:
    body = (
        "### What this PR does / why we need it?\n"
        "This PR updates the slot mapping assignment in `dsa_v1.py` to be in-place.\n\n"
        "However, several critical issues were identified:\n"
        "- In-place assignment of slot mapping will cause a shape mismatch `RuntimeError` on A5\n"
        "devices because `self.slot_mapping` is pre-allocated as a 2D tensor.\n\n"
        "### How was this patch tested?\nCI passed.\n"
    )
    texts = [r.text for r in extract_rationale(body)]
    assert not any("shape mismatch" in t for t in texts)
    plain = body.replace("However, several critical issues were identified:\n- ", "")
    assert any("shape mismatch" in r.text for r in extract_rationale(plain))

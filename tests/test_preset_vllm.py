"""The bundled vllm-project/vllm preset maps real vLLM paths and title tags sensibly."""

from __future__ import annotations

import re

import pytest

from prdigest.core.models import Kind, Role
from prdigest.core.presets import load_preset

PRESET = load_preset("vllm-project/vllm")
CJK = re.compile(r"[\u4e00-\u9fff]")

# (path, expected role, an area id expected among areas_of(path))
CASES = [
    ("vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py", Role.SOURCE, "kv_connector"),
    ("vllm/v1/core/sched/scheduler.py", Role.SOURCE, "scheduler_kv_cache"),
    ("vllm/v1/core/kv_cache_manager.py", Role.SOURCE, "scheduler_kv_cache"),
    ("csrc/moe/topk.cu", Role.SOURCE, "kernels"),
    ("csrc/moe/topk.cu", Role.SOURCE, "moe"),
    ("csrc/cpu/cpu_attn.cpp", Role.SOURCE, "cpu"),
    (".buildkite/test-pipeline.yaml", Role.CI, "ci"),
    (".buildkite/lm-eval-harness/test_lm_eval_correctness.py", Role.CI, "ci"),
    ("tests/v1/core/test_scheduler.py", Role.TEST, "scheduler_kv_cache"),
    ("tests/v1/kv_connector/nixl_integration/config.yaml", Role.TEST, "kv_connector"),
    ("vllm/model_executor/layers/fused_moe/layer.py", Role.SOURCE, "moe"),
    (
        "vllm/model_executor/layers/fused_moe/prepare_finalize/deepep_ll.py",
        Role.SOURCE,
        "expert_parallel",
    ),
    ("vllm/v1/worker/gpu/model_runner.py", Role.SOURCE, "model_runner_v2"),
    ("vllm/v1/spec_decode/eagle.py", Role.SOURCE, "spec_decode"),
    ("vllm/compilation/backends.py", Role.SOURCE, "compilation"),
    ("vllm/platforms/rocm.py", Role.SOURCE, "rocm"),
    ("vllm/v1/attention/backends/rocm_aiter_fa.py", Role.SOURCE, "attention"),
    ("vllm/entrypoints/openai/api_server.py", Role.SOURCE, "entrypoints"),
    ("rust/src/chat-renderer/src/harmony/mod.rs", Role.SOURCE, "rust_frontend"),
    ("docs/features/spec_decode.md", Role.DOCS, "spec_decode"),
    ("requirements/cuda.txt", Role.DEPS, "deps"),
    ("docker/Dockerfile.rocm", Role.BUILD, "rocm"),
]


@pytest.mark.parametrize(("path", "role", "area"), CASES)
def test_real_paths_get_role_and_area(path: str, role: Role, area: str) -> None:
    assert PRESET.role_of(path)[0] is role
    assert area in [a.id for a in PRESET.areas_of(path)]


def test_tuned_moe_configs_are_generated_config() -> None:
    path = "vllm/model_executor/layers/fused_moe/configs/E=128,N=192,device_name=NVIDIA_H200.json"
    assert PRESET.role_of(path) == (Role.CONFIG, True)


def test_output_files_are_not_tpu() -> None:
    for path in (
        "vllm/outputs.py",
        "vllm/v1/outputs.py",
        "tests/v1/engine/test_output_processor.py",
    ):
        assert "tpu" not in [a.id for a in PRESET.areas_of(path)]


def test_required_area_names() -> None:
    names = {a.id: a.text("zh").name for a in PRESET.area}
    assert names["kv_connector"] == "KV 连接器与 PD 分离"
    assert names["scheduler_kv_cache"] == "调度与 KV cache 管理"
    assert names["kernels"] == "算子"
    assert names["ci"] == "CI"


def test_every_area_is_described_in_chinese() -> None:
    ids = [a.id for a in PRESET.area]
    assert len(ids) == len(set(ids))
    for area in PRESET.area:
        zh, en = area.name.get("zh", ""), area.name.get("en", "")
        assert zh.strip() and area.audience.get("zh", "").strip(), area.id
        assert CJK.search(area.audience["zh"]), area.id
        assert en and area.audience["en"].startswith(("engineers", "people")), area.id
        assert area.paths, area.id


def test_tag_rules_point_to_existing_areas() -> None:
    ids = {a.id for a in PRESET.area}
    for rule in PRESET.tag:
        assert rule.kind is not None or rule.area is not None, rule.match
        if rule.area is not None:
            assert rule.area in ids, rule.area


def test_common_title_tags() -> None:
    def rule(tag: str) -> tuple[Kind | None, str | None]:
        found = PRESET.tag_rule(tag)
        assert found is not None, tag
        return found.kind, found.area

    assert rule("BugFix") == (Kind.FIX, None)
    assert rule("Perf")[0] is Kind.PERF
    assert rule("New Model") == (Kind.FEATURE, "models")
    assert rule("CI/Build")[0] is Kind.CI
    assert rule("Misc")[0] is Kind.CHORE
    assert rule("Kernel") == (None, "kernels")
    assert rule("ROCm") == (None, "rocm")
    assert rule("P/D") == (None, "kv_connector")
    assert "cpu" in [a.id for a in PRESET.areas_of("vllm/platforms/cpu.py")]
    assert "cpu" in [a.id for a in PRESET.areas_for_tag("CPU")]


def test_bots() -> None:
    for login in ("coderabbitai", "gemini-code-assist", "mergify", "chatgpt-codex-connector"):
        assert PRESET.is_bot(login)
    assert PRESET.is_bot("dependabot[bot]")
    assert not PRESET.is_bot("WoosukKwon")

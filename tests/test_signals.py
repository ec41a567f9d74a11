"""Risk and follow-up signals, each from a literal change."""

from __future__ import annotations

import pytest

from prdigest.analyze import analyze
from prdigest.core.models import SignalKind
from prdigest.core.presets import Preset

from conftest import file_patch, make_pr


def signals(preset: Preset, **fields: object) -> dict[SignalKind, list[str]]:
    d = analyze(make_pr(**fields), preset)
    found: dict[SignalKind, list[str]] = {}
    for s in d.signals:
        found.setdefault(s.kind, []).append(s.detail)
    return found


@pytest.mark.parametrize(
    ("line", "kind", "detail"),
    [
        ("    # TODO(hma): handle each group", SignalKind.TODO, "TODO(hma): handle each group"),
        ("_MAX_RETRY_MS = 250", SignalKind.MAGIC_NUMBER, "_MAX_RETRY_MS"),
        ("    if n > 4096:", SignalKind.MAGIC_NUMBER, "if n > 4096:"),
        ('    x = os.getenv("VLLM_NEW_KNOB")', SignalKind.ENV_VAR, "VLLM_NEW_KNOB"),
        (
            '    parser.add_argument("--max-startup-retries", type=int)',
            SignalKind.CONFIG_FLAG,
            "--max-startup-retries",
        ),
        (
            "    k = min(self.k, len(ids[0]) - 1)",
            SignalKind.SILENT_CLAMP,
            "min(self.k, len(ids[0]) - 1)",
        ),
        ("    except Exception: pass", SignalKind.SWALLOWED_EXCEPTION, "except Exception: pass"),
    ],
)
def test_source_line_signals(vllm_preset: Preset, line: str, kind: SignalKind, detail: str) -> None:
    found = signals(vllm_preset, files=[file_patch("vllm/engine/x.py", [line])])
    assert detail in found.get(kind, [])


def test_except_then_pass_on_next_line(vllm_preset: Preset) -> None:
    found = signals(
        vllm_preset, files=[file_patch("vllm/x.py", ["    except Exception:", "        pass"])]
    )
    assert found[SignalKind.SWALLOWED_EXCEPTION] == ["except Exception:"]


def test_a_specific_exception_passed_is_an_expected_case_not_a_swallowed_error(
    vllm_preset: Preset,
) -> None:
    fallback = [
        "    try:",
        "        return bytes.fromhex(h)",
        "    except ValueError:",
        "        pass",
    ]
    cleanup = ["        except psutil.Error: pass"]
    for lines in (fallback, cleanup):
        found = signals(vllm_preset, files=[file_patch("vllm/x.py", lines)])
        assert SignalKind.SWALLOWED_EXCEPTION not in found, lines
    broad = signals(vllm_preset, files=[file_patch("vllm/x.py", ["    except: pass"])])
    assert broad[SignalKind.SWALLOWED_EXCEPTION] == ["except: pass"]


def test_a_min_bounding_a_range_walks_what_there_is_and_is_no_silent_truncation(
    vllm_preset: Preset,
) -> None:
    line = "        for i in range(min(self.prefetch_step, len(self.module_offloaders))):"
    found = signals(vllm_preset, files=[file_patch("vllm/x.py", [line])])
    assert SignalKind.SILENT_CLAMP not in found


def test_existing_constant_is_not_new(vllm_preset: Preset) -> None:
    found = signals(vllm_preset, files=[file_patch("vllm/x.py", ["LIMIT = 64"], ["LIMIT = 32"])])
    assert SignalKind.MAGIC_NUMBER not in found


def test_test_file_signals(vllm_preset: Preset) -> None:
    patch = (
        "@@ -1,5 +1,6 @@\n-def test_a():\n-    assert run() == 1\n \n"
        "+@pytest.mark.skip(reason='flaky')\n+def test_b():\n+    pass\n x = 1\n y = 2"
    )
    test_file = {"path": "tests/test_x.py", "additions": 3, "deletions": 2, "patch": patch}
    found = signals(vllm_preset, files=[test_file])
    assert found[SignalKind.SKIP_ADDED] == ["@pytest.mark.skip"]
    assert found[SignalKind.TESTS_DELETED] == ["test_a"]


def test_a_test_rewritten_in_place_under_a_new_name_is_not_deleted(vllm_preset: Preset) -> None:
    # the behaviour changed (a fallback instead of a raise) and the test with it, in one run
    rewritten = file_patch(
        "tests/test_builder.py",
        ["def test_host_args_fall_back_to_runtime_metadata():", "    assert build(None) == META"],
        ["def test_host_args_require_prefill_fallback_meta():",
         "    with pytest.raises(ValueError):", "        build(None)"],
    )  # fmt: skip
    assert SignalKind.TESTS_DELETED not in signals(vllm_preset, files=[rewritten])


def test_fix_without_tests(vllm_preset: Preset) -> None:
    found = signals(vllm_preset, files=[file_patch("vllm/x.py", ["a = 1"], ["a = 2"])])
    assert SignalKind.NO_TESTS in found
    with_test = signals(
        vllm_preset,
        files=[
            file_patch("vllm/x.py", ["a = 1"]),
            file_patch("tests/test_x.py", ["def test_a():", "    pass"]),
        ],
    )
    assert SignalKind.NO_TESTS not in with_test


def test_empty_test_result_section(vllm_preset: Preset) -> None:
    found = signals(vllm_preset, body="## Purpose\nx\n## Test Result\n<!-- paste -->\n")
    assert SignalKind.EMPTY_TEST_RESULT in found


def test_stale_body_env_var(vllm_preset: Preset) -> None:
    body = "## Purpose\nGated behind VLLM_OLD_SWITCH for now.\n\n```\nVLLM_USE_V1=1 vllm serve\n```"
    found = signals(vllm_preset, body=body, files=[file_patch("vllm/x.py", ["a = 1"])])
    assert found[SignalKind.STALE_BODY] == ["VLLM_OLD_SWITCH"]  # commands in fences are not prose
    reason = (
        "## Purpose\nThe device cannot be derived from the rank because VLLM_VISIBLE_DEVICES\n"
        "remapping can break that correspondence.\n"
    )
    cited = signals(vllm_preset, body=reason, files=[file_patch("vllm/x.py", ["a = 1"])])
    assert SignalKind.STALE_BODY not in cited  # a reason for the change, not a switch it adds


def test_unresolved_threads_and_failed_checks(vllm_preset: Preset) -> None:
    found = signals(
        vllm_preset,
        review_threads=[
            {"path": "a.py", "is_resolved": False, "comments": [{"author": "bob", "body": "hm"}]},
            {"path": "a.py", "is_outdated": True, "comments": [{"author": "bob", "body": "old"}]},
        ],
        checks=[
            {"name": "buildkite/amd-ci", "conclusion": "FAILURE"},
            {"name": "DCO", "conclusion": "SUCCESS"},
        ],
    )
    assert found[SignalKind.UNRESOLVED_THREADS] == ["h1"]
    assert found[SignalKind.FAILED_CHECKS] == ["buildkite/amd-ci"]


def test_broken_patch_is_reported_not_guessed(vllm_preset: Preset) -> None:
    broken = {"path": "vllm/x.py", "additions": 1, "deletions": 0, "patch": "@@ -1,9 +1,9 @@\n+a"}
    d = analyze(make_pr(files=[broken]), vllm_preset)
    assert [s.kind for s in d.signals if s.kind is SignalKind.BROKEN_PATCH]
    assert d.symbols == ()


def test_huge_diff(vllm_preset: Preset) -> None:
    lines = [f"v{i} = {i}" for i in range(30_000)]
    d = analyze(make_pr(files=[file_patch("vllm/big.py", lines, status="added")]), vllm_preset)
    assert any(s.kind is SignalKind.HUGE_DIFF for s in d.signals)
    assert d.files[0].additions == 30_000


def test_a_skip_gated_on_the_environment_needs_no_follow_up(vllm_preset: Preset) -> None:
    gated = [
        '@pytest.mark.skipif(not HAS_TRITON, reason="Triton is not available")',
        "@pytest.mark.skipif(not torch.npu.is_available(), reason='no NPU')",
        '@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs")',
        "def test_gated():",
        "    pass",
    ]
    found = signals(vllm_preset, files=[file_patch("tests/test_g.py", gated)])
    assert SignalKind.SKIP_ADDED not in found
    wrapped = [  # as a formatter leaves them: the condition and reason on their own lines
        "@pytest.mark.skipif(",
        "    torch.npu.device_count() < 2,",
        '    reason="the e2e test requires at least 2 NPUs.",',
        ")",
        "def test_two_cards():",
        "    pass",
        'if not vllm_version_is("0.23.0"):',
        "    pytest.skip(",
        '        "the compatibility patch only applies to vLLM 0.23.0",',
        "        allow_module_level=True,",
        "    )",
    ]
    found = signals(vllm_preset, files=[file_patch("tests/test_w.py", wrapped)])
    assert SignalKind.SKIP_ADDED not in found
    runtime = [  # skips decided while the test runs: where it can run, not a parked test
        "def test_schedule_matches_pinned_tag():",
        "    ref = pinned_tag()",
        "    if ref is None:",
        '        pytest.skip("the pinned release tag is not retrievable offline")',
        "def test_prefill_kernel(backend):",
        '    if backend != "triton":',
        '        pytest.skip("index tests only run with the triton backend")',
    ]
    found = signals(vllm_preset, files=[file_patch("tests/test_r.py", runtime)])
    assert SignalKind.SKIP_ADDED not in found
    unconditional = ["def test_overlap():", '    pytest.skip("skipped on A3")']
    broken = [
        "def test_decode(mode):",
        '    if mode == "graph":',
        '        pytest.skip("hangs in graph mode for now, re-enable after the fix")',
    ]
    for parked in (unconditional, broken):
        found = signals(vllm_preset, files=[file_patch("tests/test_p.py", parked)])
        assert found[SignalKind.SKIP_ADDED] == ["pytest.skip"], parked
    disabled = [
        '@pytest.mark.skip(reason="requires 8 cards")',  # unconditional: the test never runs
        '@pytest.mark.skipif(vllm_version_is("0.25.1"), reason="broken on 0.25.1")',
        "def test_disabled():",
        "    pass",
    ]
    found = signals(vllm_preset, files=[file_patch("tests/test_d.py", disabled)])
    assert found[SignalKind.SKIP_ADDED] == ["@pytest.mark.skip", "@pytest.mark.skipif"]


@pytest.mark.parametrize(
    ("old", "new", "detail", "value"),
    [
        (
            '        self.overlap = extra.get("multistream_overlap", False)',
            '        self.overlap = extra.get("multistream_overlap", True)',
            "multistream_overlap",
            "False → True",
        ),
        (
            '                "discard_partial_chunks", False',
            '                "discard_partial_chunks", True',
            "discard_partial_chunks",
            "False → True",
        ),
        (
            "    enable_reduce_sample: bool = True,",
            "    enable_reduce_sample: bool = False,",
            "enable_reduce_sample",
            "True → False",
        ),
        (
            '    parser.add_argument("--trial-timeout-s", type=float, default=5400.0)',
            '    parser.add_argument("--trial-timeout-s", type=float, default=7200.0)',
            "--trial-timeout-s",
            "5400.0 → 7200.0",
        ),
    ],
)
def test_a_changed_default_is_a_signal_with_both_values(
    vllm_preset: Preset, old: str, new: str, detail: str, value: str
) -> None:
    d = analyze(make_pr(files=[file_patch("vllm/config.py", [new], [old])]), vllm_preset)
    found = [s for s in d.signals if s.kind is SignalKind.DEFAULT_CHANGED]
    assert [(s.detail, s.value) for s in found] == [(detail, value)]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("    swiglu_limit: int = 0,", "    swiglu_limit: float = 0.0,"),  # the same value
        ("    sparse_mode = 3", "    sparse_mode = 0"),  # an assignment in code, no default
        ('    x = extra.get("alpha", False)', '    x = extra.get("beta", True)'),  # another option
    ],
)
def test_no_default_change_without_a_new_value_of_the_same_option(
    vllm_preset: Preset, old: str, new: str
) -> None:
    found = signals(vllm_preset, files=[file_patch("vllm/config.py", [new], [old])])
    assert SignalKind.DEFAULT_CHANGED not in found


def test_a_parameter_default_is_said_for_callers_not_deployments(vllm_preset: Preset) -> None:
    from prdigest.core.models import Assessment, Level
    from prdigest.write.template import TemplateWriter

    signature = [
        "def compute_logits(",
        "    self,",
        "    hidden_states,",
        "    enable_reduce_sample: bool = {},",
        "):",
        "    return self.head(hidden_states)",
    ]
    old = [line.format("True") for line in signature]
    new = [line.format("False") for line in signature]
    patch = "@@ -1,6 +1,6 @@\n" + "\n".join(
        [f" {x}" for x in old[:3]] + [f"-{old[3]}", f"+{new[3]}"] + [f" {x}" for x in old[4:]]
    )
    files = [{"path": "vllm/patch/eagle3.py", "status": "modified", "additions": 1,
              "deletions": 1, "patch": patch}]  # fmt: skip
    d = analyze(make_pr(files=files), vllm_preset)
    [found] = [s for s in d.signals if s.kind is SignalKind.DEFAULT_CHANGED]
    assert (found.detail, found.parameter_of) == ("enable_reduce_sample", "compute_logits")
    skim = Assessment(d.repo, d.number, Level.SKIM, 1.0, (), None, None)
    text = TemplateWriter().write(d, skim, lang="zh", paragraph=True).paragraph or ""
    assert "`compute_logits` 的参数 `enable_reduce_sample`" in text and "部署" not in text
    field = analyze(  # a config field keeps the deployment wording
        make_pr(
            files=[
                file_patch("vllm/config.py", ["    flag: bool = False"], ["    flag: bool = True"])
            ]
        ),
        vllm_preset,
    )
    [kept] = [s for s in field.signals if s.kind is SignalKind.DEFAULT_CHANGED]
    assert kept.parameter_of is None


def test_a_default_changed_in_a_test_file_is_no_signal(vllm_preset: Preset) -> None:
    old, new = '    x = extra.get("alpha", False)', '    x = extra.get("alpha", True)'
    assert SignalKind.DEFAULT_CHANGED in signals(
        vllm_preset, files=[file_patch("vllm/config.py", [new], [old])]
    )
    in_test = signals(vllm_preset, files=[file_patch("tests/test_config.py", [new], [old])])
    assert SignalKind.DEFAULT_CHANGED not in in_test


def test_a_removed_placeholder_test_loses_no_coverage(vllm_preset: Preset) -> None:
    placeholder = file_patch(
        "tests/test_device_op.py",
        ["def test_fp32_fallback():", "    assert cast(1.0) == 1.0"],
        ["def test_device_op_placeholder():", '    """To be written."""', "    pass"],
    )
    assert SignalKind.TESTS_DELETED not in signals(vllm_preset, files=[placeholder])


def test_a_benchmark_section_is_a_test_result_even_when_the_test_section_is_empty(
    vllm_preset: Preset,
) -> None:
    template = (
        "### What this PR does / why we need it?\nSpeeds up the draft window.\n"
        "### How was this patch tested?\n\n"
    )
    results = (
        "### Performance gain under different window sizes\n| window | TPOT |\n| 512 | 41.6ms |\n"
    )
    files = [file_patch("vllm/x.py", ["x = 1"])]
    assert SignalKind.EMPTY_TEST_RESULT in signals(vllm_preset, files=files, body=template)
    found = signals(vllm_preset, files=files, body=template + results)
    assert SignalKind.EMPTY_TEST_RESULT not in found
    stated = template.replace("Speeds up", "Result: accuracy 72% -> 86%; speeds up")
    assert SignalKind.EMPTY_TEST_RESULT not in signals(vllm_preset, files=files, body=stated)


def test_tests_folded_into_one_parametrized_test_or_gone_with_their_code_are_replaced(
    vllm_preset: Preset,
) -> None:
    folded = file_patch(
        "tests/test_hidden_states.py",
        ["@pytest.mark.parametrize('mode', ['eager', 'aclgraph'])",
         "def test_extract_hidden_states(mode):", "    assert run(mode)"],
        ["def test_extract_hidden_states_eager_mode():", "    assert run('eager')",
         "def test_extract_hidden_states_aclgraph_mode():", "    assert run('aclgraph')"],
    )  # fmt: skip
    assert SignalKind.TESTS_DELETED not in signals(vllm_preset, files=[folded])
    with_code = [
        file_patch("vllm/ops/conv.py", ["x = 1"], ["def pad_spec_conv1d_host_args(a):", "    return a"]),
        file_patch("tests/test_conv.py", ["x = 1"],
                   ["def test_pad_spec_conv1d_host_args_keeps_order():", "    assert f()"]),
    ]  # fmt: skip
    assert SignalKind.TESTS_DELETED not in signals(vllm_preset, files=with_code)
    alone = [with_code[1]]  # the code stays: the test's loss is worth a look
    assert signals(vllm_preset, files=alone)[SignalKind.TESTS_DELETED] == [
        "test_pad_spec_conv1d_host_args_keeps_order"
    ]


def test_a_skip_for_a_missing_optional_module_needs_no_follow_up(vllm_preset: Preset) -> None:
    line = "@pytest.mark.skipif(Qwen3_5MultiTokenPredictor is None, reason='old vLLM')"
    found = signals(vllm_preset, files=[file_patch("tests/test_mtp.py", [line])])
    assert SignalKind.SKIP_ADDED not in found


def test_an_empty_test_section_is_no_caveat_when_the_pr_adds_its_own_tests(
    vllm_preset: Preset,
) -> None:
    body = (
        "### What this PR does / why we need it?\nFix the mask.\n### How was this patch tested?\n\n"
    )
    code = file_patch("vllm/x.py", ["x = 1"])
    assert SignalKind.EMPTY_TEST_RESULT in signals(vllm_preset, body=body, files=[code])
    test = file_patch("tests/test_x.py", ["def test_mask():", "    assert mask() == 1"])
    assert SignalKind.EMPTY_TEST_RESULT not in signals(vllm_preset, body=body, files=[code, test])


def test_a_test_whose_cases_a_parametrized_test_of_its_file_takes_over_is_no_loss(
    vllm_preset: Preset,
) -> None:
    def patch(new_test: str) -> dict[str, object]:
        text = (
            "@@ -1,4 +1,2 @@\n-def test_target_model_waits_for_all_ranks(logger):\n"
            "-    assert barrier(logger)\n x = 1\n y = 2\n"
            "@@ -40,2 +38,5 @@\n z = 3\n"
            '+@pytest.mark.parametrize("cache", ["dram", "no"])\n'
            f"+def {new_test}(logger, cache):\n+    assert barrier(logger, cache)\n w = 4"
        )
        return {"path": "tests/test_loader.py", "additions": 3, "deletions": 2, "patch": text}

    folded = signals(vllm_preset, files=[patch("test_target_model_barrier_before_draft")])
    assert SignalKind.TESTS_DELETED not in folded
    other = signals(vllm_preset, files=[patch("test_draft_port_offset")])
    assert other[SignalKind.TESTS_DELETED] == ["test_target_model_waits_for_all_ranks"]


def test_a_todo_moved_with_its_code_is_no_new_loose_end(vllm_preset: Preset) -> None:
    todo = "        # TODO(ben): combine this into a fused kernel"
    moved = signals(
        vllm_preset,
        files=[
            file_patch("pkg/eagle.py", [], ["def propose(x):", todo, "        return x"]),
            file_patch(
                "pkg/base.py", ["def propose(x):", todo, "        return x"], status="added"
            ),
        ],
    )
    assert SignalKind.TODO not in moved
    new = signals(
        vllm_preset,
        files=[file_patch("pkg/base.py", ["def propose(x):", todo, "        return x"])],
    )
    assert new[SignalKind.TODO] == ["TODO(ben): combine this into a fused kernel"]


def test_a_variable_named_in_a_message_is_not_introduced(vllm_preset: Preset) -> None:
    warned = signals(
        vllm_preset,
        files=[
            file_patch(
                "vllm/config/ascend.py",
                ['            logger.warning("VLLM_ENABLE_FUSED_MC2 and overlap conflict")'],
            )
        ],
    )
    assert SignalKind.ENV_VAR not in warned
    read = signals(
        vllm_preset,
        files=[
            file_patch("vllm/envs.py", ['    "VLLM_NEW_KNOB": lambda: os.getenv("VLLM_NEW_KNOB"),'])
        ],
    )
    assert read[SignalKind.ENV_VAR] == ["VLLM_NEW_KNOB"]


def test_a_kernel_macro_with_the_prefix_of_a_variable_is_no_variable(vllm_preset: Preset) -> None:
    preset = vllm_preset.model_copy(update={"env_prefixes": ("ASCEND_",)})
    kernel = signals(
        preset, files=[file_patch("csrc/matmul.h", ["    if ASCEND_IS_AIC {", "        Run();"])]
    )
    assert SignalKind.ENV_VAR not in kernel
    read = signals(
        preset, files=[file_patch("csrc/init.cpp", ['    auto v = getenv("ASCEND_RT_DEBUG");'])]
    )
    assert read[SignalKind.ENV_VAR] == ["ASCEND_RT_DEBUG"]
    python = signals(preset, files=[file_patch("pkg/envs.py", ["    if ASCEND_LAUNCH_BLOCKING:"])])
    assert python[SignalKind.ENV_VAR] == ["ASCEND_LAUNCH_BLOCKING"]


def test_a_skip_the_patch_only_reformats_is_no_new_skip(vllm_preset: Preset) -> None:
    # a formatter joined the wrapped decorator and dropped an f-string prefix: the same skips
    removed = [
        "@pytest.mark.skip(",
        '    reason="Failure of one operator case breaks the others."',
        ")",
        "def test_mla():",
        '    pytest.skip(f"The use case takes too long.")',
    ]
    added = [
        '@pytest.mark.skip(reason="Failure of one operator case breaks the others.")',
        "def test_mla():",
        '    pytest.skip("The use case takes too long.")',
    ]
    found = signals(vllm_preset, files=[file_patch("tests/test_m.py", added, removed)])
    assert SignalKind.SKIP_ADDED not in found
    another = [*added, '@pytest.mark.skip(reason="hangs on A3")', "def test_other():", "    pass"]
    found = signals(vllm_preset, files=[file_patch("tests/test_m.py", another, removed)])
    assert found[SignalKind.SKIP_ADDED] == ["@pytest.mark.skip"]


def test_a_skip_whose_reason_is_context_is_read_whole_on_both_sides(vllm_preset: Preset) -> None:
    # only the trailing spaces of the decorator's first line changed; its reason is context
    patch = (
        "@@ -10,5 +10,5 @@ def create_test_data():\n"
        "-@pytest.mark.skip(    \n"
        "+@pytest.mark.skip(\n"
        '     reason="The test case failed and took one hour, to be fixed after the holiday."\n'
        " )\n"
        " def test_penalty():\n"
        "     run()\n"
        "@@ -40,2 +40,2 @@ def test_penalty():\n"
        "-    expected = [1, 2]  \n"
        "+    expected = [1, 2, 3]\n"
        "     assert_close(out, expected)"
    )
    file = {"path": "tests/test_penalty.py", "status": "modified", "additions": 2,
            "deletions": 2, "patch": patch}  # fmt: skip
    assert SignalKind.SKIP_ADDED not in signals(vllm_preset, files=[file])


def test_a_test_of_a_refusal_the_pr_lifts_is_no_lost_coverage(vllm_preset: Preset) -> None:
    source = file_patch(
        "vllm/pooling.py",
        ["    return pool(hidden)"],
        ['    raise NotImplementedError("pooling is not supported")'],
    )
    test_removed = [
        "def test_pooling_is_refused():",
        "    with pytest.raises(NotImplementedError):",
        "        pool_model()",
    ]
    test = file_patch("tests/test_pool.py", ["def test_other():", "    pass"], test_removed)
    found = signals(vllm_preset, files=[source, test])
    assert SignalKind.TESTS_DELETED not in found
    kept = file_patch("vllm/pooling.py", ["    return pool(hidden)"], ["    return None"])
    found = signals(vllm_preset, files=[kept, test])
    assert found[SignalKind.TESTS_DELETED] == ["test_pooling_is_refused"]


def test_a_test_whose_message_a_new_test_checks_went_there(vllm_preset: Preset) -> None:
    removed = [
        "def test_profile_and_msmonitor_both_enabled_raises_error(self, envs):",
        "    with self.assertRaises(RuntimeError) as cm:",
        '        worker._create_profiler("test_trace")',
        '    self.assertIn("MSMONITOR and torch profiler cannot be both enabled", str(cm.exception))',
    ]
    old = file_patch("tests/test_worker.py", ["def test_other():", "    pass"], removed)
    moved = [
        "def test_create_profiler_raises_when_msmonitor_enabled(self, mock_envs_ascend):",
        "    mock_envs_ascend.MSMONITOR_USE_DAEMON = 1",
        '    config = ProfilerConfig(profiler="torch", torch_profiler_dir="/tmp/traces")',
        "    with pytest.raises(RuntimeError) as cm:",
        '        Wrapper._create_profiler(config, "test_trace")',
        '    self.assertIn("MSMONITOR and torch profiler cannot be both enabled", str(cm.exception))',
    ]
    new = file_patch("tests/test_profiler.py", moved, status="added")
    assert SignalKind.TESTS_DELETED not in signals(vllm_preset, files=[old, new])
    # a path or an id shared with a new test is no evidence: it has no spaces
    removed_id = [
        "def test_loads_the_model(self):",
        '    model = load("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8-dynamic")',
        "    assert model.layers == 48",
    ]
    moved_id = [
        "def test_generates(self):",
        '    llm = LLM("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8-dynamic", tp=2)',
        "    out = llm.generate(prompts)",
        "    assert out[0].text",
    ]
    old = file_patch("tests/test_worker.py", ["def test_other():", "    pass"], removed_id)
    new = file_patch("tests/test_profiler.py", moved_id, status="added")
    found = signals(vllm_preset, files=[old, new])
    assert found[SignalKind.TESTS_DELETED] == ["test_loads_the_model"]


def test_a_constant_that_is_the_default_of_a_parameter_is_not_hard_coded(
    vllm_preset: Preset,
) -> None:
    lines = [
        "DEFAULT_PACKED_NUM_BUFFERS = 2",
        "class SendArgs:",
        "    packed_num_buffers: int = DEFAULT_PACKED_NUM_BUFFERS",
    ]
    found = signals(vllm_preset, files=[file_patch("vllm/distributed/packed.py", lines)])
    assert SignalKind.MAGIC_NUMBER not in found
    fixed = ["MAX_PACKED_BUFFERS = 8", "def send(x):", "    return pack(x, MAX_PACKED_BUFFERS)"]
    found = signals(vllm_preset, files=[file_patch("vllm/distributed/packed.py", fixed)])
    assert found[SignalKind.MAGIC_NUMBER] == ["MAX_PACKED_BUFFERS"]


def test_a_skip_of_what_the_code_does_not_support_yet_is_a_gate(vllm_preset: Preset) -> None:
    gates = [
        "def test_decode(backend):",
        "    if backend == 'triton':",
        "        return run_triton()",
        '    pytest.skip("NPU sparse attention currently supports prefill only; decode uses Triton.")',
        "def test_op():",
        "    try:",
        "        _ = torch.ops._C_ascend.npu_sparse_attention_score",
        "    except AttributeError:",
        '        pytest.skip("the custom op is missing from this build")',
    ]
    found = signals(vllm_preset, files=[file_patch("tests/test_gate.py", gates)])
    assert SignalKind.SKIP_ADDED not in found
    parked = [
        "def test_decode():",
        '    pytest.skip("decode hangs on A3, re-enable after the fix")',
    ]
    found = signals(vllm_preset, files=[file_patch("tests/test_gate.py", parked)])
    assert found[SignalKind.SKIP_ADDED] == ["pytest.skip"]


def test_a_clamp_moved_into_a_helper_is_no_new_truncation(vllm_preset: Preset) -> None:
    removed = [
        "        num = min(len(kernel_remote_block_ids), len(kernel_local_block_ids))",
        "        kernel_remote_block_ids = kernel_remote_block_ids[:num]",
    ]
    added = [
        "    def _kernel_blocks(self, kernel_local, kernel_remote):",
        "        num = min(len(kernel_remote), len(kernel_local))",
        "        return kernel_local[:num], kernel_remote[:num]",
    ]
    found = signals(vllm_preset, files=[file_patch("vllm/kv/connector.py", added, removed)])
    assert SignalKind.SILENT_CLAMP not in found
    found = signals(vllm_preset, files=[file_patch("vllm/kv/connector.py", added)])
    assert found[SignalKind.SILENT_CLAMP] == ["min(len(kernel_remote), len(kernel_local))"]


def test_a_test_of_code_the_pr_deletes_is_no_lost_coverage(vllm_preset: Preset) -> None:
    source = file_patch(
        "vllm/worker.py",
        ["    return free_memory"],
        [
            "    def profile_cudagraph_memory(self) -> int:",
            "        return estimate()",
            "    return free_memory - self.profile_cudagraph_memory()",
        ],
    )
    removed_test = [
        "def test_non_deepseek_still_profiles(self):",
        "    worker.determine_available_memory()",
        "    worker.model_runner.profile_cudagraph_memory.assert_called_once_with()",
    ]
    test = file_patch("tests/test_worker.py", ["def test_other():", "    pass"], removed_test)
    assert SignalKind.TESTS_DELETED not in signals(vllm_preset, files=[source, test])
    kept = file_patch("vllm/worker.py", ["    return free_memory"], ["    return 0"])
    found = signals(vllm_preset, files=[kept, test])
    assert found[SignalKind.TESTS_DELETED] == ["test_non_deepseek_still_profiles"]


def test_a_test_of_an_argument_the_pr_takes_away_is_no_lost_coverage(vllm_preset: Preset) -> None:
    source = file_patch(
        "vllm/queue.py",
        ["    def pop_request(self, queue):", "        return queue.pop()"],
        [
            "    def pop_request(self, queue, skip_or_requeue_reason=None):",
            "        if skip_or_requeue_reason:",
            "            self._skip_or_requeue_counters[skip_or_requeue_reason] += 1",
            "        return queue.pop()",
        ],
    )
    removed_test = [
        "def test_skip_counts_reason():",
        "    q.pop_request(q.short, skip_or_requeue_reason='blocked')",
        "    assert q._skip_or_requeue_counters['blocked'] == 1",
    ]
    test = file_patch("tests/test_queue.py", ["def test_other():", "    pass"], removed_test)
    # the argument and the counters it fed are gone from the code: nothing is left to cover
    assert SignalKind.TESTS_DELETED not in signals(vllm_preset, files=[source, test])
    # while the code still takes the argument, the deleted test is lost coverage
    kept = file_patch(
        "vllm/queue.py",
        ["    def pop_request(self, queue, skip_or_requeue_reason=None):"],
        ["    def pop_request(self, queue, skip_or_requeue_reason):"],
    )
    found = signals(vllm_preset, files=[kept, test])
    assert found[SignalKind.TESTS_DELETED] == ["test_skip_counts_reason"]


def test_a_test_named_after_a_class_the_pr_drops_is_no_lost_coverage(vllm_preset: Preset) -> None:
    source = file_patch(
        "vllm/core/recompute_scheduler.py",
        ["class RecomputeScheduler(Scheduler):"],
        ["class RecomputeScheduler(ShortRequestFirstSchedulerMixin, Scheduler):"],
    )
    removed_test = [
        "def test_waiting_queue_is_short_request_first():",
        "    scheduler = make_scheduler()",
        "    assert scheduler.waiting[0].num_tokens == 1",
    ]
    test = file_patch("tests/test_recompute.py", ["def test_other():", "    pass"], removed_test)
    # the mixin it tested is gone from the scheduler on purpose: nothing is left to cover
    assert SignalKind.TESTS_DELETED not in signals(vllm_preset, files=[source, test])
    # the mixin still used (here by another class): the deleted test is lost coverage
    kept = file_patch(
        "vllm/core/recompute_scheduler.py",
        ["class RecomputeScheduler(Scheduler):", "class Other(ShortRequestFirstSchedulerMixin):"],
        ["class RecomputeScheduler(ShortRequestFirstSchedulerMixin, Scheduler):"],
    )
    found = signals(vllm_preset, files=[kept, test])
    assert found[SignalKind.TESTS_DELETED] == ["test_waiting_queue_is_short_request_first"]


def test_a_change_that_mostly_deletes_source_asks_for_no_new_test(vllm_preset: Preset) -> None:
    removed = [f"    legacy_step_{i}(x)" for i in range(40)]
    deleting = file_patch("vllm/worker/legacy.py", ["    return x"], removed)
    title = "[Refactor] Drop the legacy worker steps"
    found = signals(vllm_preset, title=title, files=[deleting])
    assert SignalKind.NO_TESTS not in found  # 1 line added, 40 taken away: nothing new to test
    adding = file_patch("vllm/worker/legacy.py", [f"    step_{i}(x)" for i in range(12)], removed)
    assert SignalKind.NO_TESTS in signals(vllm_preset, title=title, files=[adding])
    # a fix with any new line still asks for a regression test
    assert SignalKind.NO_TESTS in signals(vllm_preset, files=[deleting])

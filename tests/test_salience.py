"""Salience: which names carry the design, and the expressions a PR rewrote in place."""

from __future__ import annotations

import difflib
import re

import cydifflib
from hypothesis import given, settings
from hypothesis import strategies as st

from prdigest.analyze.moves import similarity
from prdigest.analyze.patches import DiffLine, parse_patch
from prdigest.analyze.salience import (
    Context,
    _names_word,
    _relocated_lines,
    duplicates,
    edit_of,
    rank,
)
from prdigest.core import models
from prdigest.core.models import FileFact, Provenance, Role, SymbolFact


def test_an_edit_is_the_expression_that_changed_widened_to_whole_names() -> None:
    assert edit_of("    self.runner.block_size,", "    self.kernel_block_size,") == (
        "self.runner.block_size",
        "self.kernel_block_size",
    )
    assert edit_of("n = input_size // group_size", "n = cdiv(input_size, self.group_size)") == (
        "input_size // group_size",
        "cdiv(input_size, self.group_size)",
    )
    # both sides start where the lines part: the whole lookup, not its subscript alone
    assert edit_of(
        "meta = self._recving_metadata[req_id]", "meta = self._recving_metadata.pop(req_id, None)"
    ) == ("self._recving_metadata[req_id]", "self._recving_metadata.pop(req_id, None)")


def test_an_edit_is_a_whole_expression_never_a_cut_tuple_target_operator_or_list() -> None:
    # a tuple's last target is no keyword argument: the value alone changed
    assert edit_of("    a, b = routing", "    a, b = lora_routing") == ("routing", "lora_routing")
    assert edit_of(
        "        ptrs, sizes = self._registered_buffers",
        "        ptrs, sizes = self._pending_buffers",
    ) == ("self._registered_buffers", "self._pending_buffers")
    assert edit_of("    foo(a, async_op=True)", "    foo(a, async_op=False)") == (
        "async_op=True",
        "async_op=False",
    )
    # a literal inside a list: the list, with the keyword it is passed by
    call = "        rms_norm_input, residual, rms_norm_weight, epsilon=self.eps, output_mask="
    assert edit_of(call + "[True, True]", call + "[True, False]") == (
        "output_mask=[True, True]",
        "output_mask=[True, False]",
    )
    # a dict entry's value: with its key
    assert edit_of(
        '            "expert_token_nums_type": 0,',
        '            "expert_token_nums_type": expert_token_nums_type,',
    ) == ('"expert_token_nums_type": 0', '"expert_token_nums_type": expert_token_nums_type')
    # a changed operator: the comparison whole, not ``len(x) =`` → ``n >``
    assert edit_of("    if x > 3 and y:", "    if x >= 3 and y:") == ("x > 3 and y", "x >= 3 and y")
    # the comment a line ends with is no code
    assert edit_of("    group_list_type = 1  # `count`", "    group_list_type = 0  # `cumsum`") == (
        "group_list_type = 1",
        "group_list_type = 0",
    )


def test_values_that_changed_lines_when_branches_were_regrouped_are_no_edit() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch(
                "pkg/prepare.py",
                [
                    "        elif quant_type in (QuantType.MXFP8, QuantType.W4A8MXFP):",
                    "            hidden = quantize(hidden, dst_type=torch.float8_e4m3fn)",
                    "        elif quant_type == QuantType.MXFP4:",
                    "            hidden = quantize(hidden, dst_type=torch.float4_e2m1fn_x2)",
                ],
                [
                    "        elif quant_type == QuantType.MXFP8:",
                    "            hidden = quantize(hidden, dst_type=torch.float8_e4m3fn, x=1)",
                    "        elif quant_type in [QuantType.MXFP4, QuantType.W4A8MXFP]:",
                    "            pass",
                ],
            )
        ]
    )
    edits = [(e.before, e.after) for e in analyze(pr, load_preset(pr.repo)).edits]
    # MXFP8 did not become MXFP4: it shares a branch now, and MXFP4 has one of its own
    assert ("QuantType.MXFP8", "QuantType.MXFP4") not in edits


def test_a_call_to_another_function_is_the_callee_that_changed() -> None:
    assert edit_of(
        "        return torch.ops._C_ascend.npu_moe_init_routing_custom(",
        "        return torch_npu.npu_moe_init_routing_v2(",
    ) == ("torch.ops._C_ascend.npu_moe_init_routing_custom", "torch_npu.npu_moe_init_routing_v2")
    assert edit_of("out = at::empty(size, opts);", "out = at::empty_symint(size, opts);") == (
        "empty",
        "empty_symint",
    )
    # other arguments too: not a swap of the callee alone
    assert edit_of("y = foo(a, b)", "y = bar(a, c)") != ("foo", "bar")


def test_a_call_chained_on_at_the_end_is_said_with_the_call_it_follows() -> None:
    assert edit_of(
        "    w13 = self._maybe_pad_weight(layer.w13_weight.data).transpose(1, 2)",
        "    w13 = self._maybe_pad_weight(layer.w13_weight.data).transpose(1, 2).contiguous()",
    ) == ("transpose(1, 2)", "transpose(1, 2).contiguous()")


def test_a_comment_or_a_message_changed_is_no_edit_of_the_code() -> None:
    assert (
        edit_of(
            "    seed: torch.Tensor,  # [num_reqs]", "    seed: torch.Tensor,  # [max_num_reqs]"
        )
        is None
    )
    assert (
        edit_of(
            '    raise ValueError("W4A4_MXFP4 quantization needs A5")',
            '    raise ValueError(f"{rollback_quant_type} quantization needs A5")',
        )
        is None
    )
    assert edit_of('mode = "eager"', 'mode = "graph"') == ('mode = "eager"', 'mode = "graph"')


def test_a_log_call_reworded_is_no_edit_to_read() -> None:
    # the format string and its arguments changed: a report, not what the code does
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch(
                "pkg/pool.py",
                [
                    '    logger.debug("event %s free blocks: %s", event_id, ids)',
                    "    pool.free(ids[:limit])",
                ],
                ['    logger.debug("free blocks: %s", ids)', "    pool.free(ids)"],
            )
        ]
    )
    edits = [(e.before, e.after) for e in analyze(pr, load_preset(pr.repo)).edits]
    assert edits == [("pool.free(ids)", "pool.free(ids[:limit])")]
    # in a PR about its logs the reworded call is the change itself
    logs = pr.model_copy(update={"title": "[Misc] Log the event id of freed blocks"})
    edits = [(e.before, e.after) for e in analyze(logs, load_preset(pr.repo)).edits]
    assert ('"free blocks: %s"', '"event %s free blocks: %s", event_id') in edits
    # a call that only gains the arguments its message was missing is a fix to read
    fixed = make_pr(
        files=[
            file_patch(
                "pkg/quant.py",
                ["    logger.error(err_msg, quant_type, layer_type)"],
                ["    logger.error(err_msg)"],
            )
        ]
    )
    edits = [(e.before, e.after) for e in analyze(fixed, load_preset(pr.repo)).edits]
    assert edits == [("logger.error(err_msg)", "logger.error(err_msg, quant_type, layer_type)")]


def test_the_tails_of_two_statements_are_no_edit() -> None:
    # `.contiguous(), dim=0` moved to the next line; a guard took its place
    assert (
        edit_of(
            "    hidden_states[: self.max_num_tokens_across_pcp].contiguous(), dim=0",
            "    hidden_states[: self.max_num_tokens_across_pcp] if self.max_num_tokens_across_pcp"
            " > 0 else hidden_states",
        )
        is None
    )


def test_a_changed_literal_is_said_with_what_it_sets() -> None:
    assert edit_of("timeout = 1800", "timeout = 3600") == ("timeout = 1800", "timeout = 3600")


def test_no_edit_between_different_names_prose_or_fragments() -> None:
    assert edit_of("    seqs: int = 0", "    max_wait_ms: int = 0") is None
    assert edit_of("    using w8a8_dynamic quant here", "    enabled and the EP quant here") is None
    assert edit_of("assert a == b, (", "assert a == c, (") is None
    assert edit_of("x = compute(a)", "y = something_else(b, c, d)") is None


def _fact(path: str, role: Role = Role.SOURCE, language: str = "python") -> FileFact:
    return FileFact(
        id="f1",
        provenance=Provenance(kind="file", ref=path),
        path=path,
        status="modified",
        role=role,
        language=language,
        additions=3,
        deletions=1,
    )


def _symbol(name: str, path: str, lines: int, change: str = "modified") -> SymbolFact:
    return SymbolFact(
        id=f"s-{name}",
        provenance=Provenance(kind="file", ref=path),
        name=name,
        kind="function",
        path=path,
        line=1,
        change=change,  # type: ignore[arg-type]
        via="pattern",
        lines_changed=lines,
    )


def test_names_the_body_and_tests_talk_about_outrank_big_helpers() -> None:
    source = parse_patch(
        "pkg/core.py",
        "@@ -1,2 +1,3 @@\n def resolve_backend(cfg):\n-    return cfg.kind\n"
        "+    return pick_backend_for(cfg.kind)\n+    # done",
    )
    test = parse_patch(
        "tests/test_core.py",
        "@@ -0,0 +1,2 @@\n+def test_resolve():\n+    assert resolve_backend(cfg) is not None",
    )
    symbols = [
        _symbol("resolve_backend", "pkg/core.py", 2),
        _symbol("print_summary_table", "pkg/core.py", 120),
    ]
    ranked, _edits = rank(
        [(_fact("pkg/core.py"), source), (_fact("tests/test_core.py", Role.TEST), test)],
        symbols,
        [],
        Context(title="Pick the backend", body="`resolve_backend` now defers", python_carries=True),
    )
    order = [x.name for x in ranked if x.kind == "symbol"]
    assert order.index("resolve_backend") < order.index("print_summary_table")
    top = next(x for x in ranked if x.name == "resolve_backend")
    assert {"in_body", "tested", "dispatch"} <= set(top.reasons)
    assert "helper" in next(x for x in ranked if x.name == "print_summary_table").reasons


def test_a_definition_the_title_spells_in_words_outranks_a_bigger_one() -> None:
    source = parse_patch(
        "pkg/config.py",
        "@@ -1,3 +1,1 @@\n-class WeightPrefetchConfig:\n-    size = 1\n def load_settings(cfg):",
    )
    symbols = [
        _symbol("WeightPrefetchConfig", "pkg/config.py", 2, "removed"),
        _symbol("load_settings", "pkg/config.py", 40, "removed"),
    ]

    def ranked(title: str) -> list[models.SalientFact]:
        context = Context(title=title, body="", python_carries=True)
        return rank([(_fact("pkg/config.py"), source)], symbols, [], context)[0]

    spelled = ranked("[Refactor] Remove weight prefetch config")
    assert spelled[0].name == "WeightPrefetchConfig"
    assert "title_words" in spelled[0].reasons
    # the words must run in order, two at least for a definition
    for title in ("[Refactor] Remove the config of weight prefetch", "[Refactor] Remove weight"):
        assert all("title_words" not in x.reasons for x in ranked(title))


def test_the_same_change_in_two_files_is_one_copy() -> None:
    patch = "@@ -1,4 +1,4 @@\n a\n-b = 1\n+b = 2\n c\n-d\n+e"
    parsed = [
        (_fact("csrc/a/x.h", language="cpp"), parse_patch("csrc/a/x.h", patch)),
        (_fact("csrc/b/x.h", language="cpp"), parse_patch("csrc/b/x.h", patch)),
    ]
    assert duplicates(parsed) == {"csrc/b/x.h": "csrc/a/x.h"}
    assert similarity(["a"], ["a"]) == 1.0


def test_a_raise_that_only_moves_is_no_new_fail_closed_path() -> None:
    from prdigest.analyze.design import detect

    gone = parse_patch("pkg/a.py", "@@ -1,2 +1,1 @@\n def f(x):\n-    raise ValueError(x)")
    come = parse_patch("pkg/b.py", "@@ -1,1 +1,2 @@\n def g(x):\n+    raise ValueError(x)")
    new = parse_patch("pkg/c.py", "@@ -1,1 +1,2 @@\n def h(x):\n+    raise RuntimeError(x)")
    facts = detect([(_fact("pkg/a.py"), gone), (_fact("pkg/b.py"), come), (_fact("pkg/c.py"), new)])
    net = {x.label: x.net for x in facts if x.pattern == "fail_closed"}
    assert net == {"raise ValueError": False, "raise RuntimeError": True}


def test_workflow_design_a_soft_failure_a_run_group_and_the_secrets_read() -> None:
    from prdigest.analyze.design import detect

    lines = [
        "  archive:",
        "    continue-on-error: true",
        "    concurrency:",
        "      group: daily-archive",
        "      cancel-in-progress: true",
        "    env:",
        "      KEY: ${{ secrets.OBS_ACCESS_KEY }}",
        "      TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "      SOFT: ${{ inputs.soft }}  # continue-on-error: false elsewhere",
    ]
    patch = "@@ -1,1 +1,10 @@ jobs:\n jobs:\n" + "".join(f"+{x}\n" for x in lines)
    path = ".github/workflows/archive.yaml"
    facts = detect([(_fact(path, Role.CI, "yaml"), parse_patch(path, patch))])
    found = {(x.pattern, x.label) for x in facts}
    assert found == {
        ("soft_fail", "continue-on-error: true"),
        ("run_group", "concurrency"),
        ("run_superseded", "cancel-in-progress: true"),
        ("secret", "secrets.OBS_ACCESS_KEY"),  # the run's own token is routine
    }
    # the same words in a source file are no workflow
    assert not detect([(_fact("pkg/a.py"), parse_patch("pkg/a.py", patch))])


def test_a_kernel_with_many_definitions_leaves_room_for_the_python_files_after_it() -> None:
    from prdigest.analyze import MAX_SYMBOLS, analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    kernel = [f"void kernel_step_{i}(int x) {{" for i in range(MAX_SYMBOLS + 50)]
    python = ["def _select_comm_method(config):", "    return config.method"]
    pr = make_pr(
        files=[
            file_patch("csrc/ops/kernel.cpp", kernel, status="added"),
            file_patch("pkg/ops/select.py", python),
        ]
    )
    d = analyze(pr, load_preset(pr.repo))
    assert len(d.symbols) <= MAX_SYMBOLS
    assert "_select_comm_method" in {s.name for s in d.symbols}
    assert len({s.id for s in d.symbols}) == len(d.symbols)


def test_one_salient_fact_per_name_and_file() -> None:
    patch = parse_patch(
        "csrc/ops/vec.h",
        "@@ -1,0 +1,6 @@\n+struct A {\n+  A operator+(const A& o) const;\n+};\n"
        "+struct B {\n+  B operator+(const B& o) const;\n+};",
    )
    fact = _fact("csrc/ops/vec.h", language="cpp")
    symbols = [
        SymbolFact(
            id=f"s{i}",
            provenance=Provenance(kind="file", ref=fact.path),
            name="operator",
            kind="method",
            path=fact.path,
            change="added",
            language="cpp",
            via="pattern",
            parent=parent,
            lines_changed=1,
        )
        for i, parent in enumerate(("A", "B"), start=1)
    ]
    ranked, _edits = rank([(fact, patch)], symbols, [], Context("t", "", python_carries=False))
    assert [x.name for x in ranked].count("operator") == 1


# -- the compiled matcher -------------------------------------------------------------------

_CODE_TEXT = st.text(alphabet="abcdefxyz_.()[]=+-,: 0123456789'\"", max_size=240)


@settings(max_examples=300, deadline=None)
@given(a=_CODE_TEXT, b=_CODE_TEXT)
def test_compiled_matcher_scores_lines_as_difflib_does(a: str, b: str) -> None:
    # salience pairs lines with cydifflib for speed; its figures must be difflib's to the bit
    # (lines of 200 characters or more switch on difflib's autojunk heuristic: covered too)
    ours, reference = cydifflib.SequenceMatcher(None, a, b), difflib.SequenceMatcher(None, a, b)
    assert ours.real_quick_ratio() == reference.real_quick_ratio()
    assert ours.quick_ratio() == reference.quick_ratio()
    assert ours.ratio() == reference.ratio()
    assert ours.get_opcodes() == reference.get_opcodes()


@settings(max_examples=200, deadline=None)
@given(
    a=st.lists(st.sampled_from(["self", ".", "x", "(", ")", "=", "1", "'a'", "kv"]), max_size=40),
    b=st.lists(st.sampled_from(["self", ".", "x", "(", ")", "=", "2", "'a'", "kv"]), max_size=40),
)
def test_compiled_matcher_compares_token_lists_as_difflib_does(a: list[str], b: list[str]) -> None:
    ours, reference = cydifflib.SequenceMatcher(None, a, b), difflib.SequenceMatcher(None, a, b)
    assert ours.ratio() == reference.ratio()
    assert ours.get_opcodes() == reference.get_opcodes()


def test_a_reused_matcher_scores_each_line_as_a_fresh_one() -> None:
    # _pair keeps one matcher per added line and swaps the removed line in with set_seq1
    lines = ["self.block_size = block_size", "x = self.kernel_block_size", "return x + 1"]
    matcher = cydifflib.SequenceMatcher(None, "", "self.kernel_block_size = block_size")
    for line in lines:
        matcher.set_seq1(line)
        fresh = difflib.SequenceMatcher(None, line, "self.kernel_block_size = block_size")
        assert (matcher.quick_ratio(), matcher.ratio()) == (fresh.quick_ratio(), fresh.ratio())


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab_.-( é1`", max_size=30),
    word=st.text(alphabet="ab_.é1", min_size=1, max_size=4),
)
def test_whole_word_search_is_the_pattern_it_replaces(text: str, word: str) -> None:
    title_pattern = rf"(?<![\w.]){re.escape(word)}(?!\w)"
    body_pattern = rf"(?<![\w]){re.escape(word)}(?!\w)"
    assert _names_word(text, word, after_dot=False) == bool(re.search(title_pattern, text))
    assert _names_word(text, word) == bool(re.search(body_pattern, text))


def test_a_line_moved_unchanged_pairs_with_its_copy_not_with_an_edited_one() -> None:
    # the edited copy comes first: only the identical one may take the removed line
    patch = parse_patch(
        "pkg/core.py",
        "@@ -1,3 +1,5 @@\n x = 1\n-    total = scale_tokens(block, factor)\n"
        "+    total = scale_tokens(block, new_factor)\n"
        "+    total = scale_tokens(block, factor)\n+    y = 2\n z = 3",
    )
    assert patch.error is None
    context = Context(title="t", body="", python_carries=True)
    assert rank([(_fact("pkg/core.py"), patch)], [], [], context)[1] == []
    edited = parse_patch(
        "pkg/core.py",
        "@@ -1,3 +1,4 @@\n x = 1\n-    total = scale_tokens(block, factor)\n"
        "+    total = scale_tokens(block, new_factor)\n+    y = 2\n z = 3",
    )
    edits = rank([(_fact("pkg/core.py"), edited)], [], [], context)[1]
    assert [(e.before, e.after) for e in edits] == [("factor", "new_factor")]


def test_backticks_stay_paired_when_a_short_span_sits_between_two() -> None:
    source = parse_patch(
        "pkg/buf.py",
        "@@ -1,2 +1,2 @@\n class Buffer:\n-    cpu = np = None  # a / b\n+    cpu = np = uva = None  # a / b",
    )
    ranked, _edits = rank(
        [(_fact("pkg/buf.py"), source)],
        [_symbol("Buffer", "pkg/buf.py", 1)],
        [],
        Context(
            title="Add a buffer", body="same `cpu` / `np` / `uva()` surface", python_carries=True
        ),
    )
    named = {x.name for x in ranked if "in_body" in x.reasons}
    assert "/" not in named and not any(n.strip() == "/" for n in named)


def test_edits_worth_the_same_up_to_float_rounding_keep_their_order() -> None:
    from prdigest.analyze.patches import DiffLine
    from prdigest.analyze.salience import _ranked_edits

    # 0.1 + 0.2 + 0.3 is 0.6000000000000001, 0.3 + 0.2 + 0.1 is 0.6: the same worth
    scores = {"aa": 0.1, "ab": 0.2, "ac": 0.3, "xa": 0.3, "xb": 0.2, "xc": 0.1}
    first = (_fact("pkg/a.py"), DiffLine("+", "aa(ab, ac)", None, 1), "aa(ab)", "aa(ab, ac)")
    second = (_fact("pkg/a.py"), DiffLine("+", "xa(xb, xc)", None, 2), "xa(xb)", "xa(xb, xc)")
    context = Context(title="t", body="", python_carries=True)
    for raw in ([first, second], [second, first]):
        ranked = _ranked_edits(raw, [], context, scores, {}, set())
        assert [e.after for e in ranked] == [item[3] for item in raw]


def test_code_moved_to_another_block_or_indentation_is_relocated_not_re_emitted() -> None:
    patch = parse_patch(
        "pkg/platform.py",
        "@@ -1,8 +1,8 @@\n def setup(num_tokens, cfg):\n"
        "-    comm_type = select_comm_method(num_tokens, cfg)\n"
        "     tokens_across_dp = sync_tokens(num_tokens)\n"
        "+    comm_type = select_comm_method(tokens_across_dp, cfg)\n"
        "     if cfg.flag:\n"
        "-        padded_value = expand_rows(tokens_across_dp)\n"
        "+        padded_value = expand_rows(tokens_across_dp)  # checked\n"
        "     with guard_context():\n"
        "-    finish_value = compute_logits(padded_value)\n"
        "+        finish_value = compute_logits(padded_value)\n"
        "     return comm_type",
    )
    ranked, _edits = rank(
        [(_fact("pkg/platform.py"), patch)],
        [],
        [],
        Context(title="t", body="", python_carries=True),
    )
    reasons = {x.name: set(x.reasons) for x in ranked}
    assert "relocated" in reasons["compute_logits"]  # wrapped in the new `with` block
    assert "relocated" in reasons["finish_value"]
    assert "expand_rows" not in reasons or "relocated" not in reasons["expand_rows"]


def test_a_line_the_diff_re_emits_in_place_is_not_relocated() -> None:
    patch = parse_patch(
        "pkg/cache.py",
        "@@ -1,3 +1,4 @@\n     def free(self, request):\n"
        "-        for input_id in self.cached.get(request.request_id, ()):\n"
        "-            self.free_encoder_input(request, input_id)\n"
        "+        for input_id in list(self.cached.pop(request.request_id, ())):\n"
        "+            self.free_encoder_input(request, input_id)\n"
        "+        return None",
    )
    ranked, _edits = rank(
        [(_fact("pkg/cache.py"), patch)], [], [], Context(title="t", body="", python_carries=True)
    )
    assert patch.error is None and _relocated_lines(patch) == set()
    assert all("relocated" not in x.reasons for x in ranked)


def test_a_definition_a_new_test_is_named_after_counts_as_tested() -> None:
    source = parse_patch(
        "pkg/ops/meta.py", "@@ -1,2 +1,2 @@\n def build_local_metadata(q):\n-    a = 1\n+    a = 2"
    )
    test = parse_patch(
        "tests/ops/test_meta.py",
        "@@ -0,0 +1,2 @@\n+def test_build_local_metadata_masks_padding():\n+    assert run(q)",
    )
    parsed = [
        (_fact("pkg/ops/meta.py"), source),
        (_fact("tests/ops/test_meta.py", Role.TEST), test),
    ]
    symbols = [
        _symbol("build_local_metadata", "pkg/ops/meta.py", 2),
        _symbol("unrelated", "pkg/x.py", 2),
    ]
    new_test = models.TestFact(
        id="t1",
        provenance=Provenance(kind="file", ref="tests/ops/test_meta.py"),
        name="test_build_local_metadata_masks_padding",
        path="tests/ops/test_meta.py",
    )
    context = Context(title="t", body="", python_carries=True)
    ranked, _edits = rank(parsed, symbols, [new_test], context)
    reasons = {x.name: set(x.reasons) for x in ranked}
    assert "test_named" in reasons["build_local_metadata"]
    assert "tested" not in reasons["build_local_metadata"]  # the test calls a helper, not it
    assert "test_named" not in reasons.get("unrelated", set())
    # a test that was there before and only changed says nothing new about the definition
    changed = new_test.model_copy(update={"existed": True})
    ranked, _edits = rank(parsed, symbols, [changed], context)
    assert all("test_named" not in x.reasons for x in ranked)


def test_an_edit_below_an_unchanged_method_is_said_in_the_class_not_the_method_above() -> None:
    # the method the second hunk sits in starts between the hunks: git's header shows the class
    patch = parse_patch(
        "pkg/threads.py",
        "@@ -10,2 +10,2 @@ class SendingThread:\n"
        "     def build_shared_data(self, task):\n"
        "-        return self.builder.build(task)\n"
        "+        return self.builders[task.group].build(task)\n"
        "@@ -30,3 +30,3 @@ class SendingThread:\n"
        "         tasks = self.queue.get()\n"
        "-        total = count_blocks(tasks, 16)\n"
        "+        total = count_blocks(tasks, self.block_size)\n"
        "         self.save(tasks)",
    )
    symbols = [
        _symbol("build_shared_data", "pkg/threads.py", 2),
        _symbol("SendingThread", "pkg/threads.py", 2),
    ]
    _ranked, edits = rank(
        [(_fact("pkg/threads.py"), patch)],
        symbols,
        [],
        Context(title="t", body="", python_carries=True),
    )
    owners = {e.line: e.symbol for e in edits}
    assert owners == {11: "build_shared_data", 31: "SendingThread"}


def test_prose_names_code_only_as_code_never_as_an_english_word() -> None:
    from prdigest.analyze.salience import _reasons_of_name

    def in_body(name: str, body: str) -> bool:
        context = Context(title="Fix things", body=body, python_carries=True)
        return "in_body" in _reasons_of_name(name, context, set(), set(), 1)

    assert not in_body("logger.warning", "We now log a warning when it is enabled.")
    assert not in_body("tl.sigmoid", "The gate applies a sigmoid(gate) to the output.")
    assert in_body("self.model.markov_embed", "The result of `markov_embed` is split by sp.")
    assert not in_body("free", "Blocks are free again after the request finishes.")
    assert in_body("free", "Calling `EncoderCacheManager.free` twice is now safe.")
    assert in_body("free", "Make free() idempotent.")
    title = Context(title="Add debug logging probes", body="", python_carries=True)
    assert "in_title" not in _reasons_of_name("logger.debug", title, set(), set(), 1)


def test_a_name_a_new_test_line_still_uses_is_not_gone() -> None:
    source = parse_patch(
        "pkg/ctx.py", "@@ -1,2 +1,1 @@\n def select(cfg):\n-    return vllm_config.kind"
    )
    test = parse_patch(
        "tests/test_ctx.py", "@@ -1,0 +1,1 @@\n+    vllm_config = make_vllm_config()"
    )
    ranked, _edits = rank(
        [(_fact("pkg/ctx.py"), source), (_fact("tests/test_ctx.py", Role.TEST), test)],
        [],
        [],
        Context(title="t", body="", python_carries=True),
    )
    fact = next(x for x in ranked if x.name == "vllm_config")
    assert fact.change != "gone" and "gone" not in fact.reasons and "tested" in fact.reasons


def test_a_removed_tolist_of_host_data_or_in_a_log_call_is_no_removed_host_sync() -> None:
    from prdigest.analyze.design import detect

    patch = parse_patch(
        "pkg/pool.py",
        "@@ -1,5 +1,1 @@\n def save(self):\n"
        "-    logger.debug('gvas %s', gvas.tolist())\n"
        "-    sizes = size_array.tolist()\n"
        "-    ids = token_ids_np.tolist()\n"
        "-    count = seq_lens.cpu().item()",
    )
    facts = [x for x in detect([(_fact("pkg/pool.py"), patch)]) if x.pattern == "host_sync_removed"]
    assert len(facts) == 3  # still seen (triage counts them), at most three per pattern
    assert [x.net for x in facts] == [False, False, False]
    device = parse_patch(
        "pkg/attn.py", "@@ -1,2 +1,1 @@\n def step(self):\n-    count = seq_lens.cpu().item()"
    )
    facts = [
        x for x in detect([(_fact("pkg/attn.py"), device)]) if x.pattern == "host_sync_removed"
    ]
    assert [x.net for x in facts] == [True]
    # a tensor named for the host, and a sync rewritten as another sync, remove none
    kept = parse_patch(
        "pkg/xlite.py",
        "@@ -1,3 +1,2 @@\n def step(self):\n"
        "-    ids = slot_mapping_cpu.tolist()\n"
        "-    return all(torch.all(t == 0).item() for t in tensors)\n"
        "+    return all(torch.allclose(t, t.new_zeros(1)) for t in tensors)",
    )
    facts = [x for x in detect([(_fact("pkg/xlite.py"), kept)]) if x.pattern == "host_sync_removed"]
    assert [x.net for x in facts] == [False, False]
    # device data refused where it was copied to the host: a rejection, not a sync removed
    refused = parse_patch(
        "pkg/block_table.py",
        "@@ -1,3 +1,4 @@\n def _to_numpy(value):\n-    value = value.cpu()\n"
        '+    if value.device.type != "cpu":\n'
        '+        raise TypeError("slot mapping must be computed from CPU tensors")\n'
        "     return value.numpy()",
    )
    facts = [
        x
        for x in detect([(_fact("pkg/block_table.py"), refused)])
        if x.pattern == "host_sync_removed"
    ]
    assert [x.net for x in facts] == [False]


def test_names_in_comments_log_messages_and_docstrings_are_prose_not_uses() -> None:
    from prdigest.analyze.salience import _changed_code, _python_code

    assert _python_code('    x = foo("a b", y)  # uses bar_baz') == '    x = foo("", y)  '
    assert (
        _python_code('    v = cfg.get("enable_npugraph_ex")')
        == '    v = cfg.get("enable_npugraph_ex")'
    )
    assert "rejection_sampler" not in _python_code(
        "    logger.info('rejection_sampler entry %s', n)"
    )
    patch = parse_patch(
        "t.py",
        '@@ -1,0 +1,5 @@\n+    """Stub `_EXTRA_CTX` in setUp\n+    and `markov_emb` too.\n'
        '+    """\n+    def f(self):\n+        return markov_embed(x)',
    )
    code = [c for _line, c in _changed_code(patch, python=True)]
    assert "".join(code[:3]).strip() == "" and "markov_embed" in code[4]
    lone = parse_patch(
        "u.py", '@@ -1,2 +1,2 @@\n     """\n-    x = old_name(a)\n+    x = new_name(a)'
    )
    assert [c.strip() for _l, c in _changed_code(lone, python=True)] == [
        "x = old_name(a)",
        "x = new_name(a)",
    ]  # a lone triple quote may close a docstring: the lines after it stay code


def test_a_body_name_is_in_the_change_only_as_a_whole_word_of_a_changed_line() -> None:
    from prdigest.analyze.salience import _body_code_names, _changed_code

    patch = parse_patch(
        "pkg/runner.py",
        "@@ -1,2 +1,3 @@\n     out = torch_npu.npu_fused_infer_attention_score(\n"
        "-        q, sparse_mode=3)\n+        q, sparse_mode=0)\n+    self._log_propose_entry(out)",
    )
    body = "Probes `_propose` and `npu_fused_infer_attention_score`; sets `sparse_mode`."
    code = {"pkg/runner.py": list(_changed_code(patch, python=True))}
    found = _body_code_names([(_fact("pkg/runner.py"), patch)], body, code)
    assert set(found) == {"sparse_mode"}  # context-only and part-of-a-name spans are not


def _lines(patch: str) -> tuple[DiffLine, ...]:
    """The lines of a one-hunk patch whose header counts are worked out from its body."""
    body = patch.split("\n", 1)[1].split("\n")
    old = sum(1 for x in body if x[:1] in " -")
    new = sum(1 for x in body if x[:1] in " +")
    text = f"@@ -1,{old} +1,{new} @@\n" + "\n".join(body)
    return parse_patch("pkg/a.py", text).hunks[0].lines


def test_a_raise_is_said_with_the_one_line_if_it_sits_directly_under() -> None:
    from prdigest.analyze.design import guard

    lines = _lines(
        "@@ -1,2 +1,9 @@\n def f(x, items):\n"
        "+    if x is None:\n+        # nothing to read\n+        raise ValueError(x)\n"
        "+    for item in items:\n+        raise RuntimeError(item)\n"
        "+    if (\n+        x\n+    ):\n"
        "     return x"
    )
    texts = [line.text.strip() for line in lines]
    assert guard(lines, texts.index("raise ValueError(x)")) == "x is None"
    assert guard(lines, texts.index("raise RuntimeError(item)")) == ""  # a loop, not an if
    nested = _lines(
        "@@ -1,2 +1,7 @@\n def check(self, config):\n"
        "+    if self.olora_size > 0:\n+        enabled.append(self.olora_size)\n"
        "+        if config.enforce_eager:\n+            raise AssertionError(config)\n"
        "+        elif config.kv is None:\n+            raise ValueError(config)\n"
        "     return enabled"
    )
    texts = [line.text.strip() for line in nested]
    # the raise runs only when the outer `if` holds too; an `elif` depends on the branch above
    assert guard(nested, texts.index("raise AssertionError(config)")) == (
        "self.olora_size > 0 and config.enforce_eager"
    )
    assert guard(nested, texts.index("raise ValueError(config)")) == ""
    from prdigest.analyze.design import scope_of

    hunk = parse_patch(
        "pkg/a.py",
        "@@ -10,2 +10,4 @@ class Method:\n     def build(self, layer):\n"
        "+        if not hasattr(layer, 'bias'):\n+            raise RuntimeError(layer)\n"
        "         return layer",
    ).hunks[0]
    at = [x.text.strip() for x in hunk.lines].index("raise RuntimeError(layer)")
    assert scope_of(hunk, at) == "build"  # the raise holds in build, whoever calls it
    headed = parse_patch(
        "pkg/a.py", "@@ -10,1 +10,2 @@ def build(self, layer):\n+    raise KeyError(layer)\n x = 1"
    ).hunks[0]
    assert scope_of(headed, 0) == "build"


def test_no_guard_under_else_a_multi_line_if_or_a_long_condition() -> None:
    from prdigest.analyze.design import MAX_GUARD, guard

    long = " and ".join(f"flag_{i}" for i in range(12))
    assert len(long) > MAX_GUARD
    lines = _lines(
        "@@ -1,1 +1,9 @@\n def f(x):\n"
        "+    if x:\n+        pass\n+    else:\n+        raise ValueError(x)\n"
        "+    if (x and\n+            not x):\n+        raise KeyError(x)\n"
        f"+    if {long}:\n+        raise RuntimeError(x)"
    )
    texts = [line.text.strip() for line in lines]
    for raised in ("raise ValueError(x)", "raise KeyError(x)", "raise RuntimeError(x)"):
        assert guard(lines, texts.index(raised)) == "", raised


def test_a_removed_not_supported_raise_is_a_refusal_lifted_unless_it_moved_or_its_file_went() -> (
    None
):
    from prdigest.analyze.design import detect

    lifted = parse_patch(
        "pkg/worker.py",
        "@@ -1,4 +1,2 @@\n def setup(cfg):\n-    if cfg.layerwise and cfg.groups > 1:\n"
        "-        raise NotImplementedError(cfg)\n     return cfg",
    )
    facts = detect([(_fact("pkg/worker.py"), lifted)])
    [fact] = [x for x in facts if x.pattern == "refusal_removed"]
    assert (fact.net, fact.guard) == (True, "cfg.layerwise and cfg.groups > 1")

    moved_to = parse_patch(
        "pkg/checks.py", "@@ -0,0 +1,2 @@\n+def check(cfg):\n+    raise NotImplementedError(cfg)"
    )
    facts = detect([(_fact("pkg/worker.py"), lifted), (_fact("pkg/checks.py"), moved_to)])
    assert [x.net for x in facts if x.pattern == "refusal_removed"] == [False]

    deleted = _fact("pkg/worker.py").model_copy(update={"status": "removed"})
    assert not [x for x in detect([(deleted, lifted)]) if x.pattern == "refusal_removed"]


def test_no_edit_that_says_a_became_a_or_only_swaps_keywords() -> None:
    # the slice inserted after the group leaves the group the same on both sides (#10221)
    before = (
        "        self.spec_slot_mapping[draft_step - 1] = DeviceOperator.format_dsa_slot_mapping("
        "  # type: ignore[index]"
    )
    after = before.replace("[draft_step - 1]", "[draft_step - 1][:num_input_tokens]")
    found = edit_of(before, after)
    assert found is None or found[0] != found[1]
    short = edit_of("    m[step - 1] = fmt(s)", "    m[step - 1][:n] = fmt(s)")
    assert short == ("m[step - 1] = fmt(s)", "m[step - 1][:n] = fmt(s)")  # the whole line
    assert edit_of("    if config.capture_sizes:", "    elif config.capture_sizes:") is None
    assert edit_of("    use_streams = False", "    use_streams = True") is not None  # values


def test_a_parameter_moved_beside_one_deleted_is_no_rename_of_it() -> None:
    from conftest import one_file_dossier

    patch = (
        "@@ -1,6 +1,5 @@ def kernel(\n"
        "     batch_size_per_iter: int,\n"
        "+    v_batch_size_per_iter: int,\n"
        "     head_nums_per_iter: int,\n"
        "-    v_batch_size_per_iter: int,\n"
        "-    batch_size_per_vec: int,\n"
        " ):"
    )
    d = one_file_dossier("pkg/kernel.py", patch)
    assert not [e for e in d.edits if e.before == "batch_size_per_vec"]


def test_a_global_assigned_in_a_function_is_no_new_constant() -> None:
    from conftest import one_file_dossier

    patch = (
        "@@ -10,3 +10,5 @@ def is_drafter_moe_model(config):\n"
        '     if "Eagle3" in config.architectures:\n'
        "         _IS_DRAFTER_MOE_MODEL = False\n"
        '+    if "Step3p5MTP" in config.architectures:\n'
        "+        _IS_DRAFTER_MOE_MODEL = False\n"
        "     return _IS_DRAFTER_MOE_MODEL"
    )
    d = one_file_dossier("pkg/utils.py", patch)
    assert not [s for s in d.symbols if s.name == "_IS_DRAFTER_MOE_MODEL"]
    assert [s.name for s in d.symbols] == ["is_drafter_moe_model"]


def test_a_kernel_rewrite_is_owned_by_the_definition_its_hunk_shows_or_none() -> None:
    from conftest import one_file_dossier

    patch = (
        "@@ -10,3 +10,3 @@ public:\n"
        "     void Init(GM_ADDR x) {\n"
        "-        pipe_->InitBuffer(gamaKInQueue_, BUFFER_NUM, size);\n"
        "+        pipe_->InitBuffer(gamaKInBuf_, size);\n"
        "     }\n"
        "@@ -40,3 +40,3 @@ public:\n"
        "     int base = 0;\n"
        "-    auto rows = tilingData->stage2RowFactor;\n"
        "+    auto rows = curRowFactor;\n"
        "     return;"
    )
    d = one_file_dossier("csrc/kernel/gdr_v310.h", patch)
    owners = {e.after: e.symbol for e in d.edits}
    assert owners.get("curRowFactor", "") is None  # no definition shown above it in its hunk
    assert all(owner in (None, "Init") for owner in owners.values()), owners


def test_a_table_of_values_swapped_whole_pairs_no_rows_by_their_digits() -> None:
    # 64 is "similar" to 4 and 128 to 1; the list was replaced, not edited row by row
    swapped = parse_patch(
        "pkg/kernel.py",
        "@@ -1,5 +1,5 @@\n configs = [\n"
        '-    triton.Config({"BLOCK": 64}),\n-    triton.Config({"BLOCK": 128}),\n'
        '-    triton.Config({"BLOCK": 256}),\n'
        '+    triton.Config({"BLOCK_SIZE": 1}),\n+    triton.Config({"BLOCK_SIZE": 2}),\n'
        '+    triton.Config({"BLOCK_SIZE": 4}),\n ]',
    )
    context = Context(title="t", body="", python_carries=True)
    assert rank([(_fact("pkg/kernel.py"), swapped)], [], [], context)[1] == []
    # the same rows with their values kept: a key renamed, row by row
    renamed = parse_patch(
        "pkg/kernel.py",
        "@@ -1,4 +1,4 @@\n configs = [\n"
        '-    triton.Config({"BLOCK": 64}),\n-    triton.Config({"BLOCK": 128}),\n'
        '+    triton.Config({"BLOCK_SIZE": 64}),\n+    triton.Config({"BLOCK_SIZE": 128}),\n ]',
    )
    edits = rank([(_fact("pkg/kernel.py"), renamed)], [], [], context)[1]
    assert [(e.before, e.after) for e in edits][:1] == [
        ('triton.Config({"BLOCK": 64})', 'triton.Config({"BLOCK_SIZE": 64})')
    ]


def test_an_event_named_in_an_annotation_is_no_synchronisation() -> None:
    from prdigest.analyze.design import detect

    annotated = parse_patch(
        "pkg/meta.py",
        "@@ -1,1 +1,3 @@\n class ReqMeta:\n"
        "+    def __init__(self, current_event: torch.npu.Event | None = None):\n"
        "+        self.current_event = current_event",
    )
    assert [x.pattern for x in detect([(_fact("pkg/meta.py"), annotated)])] == []
    made = parse_patch(
        "pkg/meta.py", "@@ -1,1 +1,2 @@\n def save(meta):\n+    meta.event = torch.npu.Event()"
    )
    assert [x.pattern for x in detect([(_fact("pkg/meta.py"), made)])] == ["event"]


def test_arguments_wrapped_one_per_line_are_no_edit_of_the_line_that_held_them() -> None:
    wrapped = parse_patch(
        "pkg/worker.py",
        "@@ -1,3 +1,6 @@\n     for key in db.process(\n"
        "-        token_len, request.block_hashes, mask_num\n"
        "+        token_len,\n+        request.block_hashes,\n+        block_ids,\n"
        "+        mask_num,\n     ):",
    )
    context = Context(title="t", body="", python_carries=True)
    assert rank([(_fact("pkg/worker.py"), wrapped)], [], [], context)[1] == []


def test_no_edit_is_stitched_from_two_blocks_that_each_replace_their_own_lines() -> None:
    patch = parse_patch(
        "pkg/attn.py",
        "@@ -1,3 +1,3 @@\n     out = attn(\n-        atten_mask=attn_mask,\n"
        "+        atten_mask=update_attn_mask,\n     )\n"
        "@@ -20,3 +20,3 @@\n     out = attn(\n-        atten_mask=attn_metadata.attn_mask,\n"
        "+        atten_mask=attn_mask,\n     )",
    )
    context = Context(title="t", body="", python_carries=True)
    edits = rank([(_fact("pkg/attn.py"), patch)], [], [], context)[1]
    pairs = [(e.before, e.after) for e in edits]
    assert ("atten_mask=attn_metadata.attn_mask", "atten_mask=update_attn_mask") not in pairs


def test_a_literal_given_a_name_of_its_own_value_is_no_edit() -> None:
    patch = parse_patch(
        "pkg/ctx.py",
        "@@ -1,3 +1,5 @@\n import os\n+_TOKENS_LIMIT = 512\n+\n def cap(n):\n"
        "-    return min(n, 512)\n+    return min(n, _TOKENS_LIMIT)",
    )
    context = Context(title="t", body="", python_carries=True)
    assert rank([(_fact("pkg/ctx.py"), patch)], [], [], context)[1] == []
    changed = parse_patch(
        "pkg/ctx.py",
        "@@ -1,3 +1,5 @@\n import os\n+_TOKENS_LIMIT = 4096\n+\n def cap(n):\n"
        "-    return min(n, 512)\n+    return min(n, _TOKENS_LIMIT)",
    )
    edits = rank([(_fact("pkg/ctx.py"), changed)], [], [], context)[1]
    assert [(e.before, e.after) for e in edits] == [("512", "_TOKENS_LIMIT")]


def test_a_type_annotation_added_to_an_assignment_is_no_edit() -> None:
    patch = parse_patch(
        "pkg/groups.py",
        "@@ -10,3 +10,3 @@ class GroupCoordinatorPatch:\n"
        "     def __init__(self):\n"
        "-        self._acquired_hccl_keys = []\n"
        "-        self.block_size = 16\n"
        "+        self._acquired_hccl_keys: list[HcclPgKey] = []\n"
        "+        self.block_size = config.block_size\n",
    )
    _ranked, edits = rank(
        [(_fact("pkg/groups.py"), patch)],
        [_symbol("__init__", "pkg/groups.py", 2)],
        [],
        Context(title="t", body="", python_carries=True),
    )
    assert [(e.before, e.after) for e in edits] == [("16", "config.block_size")]


def test_the_kernel_carries_a_change_whose_python_side_is_a_binding_call() -> None:
    from prdigest.core.models import python_carries

    def files(python: int, cpp: int) -> list[FileFact]:
        made = [
            _fact("pkg/model.py").model_copy(update={"additions": python, "deletions": 0}),
            _fact("csrc/binding.cpp", language="cpp").model_copy(
                update={"additions": cpp, "deletions": 0}
            ),
        ]
        return [f for f in made if f.additions]

    assert not python_carries(files(2, 73))  # an op swapped in Python, its dispatch in C++
    assert python_carries(files(30, 100))
    assert python_carries(files(156, 1138))  # a Python proposer of its own beside the kernel
    assert python_carries(files(3, 0))
    assert not python_carries(files(0, 40))


def test_a_renamed_local_comes_after_an_edit_that_uses_another_value() -> None:
    patch = parse_patch(
        "pkg/sched.py",
        "@@ -10,2 +10,2 @@ class Scheduler:\n"
        "     def schedule(self):\n"
        "-        total = count_blocks(skipped_reqs)\n"
        "+        total = count_blocks(step_skipped_reqs)\n"
        "@@ -30,3 +30,3 @@ class Scheduler:\n"
        "     def pad(self, num_reqs):\n"
        "-        width = self.fit(num_reqs)\n"
        "+        width = self.fit(num_reqs_padded)\n"
        "         self.log_count(num_reqs)\n",
    )
    _ranked, edits = rank(
        [(_fact("pkg/sched.py"), patch)],
        [_symbol("schedule", "pkg/sched.py", 2), _symbol("pad", "pkg/sched.py", 2)],
        [],
        Context(title="t", body="", python_carries=True),
    )
    assert [(e.before, e.after) for e in edits] == [
        ("num_reqs", "num_reqs_padded"),  # `num_reqs` is still used: another value is passed
        ("skipped_reqs", "step_skipped_reqs"),  # the old name is gone everywhere: a rename
    ]


def test_an_added_line_is_the_edit_of_the_removed_line_most_like_it() -> None:
    patch = parse_patch(
        "pkg/runner.py",
        "@@ -845,5 +843,3 @@ class NPUModelRunner310:\n"
        "     def build_specs(self, kv_cache_spec, kv_cache_group):\n"
        "-            if isinstance(kv_cache_group.kv_cache_spec, EncoderOnlyAttentionSpec):\n"
        "-                continue\n"
        "-            if isinstance(kv_cache_group.kv_cache_spec, MambaSpec):\n"
        "+            if isinstance(kv_cache_spec, MambaSpec):\n"
        "                 self.mamba_groups.append(kv_cache_group)\n",
    )
    _ranked, edits = rank(
        [(_fact("pkg/runner.py"), patch)],
        [_symbol("build_specs", "pkg/runner.py", 4)],
        [],
        Context(title="t", body="", python_carries=True),
    )
    pairs = [(e.before, e.after) for e in edits]
    assert pairs == [
        (
            "isinstance(kv_cache_group.kv_cache_spec, MambaSpec)",
            "isinstance(kv_cache_spec, MambaSpec)",
        )
    ]


def test_a_line_moved_into_another_function_and_changed_is_no_edit_made_there() -> None:
    # `_load_a5` is deleted; its lines reappear, edited, in a new branch of `_load_v3`
    patch = parse_patch(
        "pkg/sfa.py",
        "@@ -10,2 +10,5 @@ class SFAImpl:\n"
        "     def _load_v3(self):\n"
        "         q_scale = self.proj.weight_scale[: self.rank]\n"
        "+        if self.mxfp8:\n"
        "+            w_scale = self.proj.weight_scale\n"
        "+            self.weight_dq_scale = w_scale[: self.q_lora_rank, ...]\n"
        "@@ -40,5 +43,2 @@ class SFAImpl:\n"
        "     def _after(self):\n"
        "         return None\n"
        "-    def _load_a5(self):\n"
        "-        weight_scale = self.proj.weight_scale\n"
        "-        self.weight_dq_scale = weight_scale[: self.q_lora_rank, ...]\n",
    )
    assert patch.error is None
    _ranked, edits = rank(
        [(_fact("pkg/sfa.py"), patch)],
        [_symbol("_load_v3", "pkg/sfa.py", 3), _symbol("_load_a5", "pkg/sfa.py", 3)],
        [],
        Context(title="t", body="", python_carries=True),
    )
    assert [(e.symbol, e.before, e.after) for e in edits] == []


def test_an_attribute_made_a_local_of_the_same_value_is_no_edit_where_it_is_read() -> None:
    patch = parse_patch(
        "pkg/runner.py",
        "@@ -10,4 +10,4 @@ class Runner:\n"
        "     def prepare(self, reqs):\n"
        "-        self.batch = InputBatch(reqs)\n"
        "+        batch = InputBatch(reqs)\n"
        "-        width = self.fit(num_reqs)\n"
        "+        width = self.fit(num_reqs_padded)\n"
        "-        return self.batch\n"
        "+        return batch\n",
    )
    _ranked, edits = rank(
        [(_fact("pkg/runner.py"), patch)],
        [_symbol("prepare", "pkg/runner.py", 6)],
        [],
        Context(title="t", body="", python_carries=True),
    )
    assert [(e.before, e.after) for e in edits] == [("num_reqs", "num_reqs_padded")]


def test_a_local_that_holds_another_value_than_the_attribute_is_an_edit() -> None:
    # `hidden_size` is computed anew (by version), not the attribute moved into a local
    patch = parse_patch(
        "pkg/attn.py",
        "@@ -10,2 +10,3 @@ class Attention:\n"
        "     def forward(self, states):\n"
        "+        hidden_size = self.config.hidden_size if new_version() else self.hidden_size\n"
        "-        q = states.split(self.hidden_size, dim=-1)\n"
        "+        q = states.split(hidden_size, dim=-1)\n",
    )
    _ranked, edits = rank(
        [(_fact("pkg/attn.py"), patch)],
        [_symbol("forward", "pkg/attn.py", 3)],
        [],
        Context(title="t", body="", python_carries=True),
    )
    assert [(e.before, e.after) for e in edits] == [
        ("states.split(self.hidden_size, dim=-1)", "states.split(hidden_size, dim=-1)")
    ]


def test_a_renamed_function_called_under_its_new_name_is_no_edit() -> None:
    patch = parse_patch(
        "pkg/compat.py",
        "@@ -5,1 +5,1 @@\n"
        "-def _patch_v023_methods(vision):\n"
        "+def _patch_v024_methods(vision):\n"
        "@@ -20,3 +20,3 @@ def install():\n"
        "     vision = load()\n"
        "-    _patch_v023_methods(vision)\n"
        "+    _patch_v024_methods(vision)\n"
        "-    width = fit(num_reqs)\n"
        "+    width = fit(num_reqs_padded)\n",
    )
    renamed = _symbol("_patch_v024_methods", "pkg/compat.py", 2).model_copy(
        update={"renamed_from": "_patch_v023_methods"}
    )
    _ranked, edits = rank(
        [(_fact("pkg/compat.py"), patch)],
        [renamed, _symbol("install", "pkg/compat.py", 4)],
        [],
        Context(title="t", body="", python_carries=True),
    )
    assert [(e.before, e.after) for e in edits] == [("num_reqs", "num_reqs_padded")]


def test_events_a_test_makes_but_never_sets_or_waits_on_order_nothing() -> None:
    from prdigest.analyze.design import detect

    test = _fact("tests/test_pool.py", Role.TEST)
    made = "@@ -1,1 +1,3 @@\n def test_send(self):\n+    done = threading.Event()\n+    run(done)"
    assert detect([(test, parse_patch(test.path, made))]) == []
    waited = made + "\n+    assert done.wait(timeout=30)"
    waited = waited.replace("+1,3", "+1,4")
    assert [x.pattern for x in detect([(test, parse_patch(test.path, waited))])] == ["event"]


def test_a_method_of_a_deleted_class_is_no_name_of_its_own() -> None:
    patch = parse_patch(
        "pkg/lora.py",
        "@@ -1,4 +1,0 @@\n"
        "-class AscendRowParallelLinearWithLoRA(RowParallelLinearWithLoRA):\n"
        "-    @classmethod\n"
        "-    def can_replace_layer(cls, source_layer):\n"
        "-        return type(source_layer) is AscendRowParallelLinear\n",
    )
    gone = _symbol("AscendRowParallelLinearWithLoRA", "pkg/lora.py", 4, "removed").model_copy(
        update={"kind": "class"}
    )
    method = _symbol("can_replace_layer", "pkg/lora.py", 3, "removed").model_copy(
        update={"kind": "method", "parent": "AscendRowParallelLinearWithLoRA"}
    )
    ranked, _edits = rank(
        [(_fact("pkg/lora.py"), patch)],
        [gone, method],
        [],
        Context(title="t", body="", python_carries=True),
    )
    assert [x.name for x in ranked if x.kind == "symbol"] == ["AscendRowParallelLinearWithLoRA"]


def test_a_branch_moved_under_another_as_elif_is_no_edit_of_a_new_branch() -> None:
    # `if olora_tp_enable():` moved into a helper as an `elif`; the `if oproj_tp_enable():`
    # added elsewhere in the function is new code, not the old branch edited
    patch = parse_patch(
        "pkg/attn.py",
        "@@ -10,2 +10,4 @@ class Impl:\n"
        "         x = self.pre(x)\n"
        "+        if oproj_tp_enable():\n"
        "+            return self._o_proj(x)\n"
        "         y = self.norm(x)\n"
        "@@ -40,4 +43,1 @@ class Impl:\n"
        "         z = y + 1\n"
        "-        if olora_tp_enable():\n"
        "-            z = self.wo(z)\n"
        "-            z = z * 2\n"
        "@@ -60,1 +60,4 @@ class Impl:\n"
        "     def other(self):\n"
        "+        if dense():\n"
        "+            pass\n"
        "+        elif olora_tp_enable():\n",
    )
    _ranked, edits = rank(
        [(_fact("pkg/attn.py"), patch)],
        [_symbol("forward", "pkg/attn.py", 5)],
        [],
        Context(title="t", body="", python_carries=True),
    )
    assert [(e.before, e.after) for e in edits] == []


def test_an_attribute_asserted_to_be_one_of_a_few_values_fails_closed() -> None:
    from prdigest.analyze.design import detect

    config = parse_patch(
        "pkg/config.py",
        "@@ -1,1 +1,3 @@\n class AscendConfig:\n"
        '+        assert self.enable_fused_mc2 in (0, 1), f"got {self.enable_fused_mc2}"\n'
        "+        assert hidden.dtype in [torch.float16, torch.bfloat16]",
    )
    found = detect([(_fact("pkg/config.py"), config)])
    assert [(x.pattern, x.label) for x in found] == [
        ("fail_closed", "assert self.enable_fused_mc2 in (0, 1)")
    ]


def test_no_edit_whose_side_is_cut_short_at_a_comma() -> None:
    # two changes in one line: the new side stops at the first, the old reaches the second
    assert (
        edit_of(
            "    q, k = states.split([self.hidden_size, self.hidden_size], dim=-1)",
            "    q, k = states.split([hidden_size, hidden_size], dim=-1)",
        )
        is None
    )
    assert edit_of("    grid = (NT, 1, B * H)", "    grid = (num_core, B * H)") == (
        "NT, 1",
        "num_core",
    )


def test_a_parameter_whose_type_hint_alone_changed_is_no_edit() -> None:
    assert (
        edit_of(
            "        attn_metadata: AscendDSAMetadata,", "        attn_metadata: DSAMetadataList,"
        )
        is None
    )
    assert edit_of("    block_size: int = 16", "    block_size: int = 128") is not None


def test_a_span_whose_brackets_close_before_they_open_is_cut_where_the_lines_part() -> None:
    assert edit_of(
        "    vec = extract_slice(a, (i, 0), (1, 16 * N_BLOCKS), (16 * N_BLOCKS, 1))",
        "    vec = extract_slice(a, (i, 0), (1, 16 * N_BLOCKS), (EXTRACT_SLICE_STRIDE_1, 1))",
    ) == ("16 * N_BLOCKS", "EXTRACT_SLICE_STRIDE_1")


def test_python_builtins_the_tests_use_are_no_names_of_the_change() -> None:
    source = parse_patch(
        "pkg/core.py",
        "@@ -1,2 +1,4 @@\n def load_table(path):\n+    if not path_is_valid(path):\n"
        "+        raise ValueError(path)\n     return read_rows(path)",
    )
    test = parse_patch(
        "tests/test_core.py",
        "@@ -0,0 +1,3 @@\n+def test_load_table():\n+    with pytest.raises(ValueError):\n"
        "+        load_table(path_is_valid)",
    )
    ranked, _edits = rank(
        [(_fact("pkg/core.py"), source), (_fact("tests/test_core.py", Role.TEST), test)],
        [_symbol("load_table", "pkg/core.py", 1)],
        [],
        Context(title="Check the table path", body="", python_carries=True),
    )
    names = {x.name: x.reasons for x in ranked}
    assert "ValueError" not in names
    assert "tested" in names["path_is_valid"]  # a name of the project's own, used by the test


def test_a_raise_without_a_condition_is_placed_in_its_function_or_class() -> None:
    from prdigest.analyze.design import detect
    from prdigest.core.models import DesignFact
    from prdigest.write.template.phrases import Cited, Phrases
    from prdigest.write.template.why import design_text

    # the assert sits in a method git shows only by its class (the hunk header)
    config = parse_patch(
        "pkg/config.py",
        "@@ -166,2 +166,3 @@ class AscendConfig:\n"
        "             ascend_envs.ENABLE_FUSED_MC2,\n"
        "         )\n"
        '+        assert self.enable_fused_mc2 in (0, 1), f"got {self.enable_fused_mc2}"',
    )
    method = parse_patch(
        "pkg/table.py",
        "@@ -1,2 +1,3 @@\n def load_table(path):\n+    raise ValueError(path)\n     return path",
    )
    top = parse_patch("pkg/top.py", "@@ -1,1 +1,2 @@\n import os\n+raise RuntimeError('npu')")
    dunder = parse_patch(
        "pkg/sched.py",
        "@@ -1,3 +1,5 @@\n class SchedulerConfig:\n     def __init__(self, wait_ms):\n"
        "+        if wait_ms is None:\n+            raise ValueError(wait_ms)\n"
        "         self.wait_ms = wait_ms",
    )
    found = detect([(_fact(p.path), p) for p in (config, method, top)])
    found += detect([(_fact(dunder.path), dunder)])  # a pattern is found a few times per PR
    scopes = {x.path: x.scope for x in found if isinstance(x, DesignFact)}
    assert scopes == {
        "pkg/config.py": "AscendConfig",
        "pkg/table.py": "load_table",
        "pkg/top.py": "",  # at module level it is said without a place
        "pkg/sched.py": "SchedulerConfig",  # `__init__` says less than its class
    }
    said = design_text(
        next(x for x in found if x.scope == "AscendConfig"), Phrases("zh", 1), Cited()
    )
    assert said.startswith("`AscendConfig` ") and "`assert self.enable_fused_mc2 in (0, 1)`" in said


def _edit_pairs(path: str, patch: str, language: str = "python") -> list[tuple[str, str]]:
    parsed = parse_patch(path, patch)
    assert parsed.error is None
    context = Context(title="t", body="", python_carries=language == "python")
    edits = rank([(_fact(path, language=language), parsed)], [], [], context)[1]
    return [(e.before, e.after) for e in edits]


def test_the_end_of_one_function_aligned_with_a_new_one_is_no_edit() -> None:
    # git aligns `store_mask`'s old tail with the new helper above the re-added `store_mask`
    patch = (
        "@@ -10,5 +10,8 @@ class Coordinator:\n"
        "-    def store_mask(self, chunks):\n"
        "+    def _reachable_masks(self, chunks):\n"
        "         masks = []\n"
        "         for chunk in chunks:\n"
        "-            masks.append(chunk.mask)\n"
        "-        return tuple(masks)\n"
        "+            masks.append((chunk.size, chunk.mask))\n"
        "+        return masks\n"
        "+\n"
        "+    def store_mask(self, chunks):\n"
        "+        return tuple(mask for _size, mask in self._reachable_masks(chunks))"
    )
    assert ("tuple(masks)", "masks") not in _edit_pairs("pkg/coordinator.py", patch)
    # a function renamed where it stands keeps its edits
    renamed = (
        "@@ -10,2 +10,2 @@ class Coordinator:\n"
        "-    def store_masks(self, chunks):\n"
        "+    def store_mask(self, chunks):\n"
        "-        return tuple(chunks.masks)\n"
        "+        return list(chunks.masks)"
    )
    assert _edit_pairs("pkg/coordinator.py", renamed) == [("tuple", "list")]


def test_a_span_another_new_line_still_says_was_not_replaced() -> None:
    # `normResUb` stays, on the line above; `originSliceInfo` is a parameter added beside it
    patch = (
        "@@ -1293,4 +1314,5 @@ void CompressorBlockVector<COMP>::Run() {\n"
        " template <typename COMP>\n"
        "-__aicore__ inline void CompressorBlockVectorPerf<COMP>::CalRope(const LocalTensor<X_T> &outputUb,\n"
        "-                                                                const LocalTensor<T> &normResUb, uint32_t dealRowCount)\n"
        "+__aicore__ inline void CompressorBlockVector<COMP>::CalRope(const LocalTensor<X_T> &outputUb,\n"
        "+                                                            const LocalTensor<T> &normResUb,\n"
        "+                                                            const Vec2SliceInfo &originSliceInfo, uint32_t dealRowCount)\n"
        " {"
    )  # fmt: skip
    pairs = _edit_pairs("csrc/compressor_block_vec.h", patch, language="cpp")
    assert not any("normResUb" in before for before, _after in pairs)


def test_an_expression_hoisted_into_the_new_name_is_still_its_edit() -> None:
    patch = (
        "@@ -5,2 +5,3 @@ def transfer(self, prompt_len):\n"
        "-    blocks = math.ceil(prompt_len / self.block_size)\n"
        "+    group_token_len = prompt_len // self.ratio\n"
        "+    blocks = math.ceil(group_token_len / self.block_size)\n"
        "     return blocks"
    )
    assert _edit_pairs("pkg/transfer.py", patch) == [("prompt_len", "group_token_len")]
    # a longer name that holds the old one is no sign that it stayed
    inside = (
        "@@ -5,2 +5,3 @@ def patch_all():\n"
        "-    utils.memcpy = batch_memcpy\n"
        "+    utils.memcpy = batch_memcpy_fast\n"
        "+    register(_can_launch_batch_memcpy_fast())\n"
        " x = 1"
    )
    assert _edit_pairs("pkg/patching.py", inside) == [("batch_memcpy", "batch_memcpy_fast")]


def test_a_name_used_again_in_other_new_code_was_still_replaced_where_the_edit_is() -> None:
    patch = (
        "@@ -5,2 +5,4 @@ def blockwise(probs, draft_token_ids):\n"
        "-    scalar = probs[indices, draft_token_ids]\n"
        "+    valid_draft_mask = draft_token_ids != PLACEHOLDER_TOKEN_ID\n"
        "+    safe_draft_token_ids = draft_token_ids.masked_fill(~valid_draft_mask, 0)\n"
        "+    scalar = probs[indices, safe_draft_token_ids]\n"
        "     return scalar"
    )
    assert _edit_pairs("pkg/sampler.py", patch) == [("draft_token_ids", "safe_draft_token_ids")]


def test_lines_placed_only_in_their_class_are_no_edit_across_the_file() -> None:
    # the hunk headers name the class: the two lines may sit in two of its methods
    patch = (
        "@@ -509,4 +509,2 @@ class AscendAttentionBackendImpl(AttentionImpl):\n"
        "                     graph_params.update(param)\n"
        "-                    sparse_mode = 3\n"
        "-                    pre_tokens = SWA_INT_MAX\n"
        "                     next_tokens = 0\n"
        "@@ -940,2 +938,6 @@ class AscendAttentionBackendImpl(AttentionImpl):\n"
        "             )\n"
        "+        elif self.sliding_window is not None:\n"
        "+            out = torch_npu.npu_fused_infer_attention_score(\n"
        "+                query,\n"
        "+                sparse_mode=4,\n"
        "             return out"
    )
    assert _edit_pairs("pkg/attention_v1.py", patch) == []
    # near where the old line now stands, the edit is read as the class's
    near = patch.replace("@@ -940,2 +938,6 @@", "@@ -520,2 +518,6 @@")
    assert _edit_pairs("pkg/attention_v1.py", near) == [("sparse_mode = 3", "sparse_mode=4")]


def test_a_new_condition_around_existing_code_is_said_with_the_code_it_now_guards() -> None:
    from prdigest.analyze.design import guarded_code

    patch = parse_patch(
        "pkg/dsa.py",
        "@@ -10,5 +10,8 @@ def forward(self, q):\n"
        "         q = self.norm(q)\n"
        "-        topk = self.indexer(q)\n"
        "-        # select the blocks\n"
        "-        out = self.select(q, topk)\n"
        "+        if self.compress_ratio == 4:\n"
        "+            topk = self.indexer(q)\n"
        "+            # select the blocks\n"
        "+            out = self.select(q, topk)\n"
        "+        else:\n"
        "+            out = self.dense(q)\n"
        "         return out",
    )
    [found] = guarded_code([(_fact("pkg/dsa.py"), patch)], 1)
    assert (found.guard, found.scope) == ("self.compress_ratio == 4", "forward")
    from prdigest.write.template.phrases import Cited, Phrases
    from prdigest.write.template.why import design_text

    said = design_text(found, Phrases("zh", 1), Cited())
    assert said.startswith("`forward` ") and "`self.compress_ratio == 4`" in said and "执行" in said
    # one line of code under the new condition (a comment is none) is an edit, not a guard
    one = parse_patch(
        "pkg/dsa.py",
        "@@ -10,3 +10,4 @@ def forward(self, q):\n"
        "-        # select the blocks\n"
        "-        out = self.select(q)\n"
        "+        if self.compress_ratio == 4:\n"
        "+            # select the blocks\n"
        "+            out = self.select(q)\n"
        "         return out",
    )
    assert guarded_code([(_fact("pkg/dsa.py"), one)], 1) == []
    # code said again in the other branch runs either way
    both = parse_patch(
        "pkg/dsa.py",
        "@@ -10,3 +10,6 @@ def forward(self, q):\n"
        "-        topk = self.indexer(q)\n"
        "-        out = self.select(q, topk)\n"
        "+        if self.compress_ratio == 4:\n"
        "+            topk = self.indexer(q)\n"
        "+            out = self.select(q, topk)\n"
        "+        else:\n"
        "+            out = self.select(q, topk)\n"
        "         return out",
    )
    assert guarded_code([(_fact("pkg/dsa.py"), both)], 1) == []
    # a condition rewritten: the code ran under the removed `if` before
    rewritten = parse_patch(
        "pkg/store.py",
        "@@ -10,5 +10,4 @@ def setup(self):\n"
        "-        if self.config.protocol == 'ascend':\n"
        "-            if os.getenv('USE_FABRIC', '0') != '1':\n"
        "-                engine = get_engine(host)\n"
        "-                ret = store.setup(engine)\n"
        "+        if not self._use_fabric:\n"
        "+            engine = get_engine(host)\n"
        "+            ret = store.setup(engine)\n"
        "         return ret",
    )
    assert guarded_code([(_fact("pkg/store.py"), rewritten)], 1) == []


def test_two_kinds_of_statement_are_no_edit_of_one() -> None:
    # a helper call paired with the new `if` put in front of it, a return with an assignment
    assert (
        edit_of(
            "                        _raise_stream_resource_capture_error(exc)",
            "                    if _is_old_hdk_capture_error(exc):",
        )
        is None
    )
    assert edit_of("        return self.cache[key]", "        value = self.cache[key]") is None
    assert edit_of("        return self.cache[key]", "        return self.cache.get(key)") == (
        "self.cache[key]",
        "self.cache.get(key)",
    )


def test_a_conjunct_that_now_opens_its_condition_is_no_edit() -> None:
    assert (
        edit_of(
            "            and self.use_async_spec_decode", "            self.use_async_spec_decode"
        )
        is None
    )
    assert edit_of("        or mask is None", "        mask is None") is None


def test_the_same_value_under_a_new_local_name_is_no_edit() -> None:
    # the local renamed: the keyword argument passes what it passed before
    renamed = (
        "@@ -5,3 +5,4 @@ def propose(self, batch):\n"
        "-    num_query_per_req = self.num_speculative_tokens\n"
        "-    meta = build(batch, num_query_per_req=num_query_per_req)\n"
        "+    # one block of drafts per request: v2 derives num_query_per_req from it\n"
        "+    block_size = self.num_speculative_tokens\n"
        "+    meta = build(batch, num_query_per_req=block_size)\n"
        "     return meta"
    )
    pairs = _edit_pairs("pkg/proposer.py", renamed)
    assert ("num_query_per_req=num_query_per_req", "num_query_per_req=block_size") not in pairs
    # a value put in a local first, then passed under the local's name
    hoisted = (
        "@@ -5,2 +5,3 @@ def load(self, model):\n"
        "-    self.loader.load(model=model, device=self.device)\n"
        "+    elastic_model = model\n"
        "+    self.loader.load(model=elastic_model, device=self.device)\n"
        "     return model"
    )
    assert _edit_pairs("pkg/loader.py", hoisted) == []
    # a local given another value under an `if` is another value: still an edit
    fallback = (
        "@@ -5,2 +5,5 @@ def load(self, model):\n"
        "-    self.loader.load(model=model, device=self.device)\n"
        "+    elastic_model = self.elastic(model)\n"
        "+    if elastic_model is None:\n"
        "+        elastic_model = model\n"
        "+    self.loader.load(model=elastic_model, device=self.device)\n"
        "     return model"
    )
    assert ("model=model", "model=elastic_model") in _edit_pairs("pkg/loader.py", fallback)


_SPLIT_LOCAL = r"""
import json
from prdigest.analyze import analyze
from prdigest.core.presets import load_preset
from prdigest.core.records import parse_record
patch = (
    "@@ -1,7 +1,7 @@ def kernel(a, b, total):\n"
    "-    mblk = tl.arange(0, 8)\n"
    "-    nblk = tl.arange(0, a)\n"
    "-    idx = mblk[:, None] * total + nblk[None, :]\n"
    "+    rows = tl.arange(0, 8)\n"
    "+    qk_cols = tl.arange(0, a)\n"
    "+    idx = rows[:, None] * total + qk_cols[None, :]\n"
    "     tl.store(out + idx, x)\n"
    "-    nblk = tl.arange(a, b)\n"
    "-    idx = mblk[:, None] * total + nblk[None, :]\n"
    "+    v_cols = tl.arange(a, b)\n"
    "+    idx = rows[:, None] * total + v_cols[None, :]\n"
    "     tl.store(out + idx, y)\n"
)
change = {"path": "pkg/k.py", "status": "modified", "additions": 6, "deletions": 6, "patch": patch}
record = {"schema": "prdigest.pr/v1", "repo": "o/r", "number": 1, "title": "Split the columns",
          "author": "a", "merged_at": "2026-07-01T00:00:00Z", "files": [change]}
d = analyze(parse_record(record), load_preset("o/r"))
print(json.dumps([(e.before, e.after) for e in d.edits]))
"""


def test_a_local_split_into_two_names_gives_the_same_edits_under_any_string_hashing() -> None:
    # `nblk` becomes `qk_cols` in one block and `v_cols` in the other: a dict built from the
    # set of renames kept whichever came last in hash order, so a re-run named another edit
    import json
    import os
    import subprocess
    import sys

    said = set()
    for seed in range(6):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        run = subprocess.run(
            [sys.executable, "-c", _SPLIT_LOCAL], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        said.add(run.stdout)
    assert len(said) == 1
    # neither block's rewrite is a plain rename: both are said
    assert json.loads(said.pop()) == [
        ["mblk[:, None] * total + nblk", "rows[:, None] * total + qk_cols"],
        ["mblk[:, None] * total + nblk", "rows[:, None] * total + v_cols"],
    ]


def test_a_hoisted_local_or_a_renamed_loop_variable_is_no_edit_to_read() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    hoisted = make_pr(
        files=[
            file_patch(
                "pkg/attn.py",
                [
                    "        metadata = attn_metadata[draft_step][key]",
                    "        seq_lens = metadata.seq_lens_list",
                    "        tables = metadata.block_tables",
                    "        limit = compute_limit(seq_lens, window)",
                ],
                [
                    "        seq_lens = attn_metadata[draft_step][key].seq_lens_list",
                    "        tables = attn_metadata[draft_step][key].block_tables",
                    "        limit = compute_limit(seq_lens)",
                ],
            )
        ]
    )
    edits = [(e.before, e.after) for e in analyze(hoisted, load_preset(hoisted.repo)).edits]
    # the same attributes read through the new local: only the call's new argument is an edit
    assert edits == [("compute_limit(seq_lens)", "compute_limit(seq_lens, window)")]
    looped = make_pr(
        files=[
            file_patch(
                "pkg/pool.py",
                [
                    "        for layer_key in keys:",
                    "            store.put(layer_key.to_string(), size)",
                    "            done.add(layer_key.to_string())",
                ],
                [
                    "        for item in keys:",
                    "            store.put(item.to_string(), size)",
                    "            done.add(item.to_string())",
                ],
            )
        ]
    )
    assert analyze(looped, load_preset(looped.repo)).edits == ()

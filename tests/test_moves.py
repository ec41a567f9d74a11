"""Renames and moves of definitions and files (analyze.moves) and what they change in facts."""

from __future__ import annotations

from prdigest.analyze.code import parametrize_cases
from prdigest.analyze.moves import detect, similarity
from prdigest.analyze.patches import parse_patch
from prdigest.core.models import FileFact, Provenance, Role


def _fact(path: str, status: str = "modified", language: str | None = "python") -> FileFact:
    return FileFact(
        id="f1",
        provenance=Provenance(kind="file", ref=path),
        path=path,
        status=status,
        role=Role.SOURCE,
        language=language,
    )


def _whole(sign: str, lines: list[str]) -> str:
    count = len(lines)
    head = f"@@ -1,{count} +0,0 @@" if sign == "-" else f"@@ -0,0 +1,{count} @@"
    return head + "\n" + "\n".join(sign + x for x in lines)


BODY = [
    "def load(path):",
    "    with open(path) as handle:",
    "        data = handle.read()",
    "    return parse(data)",
]


def test_similarity_is_the_dice_coefficient_of_line_multisets() -> None:
    assert similarity(["a", "b"], ["b", "a"]) == 1.0
    assert similarity(["a", "b"], ["a", "c"]) == 0.5
    assert similarity(["a"], []) == 0.0


def test_a_function_moved_to_another_file_is_a_move() -> None:
    old = parse_patch("a.py", _whole("-", BODY))
    new = parse_patch("b.py", _whole("+", BODY))
    moves = detect([(_fact("a.py", "removed"), old), (_fact("b.py", "added"), new)])
    origin = moves.origin("b.py", None, "load")
    assert origin is not None and (origin.path, origin.name) == ("a.py", "load")
    assert moves.replaced("a.py", "load")
    assert moves.files == {"b.py": "a.py"}  # the whole text moved too


def test_a_renamed_function_with_the_same_body_is_a_rename() -> None:
    patch = "@@ -1,4 +1,4 @@\n-def load(path):\n+def load_config(path):\n" + "\n".join(
        " " + x for x in BODY[1:]
    )
    moves = detect([(_fact("a.py"), parse_patch("a.py", patch))])
    origin = moves.origin("a.py", None, "load_config")
    assert origin is not None and origin.name == "load"


def test_a_method_moved_and_renamed_without_its_docstring_is_a_rename_and_rework() -> None:
    # a wrapped signature closes at the def's indentation; the docstring went on the way
    old = [
        "class Proposer:",
        "    def _split_input(self, tokens, ids):",
        '        """Split the prefill input.',
        "",
        "        Pads to a multiple of the world size first.",
        '        """',
        *[f"        step_{i} = run(tokens, ids, {i})" for i in range(6)],
        "        return step_5",
    ]
    new = [
        "class Manager:",
        "    def _split_prefill_input(",
        "        self,",
        "        tokens,",
        "        ids,",
        "    ) -> tuple[int, int]:",
        *[f"        step_{i} = run(tokens, ids, {i})" for i in range(5)],
        "        step_5 = run(tokens, ids, 5, world=self.world_size)",
        "        return step_5",
    ]
    moves = detect(
        [
            (_fact("proposer.py", "removed"), parse_patch("proposer.py", _whole("-", old))),
            (_fact("manager.py", "added"), parse_patch("manager.py", _whole("+", new))),
        ]
    )
    origin = moves.origin("manager.py", "Manager", "_split_prefill_input")
    assert origin is not None and (origin.path, origin.name) == ("proposer.py", "_split_input")
    assert origin.alike < 0.9  # one line edited on the way: said as rewritten too


def test_the_most_alike_removed_definition_is_the_rename_not_the_first_seen() -> None:
    helper = ["def cpu_top_k(logits, k, p):", *[f"    a{i} = f(logits, {i})" for i in range(4)]]
    helper.append("    return a3")
    kept = ["def apply_ascendc(logits, k, p):", *[f"    a{i} = f(logits, {i})" for i in range(5)]]
    kept.append("    return a3")
    renamed = ["def apply_torch_npu(logits, k, p):", *kept[1:]]
    moves = detect(
        [
            (_fact("tests/ref.py", "removed"), parse_patch("tests/ref.py", _whole("-", helper))),
            (_fact("sampler.py", "removed"), parse_patch("sampler.py", _whole("-", kept))),
            (_fact("sampler2.py", "added"), parse_patch("sampler2.py", _whole("+", renamed))),
        ]
    )
    origin = moves.origin("sampler2.py", None, "apply_torch_npu")
    assert origin is not None and origin.name == "apply_ascendc"


def test_a_rename_stays_in_its_class_when_a_subclass_gains_the_same_name() -> None:
    body = [f"        x{i} = run(q, k, {i})" for i in range(4)]
    old = ["class Base:", "    def execute_attention(self, q, k):", *body]
    new = [
        "class Base:", "    def _execute_attention(self, q, k):", *body,
        "class A5(Base):", "    def _execute_attention(self, q, k):", *body,
    ]  # fmt: skip
    patch = "@@ -1,6 +1,12 @@\n" + "\n".join(
        [" " + old[0], "-" + old[1], "+" + new[1], *(" " + x for x in body)]
        + ["+" + x for x in new[6:]]
    )
    moves = detect([(_fact("ops.py"), parse_patch("ops.py", patch))])
    assert moves.origin("ops.py", "Base", "_execute_attention", exact=True) is not None
    assert moves.origin("ops.py", "A5", "_execute_attention", exact=True) is None
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import make_pr

    change = {"path": "vllm/ops.py", "additions": 12, "deletions": 1, "patch": patch}
    pr = make_pr(files=[change])
    renamed = {
        (x.parent, x.name): x.renamed_from
        for x in analyze(pr, load_preset(pr.repo)).symbols
        if x.name == "_execute_attention"
    }
    assert renamed == {
        ("Base", "_execute_attention"): "execute_attention",
        ("A5", "_execute_attention"): None,
    }


def test_another_body_under_another_name_is_no_rename() -> None:
    other = [
        "def store(path, data):",
        "    with open(path, 'w') as handle:",
        "        handle.write(data)",
    ]
    old = parse_patch("a.py", _whole("-", BODY))
    new = parse_patch("b.py", _whole("+", other))
    moves = detect([(_fact("a.py", "removed"), old), (_fact("b.py", "added"), new)])
    assert not moves.added and not moves.files


def test_other_languages_move_by_name() -> None:
    moves = detect(
        [],
        [
            ("csrc/a.h", "Init", "function", None, "removed"),
            ("csrc/b.h", "Init", "function", None, "added"),
        ],
    )
    assert moves.origin("csrc/b.h", None, "Init") is not None


def test_parametrize_cases_are_counted_and_stacked() -> None:
    lines = [
        '@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])',
        '@pytest.mark.parametrize("n", [1, 2, 3])',
        "def test_a(dtype, n):",
        "    pass",
        '@pytest.mark.parametrize("x", [1])',
        "def test_b(x):",
        "    pass",
    ]
    assert parametrize_cases(lines[:4]) == 6
    assert parametrize_cases(lines[4:]) == 1
    assert parametrize_cases(lines) is None  # 6 and 1: no count is true of both tests
    # one test's values come from a name: its count is unknown, so no count is said
    named = ['@pytest.mark.parametrize("pad", PADDINGS)', "def test_a(pad): ...", *lines[:4]]
    assert parametrize_cases(named) is None
    same = [*lines[:4], *lines[:2], "def test_c(dtype, n): ..."]
    assert parametrize_cases(same) == 6
    # two decorators edited above two the PR left alone: the product of the edited two is no
    # count of the test's cases; an untouched parametrised test counts for nothing
    edited = [
        '@pytest.mark.parametrize("has_bias", [False, True])',
        '@pytest.mark.parametrize("dim", [2048, 4096, 8192])',
        '@pytest.mark.parametrize("batch", [4, 8, 16, 32, 64])',
        "def test_conv(has_bias, dim, batch): ...",
        *lines[:4],
    ]
    flags = [False, True, True, False, False, False, False, False]
    assert parametrize_cases(edited, flags) is None
    assert parametrize_cases(edited[1:], flags[1:]) == 15
    assert parametrize_cases(lines[:4], [False] * 4) is None
    assert parametrize_cases(['@pytest.mark.parametrize("x", CASES)', "def test(x): ..."]) is None


def _replaced(path: str, old: str, new: str) -> str:
    """A hunk that removes the function ``old`` and adds ``new`` where it stood: six body
    lines, four of them kept (alike 2/3)."""
    kept = [
        "    impl = make_impl(head_size=256)",
        "    query = torch.randn(4, 8, 256)",
        "    impl.forward_decode(query)",
        "    assert impl.ready",
    ]
    removed = [
        f"-def {old}():",
        *("-" + x for x in kept),
        "-    impl.fia.assert_called_once()",
        "-    assert impl.calls == 1",
    ]
    added = [
        f"+def {new}():",
        *("+" + x for x in kept),
        "+    impl.paged.assert_called_once()",
        "+    impl.fia.assert_not_called()",
    ]
    return "@@ -1,7 +1,7 @@\n" + "\n".join([*removed, *added])


def test_a_test_rewritten_where_it_stood_is_renamed_but_other_code_needs_more_alike() -> None:
    path = "tests/test_attention.py"
    patch = _replaced(path, "test_decode_uses_fia", "test_decode_uses_paged")
    moves = detect([(_fact(path), parse_patch(path, patch))])
    origin = moves.origin(path, None, "test_decode_uses_paged")
    assert (
        origin is not None
        and origin.name == "test_decode_uses_fia"
        and abs(origin.alike - 2 / 3) < 1e-9
    )
    assert moves.replaced(path, "test_decode_uses_fia")
    source = _replaced("pkg/attention.py", "decode_fia", "decode_paged")
    moves = detect([(_fact("pkg/attention.py"), parse_patch("pkg/attention.py", source))])
    assert moves.origin("pkg/attention.py", None, "decode_paged") is None  # 2/3: no rename
    # a test half the same in another file is another test, not this one moved
    old = "\n".join(x for x in patch.splitlines() if not x.startswith("+")).replace(
        "-1,7 +1,7", "-1,7 +0,0"
    )
    new = "\n".join(x for x in patch.splitlines() if not x.startswith("-")).replace(
        "-1,7 +1,7", "-0,0 +1,7"
    )
    moves = detect(
        [
            (_fact(path, "removed"), parse_patch(path, old)),
            (_fact("tests/test_paged.py", "added"), parse_patch("tests/test_paged.py", new)),
        ]
    )
    assert moves.origin("tests/test_paged.py", None, "test_decode_uses_paged") is None


def test_a_helper_is_never_the_test_that_took_its_place() -> None:
    path = "tests/test_scheduler.py"
    body = ["    config = SchedulerConfig(max_num_seqs=16)", "    return make(config)"]
    removed = ["-def create_scheduler():", *("-" + x for x in body)]
    added = ["+def test_waiting_queue_uses_upstream_policy():", *("+" + x for x in body)]
    patch = "@@ -1,3 +1,3 @@\n" + "\n".join([*removed, *added])
    moves = detect([(_fact(path), parse_patch(path, patch))])
    assert moves.origin(path, None, "test_waiting_queue_uses_upstream_policy") is None


def test_a_class_renamed_where_it_stands_is_a_rename_however_rewritten() -> None:
    # the class line changes in its name alone (a case fix); the body is all new
    patch = "\n".join(
        [
            "@@ -1,4 +1,5 @@",
            "-class AscendDsparkProposer(AscendDflashProposer):",
            "+class AscendDSparkProposer(AscendDflashProposer):",
            "     def __init__(self, config):",
            "-        self.seed = zeros(8)",
            "-        self.draft = zeros(8)",
            "+        self.blocks = build_blocks(config)",
            "+        self.groups = group_layers(config)",
            "+        self.use_cuda_graph = False",
        ]
    )
    moves = detect([(_fact("p.py"), parse_patch("p.py", patch))])
    origin = moves.origin("p.py", None, "AscendDSparkProposer")
    assert origin is not None and origin.name == "AscendDsparkProposer"
    assert origin.alike < 0.9  # said as renamed and rewritten


def test_tests_of_one_signature_replaced_by_unlike_tests_are_no_rename() -> None:
    # ``(self)`` makes every test's def line alike but for its name: that alone is no rename
    patch = "\n".join(
        [
            "@@ -1,3 +1,3 @@",
            "-    def test_random_sample_reuse_cpu_generator_cache(self):",
            "-        check_cache(self.sampler)",
            "+    def test_fill_exponential_honors_active_mask(self):",
            "+        check_mask(self.sampler)",
            "     pass",
        ]
    )
    fact = _fact("tests/test_s.py").model_copy(update={"role": Role.TEST})
    moves = detect([(fact, parse_patch("tests/test_s.py", patch))])
    assert moves.origin("tests/test_s.py", None, "test_fill_exponential_honors_active_mask") is None


def test_copies_of_a_helper_gathered_into_one_header_went_there() -> None:
    moves = detect(
        [],
        [
            ("csrc/a/error_log.h", "CeilDiv", "function", None, "removed"),
            ("csrc/b/error_log.h", "CeilDiv", "function", None, "removed"),
            ("csrc/c/error_log.h", "CeilDiv", "function", None, "removed"),
            ("csrc/common/tiling_util.h", "CeilDiv", "function", None, "added"),
        ],
    )
    for path in ("csrc/a/error_log.h", "csrc/b/error_log.h", "csrc/c/error_log.h"):
        went = moves.destination(path, None, "CeilDiv")
        assert went is not None and went.path == "csrc/common/tiling_util.h"
    two = detect(  # defined again in two places: which copy went where is not known
        [],
        [
            ("csrc/a/error_log.h", "CeilDiv", "function", None, "removed"),
            ("csrc/b/error_log.h", "CeilDiv", "function", None, "removed"),
            ("csrc/c/util.h", "CeilDiv", "function", None, "added"),
            ("csrc/d/util.h", "CeilDiv", "function", None, "added"),
        ],
    )
    assert two.destination("csrc/a/error_log.h", None, "CeilDiv") is not None  # paired by name


def test_a_kernel_class_renamed_where_it_stands_is_a_rename() -> None:
    # C/C++ has no bodies to compare: the class line that changes in its name alone says it
    patch = "\n".join(
        [
            "@@ -9,3 +9,3 @@",
            "-template<typename COMP> class CompressorBlockCubePerf {",
            "+template<typename COMP> class CompressorBlockCube {",
            " public:",
            "-    __aicore__ inline CompressorBlockCubePerf(){};",
            "+    __aicore__ inline CompressorBlockCube(){};",
        ]
    )
    path = "csrc/compressor/compressor_block_cube.h"
    symbols = [
        (path, "CompressorBlockCubePerf", "class", None, "removed"),
        (path, "CompressorBlockCube", "class", None, "added"),
    ]
    moves = detect([(_fact(path, language="cpp"), parse_patch(path, patch))], symbols)
    origin = moves.origin(path, None, "CompressorBlockCube")
    assert origin is not None and origin.name == "CompressorBlockCubePerf"


def test_a_class_header_rewritten_below_a_new_class_is_a_rename() -> None:
    # a manager split in two: a new class put in front, the old one's header renamed and
    # re-based, its body kept as context
    patch = "\n".join(
        [
            "@@ -27,4 +27,13 @@",
            "-class EagleAclGraphManager(EagleCudaGraphManager):",
            "+class PrefillEagleAclGraphManager(PrefillEagleCudaGraphManager):",
            "+    def capture(self, desc, num_tokens):",
            "+        graph = self.new_graph(desc)",
            "+        with self.capture_stream(graph):",
            "+            hidden = self.model(num_tokens)",
            "+        self.graphs[desc] = graph",
            "+        return hidden",
            "+",
            "+",
            "+class DecodeEagleAclGraphManager(DecodeEagleCudaGraphManager):",
            '     """AclGraphManager for Eagle speculative decoding."""',
            " ",
            "     def __init__(",
        ]
    )
    symbols = [
        ("p.py", "EagleAclGraphManager", "class", None, "removed"),
        ("p.py", "PrefillEagleAclGraphManager", "class", None, "added"),
        ("p.py", "DecodeEagleAclGraphManager", "class", None, "added"),
    ]
    moves = detect([(_fact("p.py"), parse_patch("p.py", patch))], symbols)
    origin = moves.origin("p.py", None, "DecodeEagleAclGraphManager")
    assert origin is not None and origin.name == "EagleAclGraphManager"
    assert moves.origin("p.py", None, "PrefillEagleAclGraphManager") is None


def _method_patch(old_name: str, new_name: str, calls: str) -> str:
    """One class's method removed above, its rewrite under almost its name added below (two
    hunks), and a caller's line calling ``calls``."""
    old = [
        "    def " + old_name + "(self, x):",
        "        q = self.proj(x)",
        "        k = prolog_kernel(q, self.weight)",
        "        v = prolog_scale(k, self.scale)",
        "        return q, k, v, None, None",
    ]
    new = [
        "    def " + new_name + "(self, x):",
        "        q = self.proj(x)",
        "        k = torch.matmul(q, self.weight)",
        "        k = k * self.scale",
        "        v = k.float()",
        "        out = torch.cat([q, v])",
        "        return q, k, v, out",
    ]
    return (
        "@@ -10,6 +10,1 @@ class Attention:\n"
        + "\n".join("-" + x for x in old)
        + "\n \n@@ -80,0 +75,9 @@ class Attention:\n"
        + "\n".join("+" + x for x in new)
        + f"\n+    def forward(self, x):\n+        return self.{calls}(x)"
    )


def test_a_method_renamed_and_rewritten_in_its_class_is_a_rename_when_its_old_name_is_gone() -> (
    None
):
    patch = _method_patch("_preprocess_with_prolog", "_preprocess_prolog", "_preprocess_prolog")
    moves = detect([(_fact("attn.py"), parse_patch("attn.py", patch))])
    origin = moves.origin("attn.py", "Attention", "_preprocess_prolog")
    assert origin is not None and origin.name == "_preprocess_with_prolog"
    assert origin.alike < 0.75  # too rewritten for a rename by body alone
    # still called by the new code: the old method lives on elsewhere, the new one is new
    kept = _method_patch("_preprocess_with_prolog", "_preprocess_prolog", "_preprocess_with_prolog")
    moves = detect([(_fact("attn.py"), parse_patch("attn.py", kept))])
    assert moves.origin("attn.py", "Attention", "_preprocess_prolog") is None
    # another name, however alike the bodies' few shared lines: two methods
    other = _method_patch("_preprocess_with_prolog", "_load_cache", "_load_cache")
    moves = detect([(_fact("attn.py"), parse_patch("attn.py", other))])
    assert moves.origin("attn.py", "Attention", "_load_cache") is None


def test_a_new_function_made_of_lines_taken_out_of_another_is_extracted_from_it() -> None:
    kept = [
        "        outputs = self.collect(scheduler_output)",
        "        self.finish(outputs, scheduler_output.finished_ids)",
    ]
    block = [
        "        for req_info in scheduler_output.recomputed_reqs or []:",
        "            outputs[req_info.client_index].append(",
        "                EngineCoreOutput(request_id=req_info.request_id,",
        "                                 finish_reason=FinishReason.STOP,",
        '                                 stop_reason="recomputed"))',
    ]
    patch = (
        "@@ -10,9 +10,5 @@ class Scheduler:\n"
        + "     def update_from_output(self, scheduler_output):\n"
        + "\n".join(" " + x for x in kept)
        + "\n"
        + "\n".join("-" + x for x in block)
        + "\n+        self._add_recomputed_outputs(outputs, scheduler_output)\n"
        + "         return outputs\n"
        + "@@ -40,0 +42,7 @@ class Scheduler:\n"
        + "+    def _add_recomputed_outputs(self, outputs, scheduler_output):\n"
        + "\n".join("+" + x for x in block)
        + "\n+        return None"
    )
    moves = detect([(_fact("sched.py"), parse_patch("sched.py", patch))])
    assert moves.extracted == {
        ("sched.py", "Scheduler", "_add_recomputed_outputs"): "update_from_output"
    }
    # lines whose function the hunk does not show: extracted, from code it does not name
    headless = patch.replace("     def update_from_output(self, scheduler_output):\n", "", 1)
    headless = headless.replace("@@ -10,9 +10,5 @@", "@@ -11,8 +11,4 @@", 1)
    moves = detect([(_fact("sched.py"), parse_patch("sched.py", headless))])
    assert moves.extracted == {("sched.py", "Scheduler", "_add_recomputed_outputs"): ""}
    # a new function of new lines is new
    fresh = patch.replace("\n".join("-" + x for x in block), "-        pass", 1).replace(
        "@@ -10,9 +10,5 @@", "@@ -10,5 +10,5 @@", 1
    )
    moves = detect([(_fact("sched.py"), parse_patch("sched.py", fresh))])
    assert not moves.extracted


def test_a_helper_cut_out_where_its_lines_stood_is_extracted_from_their_function() -> None:
    # the diff keeps the moved lines as context under the new ``def`` line
    patch = (
        "@@ -1,8 +1,11 @@\n"
        " class Scheduler:\n"
        "     def update_from_output(self, scheduler_output, outputs):\n"
        "+        self._add_recomputed_outputs(outputs, scheduler_output)\n"
        "         outputs = self.collect(scheduler_output, outputs)\n"
        "+        return outputs\n"
        "+\n"
        "+    def _add_recomputed_outputs(self, outputs, scheduler_output):\n"
        "         for req_info in scheduler_output.recomputed_reqs or []:\n"
        "             outputs[req_info.client_index].append(\n"
        "                 EngineCoreOutput(request_id=req_info.request_id,\n"
        '                                  stop_reason="recomputed"))\n'
        "-        return outputs"
    )
    moves = detect([(_fact("sched.py"), parse_patch("sched.py", patch))])
    assert moves.extracted == {
        ("sched.py", "Scheduler", "_add_recomputed_outputs"): "update_from_output"
    }


def test_a_function_renamed_on_its_way_to_another_file_and_reworked_is_a_rename() -> None:
    body = [
        "    counter = getattr(reasoning_parser, 'count_reasoning_tokens', None)",
        "    if counter is None:",
        "        return 0",
        "    return int(counter(token_ids))",
    ]
    old = parse_patch(
        "usage.py",
        _whole("-", ["def _count_reasoning_tokens_for_usage(token_ids, reasoning_parser):", *body]),
    )
    new_lines = [
        "def _count_minimax_reasoning_tokens_for_usage(token_ids, reasoning_parser):",
        "    if not _is_minimax_reasoning_parser(reasoning_parser):",
        "        return None",
        "    parser = _resolve_reasoning_parser(reasoning_parser)",
        "    logger.debug('counting with %s', type(parser).__name__)",
        "    token_ids = list(token_ids)",
        *body,
    ]
    new = parse_patch("minimax_usage.py", _whole("+", new_lines))
    parsed = [(_fact("usage.py", "removed"), old), (_fact("minimax_usage.py", "added"), new)]
    origin = detect(parsed).origin(
        "minimax_usage.py", None, "_count_minimax_reasoning_tokens_for_usage"
    )
    assert origin is not None and (origin.path, origin.name) == (
        "usage.py",
        "_count_reasoning_tokens_for_usage",
    )
    assert origin.alike < 0.75  # too reworked for a rename by body alone
    # the old name still called by the new code: it lives on, the new function is new
    calling = parse_patch(
        "minimax_usage.py", _whole("+", [*new_lines, "x = _count_reasoning_tokens_for_usage(t, p)"])
    )
    found = detect(
        [(_fact("usage.py", "removed"), old), (_fact("minimax_usage.py", "added"), calling)]
    )
    assert (
        found.origin("minimax_usage.py", None, "_count_minimax_reasoning_tokens_for_usage") is None
    )


def test_a_class_whose_methods_moved_to_a_new_class_of_almost_its_name_was_renamed() -> None:
    methods = {
        "classify": ["        mask = lens <= self.threshold", "        return mask & self.ready"],
        "init_batch": ["        self.lens = lens.clone()", "        self.ready = lens > 0"],
        "prepare": ["        inputs = self.build(lens)", "        return inputs.to(self.device)"],
    }

    def block(cls: str, extra: list[str]) -> list[str]:
        lines = [f"class {cls}:", *extra]
        for name, body in methods.items():
            lines += [f"    def {name}(self, lens):", *body]
        return lines

    pcp = block(
        "PCPManager", ["    def split_pcp(self, lens):", "        return lens.chunk(self.world)"]
    )
    old = parse_patch("pcp_utils.py", _whole("-", pcp))
    fields = [f"    field_{i}: int = {i}" for i in range(12)]  # rewritten well past a rename
    new = parse_patch("dcp_utils.py", _whole("+", block("DCPManager", fields)))
    parsed = [(_fact("pcp_utils.py", "removed"), old), (_fact("dcp_utils.py", "added"), new)]
    origin = detect(parsed).origin("dcp_utils.py", None, "DCPManager")
    assert origin is not None and (origin.path, origin.name) == ("pcp_utils.py", "PCPManager")
    assert origin.alike < 0.75  # no rename by its body alone
    # the old class still named by the new code: the new class took its methods, it is no rename
    kept = parse_patch(
        "dcp_utils.py", _whole("+", [*block("DCPManager", fields), "Fallback = PCPManager"])
    )
    found = detect(
        [(_fact("pcp_utils.py", "removed"), old), (_fact("dcp_utils.py", "added"), kept)]
    )
    assert found.origin("dcp_utils.py", None, "DCPManager") is None
    assert found.extracted == {("dcp_utils.py", None, "DCPManager"): "PCPManager"}

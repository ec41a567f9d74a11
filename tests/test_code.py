"""Symbols, tests and test techniques from literal patches."""

from __future__ import annotations

from prdigest.analyze.code import extract_symbols, extract_techniques, extract_tests, language_of
from prdigest.analyze.patches import parse_patch


def added_file_patch(lines: list[str]) -> str:
    """The patch of a file added with these lines."""
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + line for line in lines)


def symbols(
    path: str, patch: str, status: str = "modified"
) -> dict[str, tuple[str, str, str | None]]:
    parsed = parse_patch(path, patch)
    assert parsed.error is None
    found = extract_symbols(
        parsed, language=language_of(path), in_test=False, status=status, first_id=1
    )
    return {s.name: (s.kind, s.change, s.parent) for s in found}


PY_PATCH = """@@ -40,9 +40,12 @@ class Worker:
     def keep(self):
         return 1
 
-    def old_helper(self):
-        return 2
+    def new_helper(self):
+        return 3
 
     def busy(self, x):
-        y = x
+        y = x + 1
+        z = y
         return y
+
+MAX_RETRIES = 5"""


def test_python_defs_attributed_by_scope() -> None:
    found = symbols("w.py", PY_PATCH)
    assert found["old_helper"] == ("method", "removed", "Worker")
    assert found["new_helper"] == ("method", "added", "Worker")
    assert found["busy"] == ("method", "modified", "Worker")
    assert found["MAX_RETRIES"] == ("constant", "added", None)
    assert "keep" not in found  # context only


def test_hunk_header_names_the_enclosing_function() -> None:
    patch = "@@ -120,3 +120,3 @@ def get_finished(self, finished_req_ids):\n     a = 1\n-    b = 2\n+    b = 3\n     c = 4"
    assert symbols("p.py", patch) == {"get_finished": ("method", "modified", None)}


def test_a_plain_function_in_the_header_does_not_own_a_methods_lines() -> None:
    # GitHub names the innermost def above a hunk: here a helper nested in `load_model` that
    # ended before the hunk, whose lines use `self` (#11945's `mock_pass`)
    patch = (
        "@@ -3830,4 +3819,3 @@ def mock_pass(param1, param2):\n"
        "         self.model_memory_usage = m.consumed_memory\n"
        "-        from vllm.model_executor.offloader.base import get_offloader\n"
        "         get_offloader().post_init()\n"
        "         mm_config = self.model_config.multimodal_config"
    )
    assert "mock_pass" not in symbols("runner.py", patch)
    # a plain function's own body (no `self`) is still its
    own = "@@ -40,2 +40,2 @@ def mock_pass(param1, param2):\n     a = 1\n-    b = 2\n+    b = 3"
    assert symbols("runner.py", own) == {"mock_pass": ("function", "modified", None)}


def test_a_method_whose_signature_spans_lines_owns_the_changes_below_it() -> None:
    # the `) -> int:` line dedents to the def's level but continues its signature
    patch = (
        "@@ -10,7 +10,7 @@ class Scheduler:\n"
        "     def hit_tokens(\n"
        "         self,\n"
        "         token_len: int,\n"
        "     ) -> int:\n"
        "-        blocks = token_len // 16\n"
        "+        blocks = cdiv(token_len, 16)\n"
        "         return blocks\n"
        "     x = 1"
    )
    found = symbols("p.py", patch)
    assert found["hit_tokens"] == ("method", "modified", "Scheduler")
    assert "Scheduler" not in found  # the change is the method's, not the class body's


def test_added_python_file_uses_ast() -> None:
    source = [
        "class Buffer:",
        "    size: int = 4",
        "",
        "    def read(self):",
        "        return 1",
        "",
        "def make():",
        "    return Buffer()",
    ]
    patch = added_file_patch(source)
    parsed = parse_patch("new.py", patch)
    found = extract_symbols(parsed, language="python", in_test=False, status="added", first_id=1)
    assert [(s.name, s.kind, s.line, s.via) for s in found] == [
        ("Buffer", "class", 1, "ast"),
        ("read", "method", 4, "ast"),
        ("make", "function", 7, "ast"),
    ]


def test_dataclass_field_added() -> None:
    patch = "@@ -30,3 +30,4 @@ class ReqMeta:\n     remote_block_ids: list[int]\n     tp_size: int = 1\n+    awaiting_kvs: bool = False\n     remote_host: str"
    assert symbols("m.py", patch)["awaiting_kvs"] == ("field", "added", "ReqMeta")


def test_shell_functions_and_variables() -> None:
    patch = "@@ -58,3 +58,3 @@ prune_if_disk_pressure() {\n }\n \n-BUILD_RETRY_PATTERN='a|b'\n+BUILD_RETRY_PATTERN='a|b|c'"
    assert symbols("run.sh", patch) == {"BUILD_RETRY_PATTERN": ("constant", "modified", None)}
    new_function = "@@ -1,2 +1,5 @@\n set -e\n+_ci_prepare() {\n+  stat -c %u .\n+}\n echo done"
    assert symbols("ci.sh", new_function)["_ci_prepare"] == ("shell", "added", None)


def test_rust_and_cpp_definitions() -> None:
    rust = "@@ -10,1 +10,4 @@ impl K3TokenWriter {\n     fn text(&mut self) {}\n+    pub fn image(&mut self, idx: usize) {\n+        self.order.push(idx);\n+    }"
    assert symbols("w.rs", rust)["image"] == ("method", "added", "K3TokenWriter")
    cpp = "@@ -5,1 +5,5 @@\n #include <x>\n+__global__ void topk_kernel(float* out,\n+                            int n) {\n+  out[0] = 0;\n+}"
    assert symbols("k.cu", cpp)["topk_kernel"][1] == "added"


def test_a_cpp_statement_that_looks_like_a_signature_defines_nothing() -> None:
    # `if constexpr (…) {` and a call continued on the next line are no function
    cpp = (
        "@@ -1,1 +1,9 @@\n #include <x>\n+inline uint32_t Tools::GetIdx(uint32_t b)\n+{\n"
        "+    if constexpr (COMP::layout == TH) {\n+        return 1;\n+    }\n"
        "+    return Make(b,\n+                1);\n+}"
    )
    assert set(symbols("t.h", cpp)) == {"GetIdx"}


def test_yaml_ci_steps() -> None:
    patch = '@@ -1,3 +1,6 @@\n steps:\n - label: Old step\n   command: a\n+- label: "CPU Spec Decode Test"\n+  soft_fail: true\n+  command: pytest'
    assert symbols("pipeline.yaml", patch) == {"CPU Spec Decode Test": ("step", "added", None)}


WORKFLOW_PATCH = (
    "@@ -30,1 +30,3 @@ on:\n"
    "   workflow_call:\n"
    "+    secrets:\n"
    "+      OBS_KEY:\n"
    "@@ -116,2 +118,8 @@ jobs:\n"
    "           path: ./report.md\n"
    "-          retention-days: 7\n"
    "+          retention-days: 14\n"
    "+\n"
    "+  archive-report:\n"
    "+    needs: analyze\n"
    "+    runs-on: ubuntu-latest\n"
    "+    steps:\n"
    "+      - run: echo archive\n"
)


def test_workflow_jobs_are_ci_steps_and_the_trigger_section_is_none() -> None:
    # the hunk header puts the second hunk under `jobs:`; its first lines belong to the job
    # before it (not shown), the new key two spaces in is a new job; `workflow_call:` under
    # `on:` is no job
    found = symbols(".github/workflows/analyze.yaml", WORKFLOW_PATCH)
    assert found == {"archive-report": ("step", "added", None)}
    # outside .github/workflows a two-space key is plain YAML
    assert symbols("configs/analyze.yaml", WORKFLOW_PATCH) == {}


def test_a_jobs_display_name_renamed_is_no_changed_step() -> None:
    patch = (
        "@@ -10,4 +10,4 @@ jobs:\n"
        "   selected-tests:\n"
        "-    name: ${{ matrix.npu_type }}-${{ matrix.num_npus }}\n"
        "+    name: ${{ matrix.npu_type }}-${{ matrix.num_npus }} card\n"
        "     runs-on: linux-arm64\n"
        "     steps:"
    )
    assert symbols(".github/workflows/pr_test.yaml", patch) == {}
    # a change to what the job runs is one
    runs = (
        "@@ -10,5 +10,5 @@ jobs:\n"
        "   selected-tests:\n"
        "     name: npu\n"
        "-    timeout-minutes: 60\n"
        "+    timeout-minutes: 90\n"
        "     runs-on: linux-arm64\n"
        "     steps:"
    )
    assert symbols(".github/workflows/pr_test.yaml", runs) == {
        "selected-tests": ("step", "modified", None)
    }


def test_a_bare_annotation_of_a_plain_class_is_no_new_field_unless_the_pr_sets_it() -> None:
    # `mode: str` in a plain subclass tells the type checker the type of the base's attribute;
    # in a dataclass (its decorator shown) it is a field, and so it is where the PR sets it
    def patch(above: str, added: str = "") -> str:
        extra = added.count("\n")
        return (
            f"@@ -1,3 +1,{5 + extra} @@\n {above}\n class Builder(BaseBuilder):\n"
            f"+    mode: str\n+\n     def build(self):\n{added}"
        )

    assert "mode" not in symbols("pkg/b.py", patch(""))
    assert symbols("pkg/b.py", patch("@dataclass"))["mode"] == ("field", "added", "Builder")
    sets_it = patch("", "+        self.mode = 'a'\n")
    assert symbols("pkg/b.py", sets_it)["mode"] == ("field", "added", "Builder")


def test_tests_and_techniques() -> None:
    lines = [
        "import threading",
        "@pytest.mark.parametrize('ok', [True, False])",
        "def test_reuses_probe(monkeypatch, ok):",
        "    gate = threading.Event()",
        "    monkeypatch.setattr(mod, 'batch_lookup', blocking)",
        "    assert gate.wait(timeout=5)",
        "    assert torch.equal(a, b)",
        "class FakeBuffer:",
        "    pass",
    ]
    patch = added_file_patch(lines)
    parsed = parse_patch("tests/test_x.py", patch)
    tests = extract_tests(parsed, language="python", is_test_file=True, first_id=1)
    assert [(t.name, t.line, t.parametrized) for t in tests] == [("test_reuses_probe", 3, True)]
    techniques = {q.technique: q.label for q in extract_techniques(parsed, first_id=1)}
    assert techniques == {
        "parametrize": "pytest.mark.parametrize",
        "threading_event": "threading.Event",
        "monkeypatch": "monkeypatch.setattr",
        "timeout_wait": "wait",
        "bitwise_equal": "torch.equal",
        "fake_object": "FakeBuffer",
    }


def test_rust_tests_need_the_test_attribute() -> None:
    patch = "@@ -1,1 +1,6 @@\n mod tests {\n+    #[test]\n+    fn media_order_follows_reordered_tool_results() {}\n+\n+    fn helper() {}\n+}"
    parsed = parse_patch("src/render.rs", patch)
    tests = extract_tests(parsed, language="rust", is_test_file=False, first_id=1)
    assert [t.name for t in tests] == ["media_order_follows_reordered_tool_results"]


def test_language_of() -> None:
    assert language_of("csrc/moe/topk.cu") == "cpp"
    assert language_of("docker/Dockerfile.cpu") == "build"
    assert language_of("README") is None


def test_an_added_field_belongs_to_the_class_that_holds_it_after_the_change() -> None:
    patch = (
        "@@ -1,8 +1,6 @@\n"
        " class Keep:\n"
        "     a: int = 0\n"
        "-\n"
        "-class Gone:\n"
        "-    b: int = 0\n"
        "+    c: int = 1\n"
        " \n"
        " def after():\n"
        "     return 1"
    )
    found = symbols("cfg.py", patch)
    assert found["c"] == ("field", "added", "Keep")
    assert found["b"] == ("field", "removed", "Gone")


def test_a_removed_decorator_belongs_to_the_function_it_decorates() -> None:
    patch = (
        "@@ -10,6 +10,5 @@ async def create_score(request):\n"
        "     return await handler(request)\n"
        " \n"
        ' @router.post("/v1/rerank")\n'
        "-@with_cancellation\n"
        " async def create_score_v1(request, raw_request):\n"
        "     return await create_score(request)"
    )
    assert symbols("api.py", patch) == {"create_score_v1": ("function", "modified", None)}


def test_techniques_know_the_functions_that_use_them() -> None:
    lines = [
        "class FakeStore:",
        "    def get(self, key):",
        "        return None",
        "@pytest.fixture",
        "def no_uva(monkeypatch):",
        "    monkeypatch.setattr(mod, 'is_uva_available', lambda: False)",
        "def test_old_path():",
        "    torch.testing.assert_close(got, want)",
        "@pytest.mark.parametrize('n', [1, 7])",
        "def test_new_path(no_uva, n):",
        "    store = FakeStore()",
        "    assert torch.equal(got, want)",
        "class TestGroup:",
        "    @pytest.mark.parametrize('m', [2, 3])",
        "    def test_method(self, m):",
        "        assert torch.equal(a, b)",
    ]
    patch = added_file_patch(lines)
    parsed = parse_patch("tests/test_x.py", patch)
    used = {
        q.technique: q.used_in for q in extract_techniques(parsed, first_id=1, language="python")
    }
    assert used == {
        "fake_object": ("test_new_path",),  # named by the test, not by its own methods
        # the fixture that patches, and the test that takes the fixture
        "monkeypatch": ("no_uva", "test_new_path"),
        "assert_close": ("test_old_path",),
        # a decorator belongs to the function below it, at module or class level
        "parametrize": ("test_method", "test_new_path"),
        "bitwise_equal": ("test_method", "test_new_path"),
    }
    # where scopes are not read, nothing is tied to a test
    other = extract_techniques(parse_patch("tests/test_x.sh", patch), first_id=1)
    assert other and all(q.used_in is None for q in other)


def test_a_technique_in_the_hunk_headers_function_is_that_functions() -> None:
    patch = (
        "@@ -10,2 +10,3 @@ def test_existing(tmp_path):\n"
        "     got = run(tmp_path)\n"
        "+    torch.testing.assert_close(got, want)\n"
        "     return got"
    )
    (q,) = extract_techniques(parse_patch("tests/test_y.py", patch), first_id=1, language="python")
    assert q.used_in == ("test_existing",)


def test_a_signature_over_several_lines_keeps_its_function_open() -> None:
    lines = [
        "@pytest.mark.parametrize(",
        "    'n',",
        "    [1, 2],",
        ")",
        "def test_long_signature(",
        "    n: int,",
        "):",
        "    # a comment at any indent closes nothing",
        "    assert torch.equal(a, b)",
    ]
    patch = added_file_patch(lines)
    found = extract_techniques(parse_patch("tests/test_z.py", patch), first_id=1, language="python")
    assert {q.technique: q.used_in for q in found} == {
        "parametrize": ("test_long_signature",),
        "bitwise_equal": ("test_long_signature",),
    }


def test_a_technique_named_only_in_a_comment_is_not_used() -> None:
    lines = [
        "def test_routing():",
        "    # Mock torch.ops._C_ascend.npu_moe_init_routing_v2",
        "    out = route(x)  # like a Mock, but real",
        "    assert out.shape == (2, 3)",
    ]
    parsed = parse_patch("tests/test_z.py", added_file_patch(lines))
    assert extract_techniques(parsed, first_id=1) == []
    used = parse_patch(
        "tests/test_z.py", added_file_patch([*lines, '    m = MagicMock(name="a # b")'])
    )
    ((technique, label, line),) = [
        (q.technique, q.label, q.line) for q in extract_techniques(used, first_id=1)
    ]
    assert (technique, label, line) == ("mock", "MagicMock", 5)


def test_keyword_arguments_of_a_wrapped_call_are_no_constants() -> None:
    patch = (
        "@@ -1,4 +1,6 @@ class BlockTable:\n         n = self.n\n-        kernel(\n"
        "-            TOTAL_CP_WORLD_SIZE=size,\n-            TOTAL_CP_RANK=rank)\n"
        "+        if self.pcp:\n+            kernel(\n+                TOTAL_CP_WORLD_SIZE=size,\n"
        "+                TOTAL_CP_RANK=rank)\n+MAX_SLOTS = 8"
    )
    assert set(symbols("t.py", patch)) == {"BlockTable", "MAX_SLOTS"}


def test_a_docstring_or_comment_edit_changes_no_definition() -> None:
    docs = (
        "@@ -1,5 +1,5 @@\n def patch_group(group):\n"
        '-    """Backports the helper of vLLM 0.21.\n+    """A local implementation of the helper.\n'
        '     Used until upstream ships it.\n     """\n'
        "     return group"
    )
    assert symbols("p.py", docs) == {}
    comment = "@@ -1,3 +1,3 @@\n def size(x):\n-    # the v0.22 helper\n+    # the v0.21 helper\n"
    assert symbols("p.py", comment + "     return x") == {}
    code = '@@ -1,3 +1,3 @@\n def size(x):\n     """Its size."""\n-    return x\n+    return x + 1'
    assert symbols("p.py", code) == {"size": ("function", "modified", None)}


def test_a_cpp_function_ends_at_its_closing_brace_in_the_first_column() -> None:
    # the header names the function above the hunk; the templates added below its brace are
    # not its lines, so it did not change
    kernel = (
        "@@ -42,4 +42,10 @@ __aicore__ inline void SetWaitFlag(HardEvent evt)\n"
        "     WaitFlag<event>(eventId);\n"
        " }\n"
        "+\n"
        "+template <typename T>\n"
        "+__aicore__ inline void CastOrCopy(LocalTensor<T> dst, LocalTensor<T> src)\n"
        "+{\n"
        "+    Copy(dst, src);\n"
        "+}\n"
        " \n"
        " __aicore__ inline void Compute()"
    )
    found = symbols("kernel_v310.h", kernel)
    assert "SetWaitFlag" not in found
    assert found["CastOrCopy"][1] == "added"


def test_a_decorator_over_several_lines_belongs_to_the_function_it_decorates() -> None:
    # the header names the function above; the decorator's arguments are the next one's
    patch = (
        "@@ -74,7 +73,11 @@ def apply_temperature(\n"
        "     )\n"
        " \n"
        " \n"
        "-@triton.jit\n"
        "+@triton.jit(\n"
        "+    do_not_specialize=[\n"
        '+        "num_tokens",\n'
        "+    ]\n"
        "+)\n"
        " def _gumbel_sample_kernel(\n"
        "     out_ptr,\n"
        "     num_tokens,"
    )
    found = symbols("vllm_ascend/sample/gumbel.py", patch)
    assert "apply_temperature" not in found
    assert found["_gumbel_sample_kernel"][1] == "modified"


def test_an_event_a_test_never_sets_or_waits_on_is_no_ordering_technique() -> None:
    lines = [
        "def test_handle_request(self):",
        "    get_event = threading.Event()",
        "    thread._handle_request(req, get_event)",
        "    self.assertFalse(get_event.is_set())",
        "def test_env(monkeypatch):",
        '    monkeypatch.setenv("OMP_NUM_THREADS", "1")',
    ]
    parsed = parse_patch("tests/test_y.py", added_file_patch(lines))
    techniques = {q.technique: q.label for q in extract_techniques(parsed, first_id=1)}
    assert techniques == {"monkeypatch": "monkeypatch.setenv"}


def test_a_comment_removed_near_a_cpp_function_changes_no_function() -> None:
    banner = (
        "@@ -99,12 +99,7 @@ public:\n"
        " private:\n"
        "-    // ==========\n"
        "-    // AlignUp helper\n"
        "-    // ==========\n"
        "     static __aicore__ inline uint32_t AlignUp(uint32_t x, uint32_t a)\n"
        "     {\n"
        "         return (x + a - 1) / a * a;\n"
        "     }\n"
        " \n"
        "-    /* GM to UB: a standard copy,\n"
        "-     * rounded up to the block */\n"
        "     __aicore__ inline void DataCopyIn(int32_t count)\n"
    )
    assert symbols("kernel.cpp", banner) == {}
    body = (
        "@@ -99,5 +99,5 @@ public:\n"
        " private:\n"
        "     static __aicore__ inline uint32_t AlignUp(uint32_t x, uint32_t a)\n"
        "     {\n"
        "-        return x;\n"
        "+        return (x + a - 1) / a * a;\n"
        "     }\n"
    )
    assert symbols("kernel.cpp", body)["AlignUp"][1] == "modified"


def test_a_call_a_formatter_rewrapped_changes_no_definition() -> None:
    rewrapped = (
        "@@ -10,6 +10,3 @@ def set_context(num_tokens, config):\n"
        "     tokens = count(num_tokens)\n"
        "-    kind = select_method(\n"
        "-        tokens,\n"
        "-        config,\n"
        "-    )\n"
        "+    kind = select_method(tokens, config)\n"
        "     return kind\n"
    )
    assert symbols("pkg/ctx.py", rewrapped) == {}
    moved = (  # the same statement moved below another: the order changed
        "@@ -10,3 +10,3 @@ def set_context(num_tokens, config):\n"
        "-    tokens = count(num_tokens)\n"
        "     kind = select_method(config)\n"
        "+    tokens = count(num_tokens)\n"
        "     return kind\n"
    )
    assert symbols("pkg/ctx.py", moved)["set_context"][1] == "modified"
    edited = rewrapped.replace(
        "+    kind = select_method(tokens, config)", "+    kind = pick(tokens, config)"
    )
    assert symbols("pkg/ctx.py", edited)["set_context"][1] == "modified"


def _signatures(patch: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    from prdigest.analyze.code import signature_changes

    return signature_changes(parse_patch("m.py", patch))


def test_parameters_a_signature_gains_and_loses_are_found_over_several_lines() -> None:
    patch = (
        "@@ -10,8 +10,7 @@ def pick(\n"
        " def pick(\n"
        "     num_tokens: int,\n"
        "-    vllm_config: VllmConfig,  # the whole config (only two fields are read)\n"
        "-    quant_type: str | None = None,\n"
        "+    ep_size: int,\n"
        " ) -> Method:\n"
        "     if num_tokens > 16:\n"
        "         return Method.MC2\n"
        "     return Method.ALLGATHER"
    )
    assert parse_patch("m.py", patch).error is None
    assert _signatures(patch) == {"pick": (("ep_size",), ("vllm_config", "quant_type"))}
    found = extract_symbols(
        parse_patch("m.py", patch), language="python", in_test=False, status="modified",
        first_id=1,
    )  # fmt: skip
    pick = next(s for s in found if s.name == "pick")
    assert (pick.parameters_added, pick.parameters_removed) == (
        ("ep_size",),
        ("vllm_config", "quant_type"),
    )


def test_a_reformatted_or_unused_marked_signature_changes_no_parameter() -> None:
    rewrapped = (
        "@@ -1,3 +1,6 @@\n"
        "-def load(self, path, *, strict=False):\n"
        "+def load(\n"
        "+    self, path, *, strict=False\n"
        "+):\n"
        "     return read(path)\n"
        " x = 1"
    )
    assert _signatures(rewrapped) == {}
    marked = "@@ -1,2 +1,2 @@\n-async def lifespan(app):\n+async def lifespan(_app):\n     yield"
    assert _signatures(marked) == {}


def test_a_name_whose_signature_changes_in_two_hunks_is_not_guessed() -> None:
    # two classes' `forward` in one file: which change is whose is not said
    patch = (
        "@@ -3,2 +3,2 @@ class A:\n"
        "-    def forward(self, x):\n"
        "+    def forward(self, x, mask):\n"
        "         return x\n"
        "@@ -30,2 +30,2 @@ class B:\n"
        "-    def forward(self, x, scale):\n"
        "+    def forward(self, x):\n"
        "         return x"
    )
    assert _signatures(patch) == {}

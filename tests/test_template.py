"""The template writer: grounded, structured, deterministic entries."""

from __future__ import annotations

import json
import re

import pytest

from prdigest.core.models import Assessment, Dossier, Kind, Level
from prdigest.core.records import PullRequest
from prdigest.triage import assess
from prdigest.write.template import TemplateWriter, space_cjk, title_for
from prdigest.write.template.focus import (
    OtherFiles,
    other_files,
    render_other_files,
    unnamed_files,
)
from prdigest.write.template.phrases import Cited, Phrases

from conftest import load_fixture, says

NO_OTHERS = OtherFiles((), (), ())  # a draft with no other files to say


def other_files_wordings(d: Dossier, p: Phrases, cited: Cited, said: str = "") -> list[str]:
    """The other-files sentence of a paragraph whose other parts say ``said``, fullest first."""
    files = other_files(d, p, cited).unnamed_in(said)
    wordings = [files.unnamed_in("", size) for size in range(len(files.paths), 0, -1)]
    return [render_other_files(o, unnamed_files(d, said, o.paths), p) for o in wordings]


VERDICT_START = {
    Level.MUST_READ: ("值得精读",),
    Level.WORTH_READING: ("值得选读", "值得中等优先级精读"),
    Level.SKIM: ("快速浏览即可", "建议 5 分钟内快速浏览"),
    Level.SKIP: ("无需精读",),
}
CODE = re.compile(r"`([^`]+)`")
MENTION = re.compile(r"@([A-Za-z0-9][\w-]*)")
FIGURE = re.compile(r"[+\-~]?\d+(?:\.\d+)?(?:~\d+)?[%x]")


def logins(record: PullRequest) -> set[str]:
    found = {record.author or ""}
    found |= {r.author or "" for r in record.reviews or ()}
    found |= {c.author or "" for c in record.comments or ()}
    found |= {c.author or "" for t in record.review_threads or () for c in t.comments}
    found |= set(re.findall(r"@([\w-]+)", " ".join(c.message for c in record.commits or ())))
    return found


@pytest.fixture(scope="module")
def written(dossiers: dict[int, Dossier]) -> dict[tuple[int, str], tuple[Level, str | None, str]]:
    writer = TemplateWriter()
    out = {}
    for number, dossier in dossiers.items():
        assessment = assess(dossier)
        for lang in ("zh", "en"):
            entry = writer.write(dossier, assessment, lang=lang, paragraph=True)  # type: ignore[arg-type]
            out[(number, lang)] = (assessment.level, entry.paragraph, entry.title)
    return out


def test_every_code_name_occurs_in_the_record(
    written: dict[tuple[int, str], tuple[Level, str | None, str]],
) -> None:
    for (number, _lang), (_level, paragraph, title) in written.items():
        raw = json.dumps(load_fixture(number).to_json_dict(), ensure_ascii=False)
        raw = raw.encode().decode("unicode_escape", errors="ignore") + raw
        for name in CODE.findall((paragraph or "") + title):
            assert name in raw, (number, name)


def test_every_login_took_part(
    written: dict[tuple[int, str], tuple[Level, str | None, str]],
) -> None:
    for (number, _lang), (_level, paragraph, _title) in written.items():
        people = logins(load_fixture(number))
        for login in MENTION.findall(CODE.sub("", paragraph or "")):
            assert login in people, (number, login)


def test_every_figure_comes_from_the_record(
    written: dict[tuple[int, str], tuple[Level, str | None, str]],
) -> None:
    for (number, _lang), (_level, paragraph, title) in written.items():
        raw = json.dumps(load_fixture(number).to_json_dict(), ensure_ascii=False).replace(" ", "")
        for figure in FIGURE.findall((paragraph or "") + title):
            assert figure.lstrip("+") in raw, (number, figure)


def test_structure_and_bounds(
    written: dict[tuple[int, str], tuple[Level, str | None, str]],
) -> None:
    for (number, lang), (level, paragraph, title) in written.items():
        assert "\n" not in title and title.strip() == title
        if level is Level.LIST_ONLY:
            assert paragraph is None
            continue
        assert paragraph is not None and "\n" not in paragraph
        assert len(paragraph) <= (520 if lang == "zh" else 900), (number, len(paragraph))
        if lang == "zh":
            assert paragraph.startswith(VERDICT_START[level]), (number, paragraph[:20])
            if level is Level.MUST_READ:
                assert len(paragraph) >= 150, number
        else:
            assert not re.search(r"[\u4e00-\u9fff]", paragraph + title), number


def test_must_read_entries_name_code_and_discussion(
    written: dict[tuple[int, str], tuple[Level, str | None, str]],
) -> None:
    for (number, lang), (level, paragraph, _title) in written.items():
        if level is Level.MUST_READ and lang == "zh":
            assert paragraph is not None
            assert len(CODE.findall(paragraph)) >= 3, number


def test_known_facts_surface(written: dict[tuple[int, str], tuple[Level, str | None, str]]) -> None:
    nixl = written[(56104, "zh")][1] or ""
    assert "`_try_release_xfer_handle`" in nixl and "@njhill" in nixl and "`TODO(HMA)`" in nixl
    deepep = written[(52781, "zh")]
    assert "`VLLM_DEEPEP_V2_COMBINE_OVERLAP`" in (deepep[1] or "")  # stale description caught
    assert deepep[2].endswith("ITL -5~9%")
    assert "`awaiting_kvs`" in (written[(56640, "zh")][1] or "")
    assert says(written[(56366, "zh")][1] or "", "followup", "empty_test_result")


def test_deterministic(dossiers: dict[int, Dossier]) -> None:
    writer = TemplateWriter()
    d = dossiers[56317]
    a = assess(d)
    assert writer.write(d, a, lang="zh", paragraph=True) == writer.write(
        d, a, lang="zh", paragraph=True
    )


def test_titles(dossiers: dict[int, Dossier]) -> None:
    assert title_for(dossiers[56104], "zh") == "NIXL：修复请求跨越多个传输句柄时的竞态"
    assert title_for(dossiers[56934], "zh").startswith("回滚 #56712:")
    itself = dossiers[56934].model_copy(update={"reverts": 56934})  # a typo in the body
    assert title_for(itself, "zh").startswith("回滚:") and "#56934" not in title_for(itself, "zh")
    assert (
        title_for(dossiers[56104], "en")
        == "NIXL: fix race when a request spans multiple transfer handles"
    )


def test_a_figure_that_says_the_metric_got_worse_is_no_title_claim(
    dossiers: dict[int, Dossier],
) -> None:
    from prdigest.core.models import ClaimFact, Provenance

    def claim(figure: str, metric: str) -> ClaimFact:
        where = Provenance(kind="body", ref="body", line=3)
        return ClaimFact(id="c1", provenance=where, text=figure, figure=figure, metric=metric)

    base = _retitled(dossiers[52781], "Change ngram spec decode to a triton op")
    for figure, metric in (("+5.4%", "ttft"), ("-3%", "throughput")):
        worse = base.model_copy(update={"claims": (claim(figure, metric),)})
        assert figure not in title_for(worse, "zh"), figure
    better = base.model_copy(update={"claims": (claim("-3.03%", "tpot"),)})
    assert title_for(better, "zh").endswith("TPOT -3.03%")


def _retitled(d: Dossier, subject: str, kind: str = "feature") -> Dossier:
    update = {"subject": subject, "kind": Kind(kind), "claims": (), "rationale": ()}
    return d.model_copy(update=update)


@pytest.mark.parametrize(
    ("subject", "kind", "title"),
    [
        ("Disable npugraph_ex by default on 310P", "fix", "默认禁用 310P 上的 npugraph_ex"),
        (
            "Fix invalid local sequence lengths for graph padding",
            "fix",
            "修复图 padding 的无效的本地序列长度",
        ),
        ("Remove weight prefetch config", "refactor", "移除权重 prefetch 配置"),
        ("bug fix for mega_moe", "fix", "修复 mega_moe 的问题"),  # not 修复 … 的问题修复
        ("moe w4a8 ub fix and swiglu limit fix", "fix", "修复 MoE W4A8 ub 与 swiglu 上限"),
        (
            "Add E2E for kv sliding window; fix block size input bug",
            "fix",
            "新增 KV 滑动窗口的 E2E；修复块大小输入问题",
        ),
        ("Align V2 Model Runner with Upstream", "chore", "将 V2 模型执行器与上游对齐"),
        # an old value is not a place, a new value is not an owner (every one was said so)
        ("Bump actions/checkout from 4 to 6", "ci", "从 4 升级 actions/checkout 至 6"),
        (
            "Modify accuracy threshold for aime2025 dataset to 10",
            "ci",
            "修改 aime2025 数据集的精度阈值至 10",
        ),
        ("Split c8 to li c8 and sfa c8", "feature", "拆分 C8 为 li C8 与 SFA C8"),
        ("Report async KV load failures to scheduler", "fix", "上报异步 KV 加载失败至调度器"),
        # what a verb uses is not what its object has
        (
            "Pad actual_seq_lengths with 0 for EOD scenario",
            "fix",
            "用 0 补齐 EOD 场景的 actual_seq_lengths",
        ),
        ("Reduce sampling", "perf", "优化 reduce sampling"),  # a scheme's name, no verb
        ("RGDR optimization", "perf", "优化 RGDR"),  # the kind's verb says it once
        ("DSV4 prefix cache hit rate optimize", "perf", "优化 DSV4 前缀缓存命中率"),
        ("Enhance w4a8.py with docstrings", "chore", "用 docstrings 增强 w4a8.py"),  # the means
        (  # the sampler gains inverse CDF; it did not have it before
            "Optimize 310P random sampling with inverse CDF",
            "perf",
            "用 inverse CDF 优化 310P random 采样",
        ),
        (
            "Add env var to control DP metadata all_reduce communication",
            "feature",
            "新增环境变量，以控制 DP metadata all_reduce 通信",
        ),
        (
            "Enabled deterministic operators for batch invariance",
            "fix",
            "启用 batch 不变性的确定性算子",
        ),
        # a leading verb is the verb, not a modifier under the kind's (「修复 … Omit …」)
        ("Omit empty tool_calls from chat responses", "fix", "省略对话响应中空的 tool_calls"),
        ("Fix hybrid block table out of range bug", "fix", "修复混合块表越界问题"),
        ("Fix /e2e command", "ci", "修复/e2e 命令"),  # a slash command is a name
        # a literal or a test's parameter stays whole
        (
            "Fix processed-layout P2P for INT8_CACHE=no",
            "fix",
            "修复 INT8_CACHE=no 的 processed-layout P2P",
        ),
        ("skip test_models[Qwen/Qwen3-8B]", "ci", "跳过 test_models[Qwen/Qwen3-8B]"),
        # a feature label does not sit before "Fix" (a category label may)
        (
            "Fix sdma error caused by asynchronous copy",
            "feature",
            "【修复】Fix sdma error caused by asynchronous copy",
        ),
        (
            "Fix delete wait-feedback label progress",
            "ci",
            "【CI】Fix delete wait-feedback label progress",
        ),
        # a noun-or-verb word after "and" leading a short phrase ends a list, not a clause
        ("Fix cherry-pick and rerun command", "ci", "修复 cherry-pick 与重跑命令"),
        (  # a noun led by a verb word ends a list too
            "Fix file header and include guard in hc_post_tiling",
            "fix",
            "修复 hc_post_tiling 中的文件 header 与 include guard",
        ),
        # a conventional-commit type before a colon is the kind, not a component
        ("feat: adapt to vLLM main", "chore", "适配至 vLLM main"),
        (
            "Update num_layers to include MTP draft layers",
            "fix",
            "更新 num_layers，以纳入 MTP 草稿层",
        ),
        ("Update GLM-5 documentation and support matrix", "docs", "更新 GLM-5 文档与支持矩阵"),
        (
            "Refactor light test cases and update test coverage",
            "ci",
            "重构 light 测试用例；更新测试覆盖",
        ),
        ("Lazy initialize KV store on put", "fix", "惰性初始化 put 上的 KV 存储"),
        # a list cut at ";" is not dropped after its first item
        (
            "Add GLM5.1 ;Deepseekv3.2;Qwen3.5-397B PD cases",
            "ci",
            "【CI】Add GLM5.1 ;Deepseekv3.2;Qwen3.5-397B PD cases",
        ),
        (  # "replace X with Y": Y takes X's place, X does not have Y
            "Replace BailingMoELinearAttention monkey-patching with PluggableLayer",
            "refactor",
            "用 PluggableLayer 替换 BailingMoELinearAttention monkey-patching",
        ),
        ("Render bold text correctly in Chinese docs", "docs", "正确渲染中文文档中的加粗文本"),
        # an event a reaction waits on says when, not which of its object
        ("Disable sampling on failure", "ci", "失败时禁用采样"),
        ("Fix crash on startup", "fix", "修复启动时的崩溃"),
        # a level a call runs at says how it is done, not where its object is
        ("Log the request at DEBUG level", "chore", "以 DEBUG 级别记录请求"),
        # a linear hybrid is one of linear and full attention, not of linear layers
        (
            "Recompute offload supports linear hybrid model",
            "feature",
            "新增重计算卸载支持线性注意力混合模型",
        ),
        # lead verbs of real CI and refactor titles that the phrasebook once lacked
        ("Prebuild missing kernels on CPU runners", "ci", "预构建 CPU runner 上缺失的算子"),
        ("Summarize failed unit tests in the job log", "ci", "汇总任务日志中失败的单测"),
        ("Update the pool guide regarding SSD setup", "docs", "更新关于 SSD 配置的池指南"),
        ("Tune timeouts for different test scenarios", "ci", "调优不同测试场景的超时"),
        # a noun first is not a verb: the kind's verb leads it
        ("xmask feature for the combine operator", "fix", "修复合并算子的 xmask 特性"),
        (
            "Update startup configuration to disable npugraph_ex",
            "docs",
            "更新启动配置，以禁用 npugraph_ex",
        ),
    ],
)
def test_chinese_titles_say_the_change_in_chinese(
    dossiers: dict[int, Dossier], subject: str, kind: str, title: str
) -> None:
    assert title_for(_retitled(dossiers[56104], subject, kind), "zh") == title


@pytest.mark.parametrize(
    ("subject", "kind", "title"),
    [
        ("main2main 0519", "chore", "同步 vLLM 上游至 0519"),  # was "杂项 main2main 0519"
        ("main2mian v0.24.0", "ci", "同步 vLLM 上游至 v0.24.0"),
        ("main2main vllm v0.26.0", "ci", "同步 vLLM 上游至 v0.26.0"),
        ("M2m 0724 continuation", "chore", "同步 vLLM 上游至 0724（续）"),
        ("Main2main upgrade vllm to v0.22.1", "chore", "升级 vLLM 至 v0.22.1"),  # its own verb
    ],
)
def test_an_upstream_sync_named_by_its_word_says_what_it_does(
    dossiers: dict[int, Dossier], subject: str, kind: str, title: str
) -> None:
    assert title_for(_retitled(dossiers[56104], subject, kind), "zh") == title


def test_a_sync_word_with_other_words_after_it_is_translated_as_usual(
    dossiers: dict[int, Dossier],
) -> None:
    title = title_for(
        _retitled(dossiers[56104], "main2main caused prefix cache error", "fix"), "zh"
    )
    assert "同步" not in title


@pytest.mark.parametrize(
    "subject",
    [
        '"[Bugfix] Fix main2main eplb"',  # "[Revert]" was the tag: the quoted title is left
        'Revert "[CI] Drop vllm main e2e test for v0.24.0rc"',
        "Revert [feature] Fix main2main eplb",
    ],
)
def test_a_revert_whose_body_names_no_pr_is_said_with_the_reverted_title(
    dossiers: dict[int, Dossier], subject: str
) -> None:
    d = _retitled(dossiers[56104], subject, "revert").model_copy(update={"reverts": None})
    title = title_for(d, "zh")
    assert title.startswith("回滚: ") and '"' not in title and "[" not in title, title
    assert "Revert" not in title


@pytest.mark.parametrize(
    ("subject", "kind", "title"),
    [
        ("Gemma4 Deployment Tutorial", "docs", "文档：Gemma4 部署教程"),  # was 文档 Gemma4 …
        ("pre-commit autoupdate", "ci", "CI：pre-commit 自动更新"),
        # English grammar left in a noun phrase without a verb: the labelled English subject
        ("enable_fused_mc2 must be 0 or 1", "ci", "【CI】enable_fused_mc2 must be 0 or 1"),
        (
            "310P user guide changes naming layout",
            "docs",
            "【文档】310P user guide changes naming layout",
        ),
    ],
)
def test_a_subject_without_a_verb_is_said_after_its_category(
    dossiers: dict[int, Dossier], subject: str, kind: str, title: str
) -> None:
    assert title_for(_retitled(dossiers[56104], subject, kind), "zh") == title


def test_test_times_are_durations_not_counts(dossiers: dict[int, Dossier]) -> None:
    title = title_for(_retitled(dossiers[56104], "Update estimated test times", "ci"), "zh")
    assert "测试耗时" in title and "次数" not in title


def test_a_title_that_would_stay_english_is_labelled_not_half_translated(
    dossiers: dict[int, Dossier],
) -> None:
    d = _retitled(
        dossiers[56104], "DyntraLB: Dynamic Intra-decoder rebalancing heuristics", "feature"
    )
    title = title_for(d, "zh")
    assert title == "【新增】DyntraLB：Dynamic Intra-decoder rebalancing heuristics"
    assert title.count("：") == 1  # never two prefixes


@pytest.mark.parametrize(
    ("subject", "half"),
    [
        # each would come out as the half translation on the right without the check
        ("Fix for transmit kv block failure", "修复 transmit KV 块失败的"),  # a dangling 的
        ("Fix the previously skipped warmup step", "修复 previously skipped 预热步骤"),
        (
            "Fix hang when enabling prefix cache on decode nodes",
            "修复 decode 节点上的 enabling 前缀缓存时的卡死",
        ),
        ("Fix draft model misidentified as MoE", "修复草稿模型 misidentified，作为 MoE"),
        ("Fix an error raised by the FIA shape check", "通过 FIA 形状检查修复报错 raised"),
        # a lead verb the phrasebook lacks: the kind's verb went before it
        ("Reshuffle the expert map for EPLB", "修复 EPLB 的 Reshuffle 专家映射"),
        # an auxiliary or relative word kept between translated words
        (
            "Fix reduce sampling where top_k and top_p could be None",
            "修复 reduce sampling where top_k 与 top_p could None",
        ),
        # "only" after its noun, which Chinese cannot put there
        ("NPU MoE layers support TP only", "修复 NPU MoE 层支持 TP 仅"),
        ("Restrict kv block zeroer for eagle3 only", "限制 eagle3 仅的 KV 块 zeroer"),
    ],
)
def test_a_half_translation_is_said_as_the_labelled_english_subject(
    dossiers: dict[int, Dossier], subject: str, half: str
) -> None:
    from prdigest.write.template import title as titles

    d = _retitled(dossiers[56104], subject, "fix")
    assert title_for(d, "zh") == f"【修复】{subject}"
    p = Phrases("zh", d.number)
    rendered = titles.translate_subject(subject, d.kind, p)
    assert rendered is None
    assert titles.half_translated(half, subject, p)


def test_english_terms_and_balanced_quotes_are_not_a_half_translation() -> None:
    from prdigest.write.template.title import half_translated

    p = Phrases("zh", 1)
    # a gerund or participle used as a term (no conjunction or "is" before it) stays
    assert not half_translated(
        "修复ViT编码器的padding处理", "Fix padding handling for ViT encoder", p
    )
    assert not half_translated("移除paged注意力", "Remove paged attention", p)
    # a quoted config name is whole; a quote around translated words is not
    assert not half_translated('新增GLM5的"enable_dsa_cp"配置', 'Add "enable_dsa_cp" config', p)
    assert half_translated('回滚ViT图"的"修复padding', 'Revert "Fix padding for ViT"', p)
    assert half_translated("新增SP关闭.“时的", "Fix output when SP is off", p)


def test_a_fix_title_says_the_symptom_the_body_names(dossiers: dict[int, Dossier]) -> None:
    d = dossiers[56640]  # the body says the requests never finish and their KV blocks leak
    assert title_for(d, "zh") == "修复 full-prefix-hit 请求从不结束时的 KV 泄漏"
    crash = d.model_copy(
        update={
            "subject": "Fix draft shape when SP is on",
            "rationale": (
                d.rationale[0].model_copy(
                    update={"kind": "symptom", "claim": "The draft model crashes in MarkovHead"}
                ),
            ),
        }
    )
    assert title_for(crash, "zh") == "修复 SP 开启时的草稿形状导致的崩溃"
    # "避免 X导致的 Y" would blame what the PR avoids; after a second clause, that clause
    avoid = crash.model_copy(update={"subject": "Avoid global synchronization for graph replay"})
    assert title_for(avoid, "zh") == "避免图回放的全局 synchronization"
    two = crash.model_copy(update={"subject": "Fix engine init and align IPC handle with upstream"})
    assert "崩溃" not in title_for(two, "zh")


def test_space_between_chinese_and_code() -> None:
    assert space_cjk("新增`x`字段（`y`）") == "新增 `x` 字段（`y`）"


def test_other_changed_files_are_named_once_and_only_when_changed() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch("pkg/core/engine.py", ["def step(self):", "    return self.run()"]),
            file_patch("pkg/core/helpers.py", ["    x = 1"]),
            file_patch("pkg/core/__init__.py", ["from .engine import step"]),
            file_patch("tests/test_engine.py", ["def test_step():", "    assert step()"]),
        ]
    )
    d = analyze(pr, load_preset(pr.repo))
    cited = Cited()
    said = "`engine.py` 中新增的 `step`"  # named by a focus point already
    text = other_files_wordings(d, Phrases("zh", pr.number), cited, said)[0]  # the fullest
    assert "`helpers.py`" in text and "`test_engine.py`" in text
    assert "engine.py`、" not in text.replace("test_engine.py", "")
    assert "__init__.py" not in text  # a package marker is no place to read
    lone = d.model_copy(update={"files": d.files[:1]})
    assert other_files_wordings(lone, Phrases("zh", 1), cited, said) == []


def test_a_new_file_among_the_other_files_is_said_as_new() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch("csrc/ngram/ngram_spec_decode.cpp", ["int main() {", "  return 0;", "}"],
                       status="added"),
            file_patch("tests/e2e/test_scoring.py", ["def check():", "    pass"], status="added"),
            file_patch("pkg/core/helpers.py", ["    x = 1"]),
        ]
    )  # fmt: skip
    d = analyze(pr, load_preset(pr.repo))
    text = other_files_wordings(d, Phrases("zh", pr.number), Cited())[0]
    assert "`test_scoring.py`（新增）" in text
    assert "`ngram_spec_decode.cpp`（新增" in text and "`helpers.py`（新增" not in text


def test_a_file_whose_main_change_is_a_removal_says_so_among_the_other_files() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import file_patch, make_pr

    removed = [
        "    @classmethod",
        "    def _validate_pd_config(cls, config):",
        "        if config.pp and config.mtp:",
        "            raise ValueError(config)",
    ]
    pr = make_pr(
        files=[
            file_patch("pkg/platform.py", [], removed),
            file_patch("pkg/core/helpers.py", ["    x = 1"]),
        ]
    )  # fmt: skip
    d = analyze(pr, load_preset(pr.repo))
    text = other_files_wordings(d, Phrases("zh", pr.number), Cited())[0]
    assert "`platform.py`（删除了 `_validate_pd_config`）" in text


def test_files_a_moves_point_counts_are_no_other_files() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    moved = [
        {"path": f"tests/e2e/internal/c{i}.yaml", "previous_path": f"tests/e2e/c{i}.yaml",
         "status": "renamed", "additions": 0, "deletions": 0, "patch": ""}
        for i in range(5)
    ]  # fmt: skip
    code = file_patch("tests/e2e/runtime.py", ["x = 1"])
    d = analyze(make_pr(files=[*moved, code]), load_preset("vllm-project/vllm-ascend"))
    point = "5 个文件换了位置（如 `tests/e2e/c0.yaml` 移到 `tests/e2e/internal/c0.yaml`）"
    assert unnamed_files(d, point + "；改动还涉及 `runtime.py`") == 0
    assert unnamed_files(d, "改动还涉及 `runtime.py`") == 5  # no moves point: all five unnamed


def test_a_shared_basename_is_named_by_its_shortest_distinct_tail() -> None:
    from prdigest.core.models import FileFact, Provenance, Role
    from prdigest.write.template.phrases import display_names

    paths = [
        "vllm_ascend/attention/context_parallel/dsa_cp.py",
        "vllm_ascend/ops/triton/dsa_cp.py",
        "vllm_ascend/spec_decode/__init__.py",
        "vllm_ascend/patch/worker/__init__.py",
        "vllm_ascend/patch/__init__.py",
        "vllm_ascend/worker/model_runner_v1.py",
    ]
    files = [
        FileFact(id=f"f{i}", provenance=Provenance(kind="file", ref=p), path=p, status="modified",
                 role=Role.SOURCE)
        for i, p in enumerate(paths)
    ]  # fmt: skip
    assert display_names(files) == {
        paths[0]: "context_parallel/dsa_cp.py",
        paths[1]: "triton/dsa_cp.py",
        paths[2]: "spec_decode/__init__.py",
        paths[3]: "worker/__init__.py",
        paths[4]: "patch/__init__.py",
        paths[5]: "model_runner_v1.py",
    }
    for path, shown in display_names(files).items():
        assert path.endswith(shown)  # every shown name is the tail of a changed file's path


def test_a_long_point_loses_names_before_it_goes(dossiers: dict[int, Dossier]) -> None:
    from prdigest.write.template.paragraph import _Draft
    from prdigest.write.template.phrases import Phrases

    p = Phrases("zh", 1)
    a, b, c = (
        "`a.py` 中新增的 `u` 与 `v`",
        "`b.py` 中新增的 `x`、`y` 与 `w`",
        "`c.py` 中新增的 `z` 与 `q`",
    )

    def wordings() -> list[list[str]]:
        return [[a], [b, "`b.py` 中新增的 `x`、`y`"], [c, "`c.py` 中新增的 `z`"]]

    draft = _Draft(
        p, "值得精读。", [], "", wordings(), set(), {frozenset(): NO_OTHERS}, {}, [], [], limit=0
    )
    assert draft.shrink() and draft.points[-1] == "`c.py` 中新增的 `z`"  # the last point trims
    assert draft.shrink() and len(draft.points) == 2  # naming one thing, it goes
    assert "`z`" not in draft.text() and "`w`" in draft.text()
    while draft.shrink():
        pass
    assert draft.points == [a, "`b.py` 中新增的 `x`、`y`"]
    draft.limit = len(draft.text())  # nothing more fits: nothing comes back
    draft.regrow()
    assert draft.points == [a, "`b.py` 中新增的 `x`、`y`"]
    again = _Draft(
        p, "值得精读。", [], "", wordings(), set(), {frozenset(): NO_OTHERS}, {}, [], [], limit=0
    )
    while again.shrink():
        pass
    again.limit = 450  # what fits again comes back: the dropped point, then the names
    again.regrow()
    assert again.points == [a, b, c]


def test_the_names_point_says_fewer_names_before_a_point_of_definitions_goes() -> None:
    from prdigest.write.template.paragraph import _Draft
    from prdigest.write.template.phrases import Phrases

    p = Phrases("zh", 1)
    first = "`a.py` 中新增的 `resolve_backend`"
    names = [
        "改动围绕描述里的 `num_reqs`、`request_id`、`client_index`",
        "改动围绕描述里的 `num_reqs`、`request_id`",
        "改动围绕描述里的 `num_reqs`",
    ]
    last = "`b.py` 中改动的 `build_draft_attn_metadatas`"
    draft = _Draft(
        p, "值得选读。", [], "", [[first], names, [last]], set(), {frozenset(): NO_OTHERS}, {}, [],
        [], limit=0, thin={1},
    )  # fmt: skip
    assert draft.shrink() and draft.points == [first, names[1], last]
    assert draft.shrink() and draft.points == [first, names[2], last]
    assert draft.shrink() and draft.points == [first, names[2]]  # only then does a point go
    plain = _Draft(
        p, "值得选读。", [], "", [[first], names, [last]], set(), {frozenset(): NO_OTHERS}, {}, [],
        [], limit=0,
    )  # fmt: skip
    assert plain.shrink() and plain.points == [first, names[0]]  # any other point goes first


def test_only_the_names_point_is_marked_as_the_one_to_thin() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.models import Assessment, Level
    from prdigest.core.presets import load_preset
    from prdigest.write.template.focus import focus_points
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import file_patch, make_pr

    pr = make_pr(
        body="The speculator now keeps `seq_lens_upper_bound` and `draft_window`.",
        files=[
            file_patch(
                "pkg/spec.py",
                [
                    "def resolve_draft_backend(cfg):",
                    "    seq_lens_upper_bound = cfg.seq_lens_upper_bound",
                    "    draft_window = cfg.draft_window",
                    "    return pick(seq_lens_upper_bound, draft_window)",
                ],
            )
        ],
    )
    d = analyze(pr, load_preset(None, None))
    a = Assessment(pr.repo, pr.number, Level.WORTH_READING, 2.0, (), None, None)
    points = focus_points(d, a, Phrases("zh", 1), Cited())
    thin = [x.texts[0] for x in points if x.thin]
    assert len(thin) == 1 and "`seq_lens_upper_bound`" in thin[0]
    assert any("`resolve_draft_backend`" in x.texts[0] and not x.thin for x in points)


def test_a_why_sentence_dropped_while_shrinking_comes_back_before_a_point() -> None:
    from prdigest.write.template.focus import render_focus
    from prdigest.write.template.paragraph import _Draft
    from prdigest.write.template.phrases import Phrases

    p = Phrases("zh", 1)
    why = [
        "描述里说「the scheduler hangs when the predictor returns zero」",
        "设计上，`x <= 5` 时直接抛出 `ValueError`（fail closed）",
    ]
    points = [[f"`{name}.py` 中改动的 `{name}`"] for name in ("a", "b", "c", "d")]
    verdict = "值得选读。"
    draft = _Draft(
        p, verdict, list(why), "", points, set(), {frozenset(): NO_OTHERS}, {}, [], [], limit=0
    )
    while draft.shrink():
        pass
    assert draft.why == []
    # room for the verdict, both why sentences and two points: no more
    two_points = render_focus([w[0] for w in points[:2]], p)
    draft.limit = len(verdict) + sum(len(x) + 1 for x in why) + len(two_points)
    draft.regrow()
    assert draft.why == why  # the reason and the design come back first, in their order
    assert len(draft.points) <= 2


def test_a_long_rewrite_is_no_focus_point(dossiers: dict[int, Dossier]) -> None:
    from prdigest.core.models import EditFact, Provenance
    from prdigest.write.template.focus import MAX_EDIT_CHARS, _edit_point
    from prdigest.write.template.phrases import Cited, Phrases

    d = dossiers[56104]
    before, after = "x = compute(a, b)", "x = compute(a, b, c=" + "y" * MAX_EDIT_CHARS + ")"
    edit = EditFact(
        id="e1", provenance=Provenance(kind="file", ref="a.py"), path="a.py", before=before,
        after=after,
    )  # fmt: skip
    assert (
        _edit_point(d.model_copy(update={"edits": (edit,)}), Phrases("zh", 1), Cited(), {}) is None
    )
    short = edit.model_copy(update={"after": "x = compute(a, b, c)"})
    point = _edit_point(d.model_copy(update={"edits": (short,)}), Phrases("zh", 1), Cited(), {})
    assert point is not None and "`x = compute(a, b, c)`" in point.texts[0]


def test_the_other_files_sentence_names_fewer_files_before_it_goes() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch("pkg/a.py", ["def a():", "    return 1", "    x = 2"]),
            file_patch("pkg/b.py", ["def b():", "    return 2"]),
            file_patch("pkg/c.py", ["x = 3"]),
        ]
    )
    d = analyze(pr, load_preset(pr.repo))
    wordings = other_files_wordings(d, Phrases("zh", pr.number), Cited())
    assert len(wordings) == 3
    assert all(f"`{n}.py`" in wordings[0] for n in "abc") and "另有" not in wordings[0]
    assert "`a.py`" in wordings[-1] and "`b.py`" not in wordings[-1]
    assert "另有 2 个文件" in wordings[-1]  # the files not said are counted
    assert "（`a`）" in wordings[0]  # the definition the file's change sits in


def test_the_file_of_tests_a_point_names_is_not_listed_again(
    written: dict[tuple[int, str], tuple[Level, str | None, str]],
    dossiers: dict[int, Dossier],
) -> None:
    said_twice = []
    checked = 0
    for (number, lang), (_level, paragraph, _title) in written.items():
        if not paragraph:
            continue
        others = re.split(
            r"The change also touches|The rest of the change is in|改动还涉及|其余改动在", paragraph
        )
        if len(others) < 2:
            continue
        focus, rest = others[0], re.split(r"。|\. ", others[1])[0]  # the sentence alone
        for t in dossiers[number].tests:
            if f"`{t.name}`" in focus:
                checked += 1
                if f"`{t.path.rsplit('/', 1)[-1]}`" in rest:
                    said_twice.append((number, lang, t.path))
    assert checked  # some paragraphs name tests and list other files
    assert not said_twice


def test_a_docs_or_ci_change_names_its_own_other_files() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch("docs/Makefile", ["html:", "\tbash tools/rtd_build.sh"]),
            file_patch("mkdocs.yml", ["  - pymdownx.betterem:", "      smart_enable: !ENV X"]),
        ]
    )
    d = analyze(pr, load_preset(pr.repo))
    assert not d.source_lines_changed()
    wordings = other_files_wordings(d, Phrases("zh", pr.number), Cited())
    assert wordings and "`mkdocs.yml`" in wordings[0] and "`Makefile`" in wordings[0]
    # with source changed, docs files stay out of the sentence (the source files are read)
    with_source = make_pr(files=[*pr.files, file_patch("pkg/a.py", ["def a():", "    return 1"])])
    d = analyze(with_source, load_preset(pr.repo))
    wordings = other_files_wordings(d, Phrases("zh", pr.number), Cited())
    assert wordings and "`mkdocs.yml`" not in wordings[0] and "`a.py`" in wordings[0]


def _workflow_paragraph(title: str, path: str, lines: list[str]) -> str:
    """The skim paragraph of a PR that adds one workflow file."""
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    pr = make_pr(title=title, files=[file_patch(path, lines, status="added")])
    d = analyze(pr, load_preset(pr.repo))
    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    entry = TemplateWriter().write(d, skim, lang="zh", paragraph=True)
    assert entry.paragraph is not None
    return entry.paragraph


def test_a_workflow_change_names_its_new_job_and_what_its_keys_do() -> None:
    # a CI-only PR used to be said as a file and its line counts: its new job, its soft
    # failure and its run group are what a reviewer of the workflow checks
    job = [
        "jobs:",
        "  archive-report:",
        "    continue-on-error: true",
        "    concurrency:",
        "      group: daily-archive",
        "      cancel-in-progress: false",
        "    runs-on: ubuntu-latest",
        "    steps:",
        "      - run: python3 archive.py",
    ]
    text = _workflow_paragraph(
        "[CI] Archive failure reports", ".github/workflows/archive.yaml", job
    )
    assert says(text, "point", "step_added", names="`archive-report`")
    assert "`continue-on-error: true` 让失败不阻断这次运行" in text
    # GitHub keeps one run of a group going and one waiting: an older waiting run is cancelled
    assert "`concurrency` 分组：同组同时只跑一个，排队的只留最新一个，更早排队的会被取消" in text


def test_a_run_group_that_cancels_the_run_in_progress_is_said_as_that() -> None:
    workflow = [
        "on: push",
        "concurrency:",
        "  group: cache-${{ github.ref }}",
        "  cancel-in-progress: true",
        "jobs:",
        "  build-cache:",
        "    runs-on: ubuntu-latest",
        "    steps:",
        "      - run: make cache",
    ]
    text = _workflow_paragraph(
        "[CI] Build the lint cache on push", ".github/workflows/cache.yaml", workflow
    )
    assert "`cancel-in-progress: true` 让同组的新运行取消正在跑的旧运行" in text
    assert "排队的只留最新一个" not in text  # moot when the newer run cancels


def test_a_call_moved_after_the_value_it_now_takes_is_said_as_moved_code() -> None:
    from conftest import make_pr

    patch = (
        "@@ -1,5 +1,5 @@\n def setup(num_tokens, cfg):\n"
        "-    comm_type = select_comm_method(num_tokens, cfg)\n"
        "-    comm_impl = get_comm_impl(comm_type)\n"
        "     max_tokens_across_dp = sync_tokens(num_tokens)\n"
        "+    comm_type = select_comm_method(max_tokens_across_dp, cfg)\n"
        "+    comm_impl = get_comm_impl(comm_type)\n"
        "     return comm_impl"
    )
    pr = make_pr(
        title="[Bugfix] Use the DP-wide token count to select the comm method",
        files=[{"path": "pkg/platform.py", "status": "modified", "additions": 2, "deletions": 2,
                "patch": patch}],
    )  # fmt: skip
    from prdigest.analyze import analyze
    from prdigest.core.models import Assessment
    from prdigest.core.presets import load_preset

    d = analyze(pr, load_preset(pr.repo))
    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    entry = TemplateWriter().write(d, skim, lang="zh", paragraph=True)
    assert entry.paragraph is not None
    assert "换了位置或缩进的原有代码用到" in entry.paragraph
    assert "`get_comm_impl`" in entry.paragraph  # the line that moved unchanged


def test_names_the_new_code_uses_go_before_names_of_code_that_only_moved() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.models import Provenance, SalientFact
    from prdigest.core.presets import load_preset
    from prdigest.write.template.focus import focus_points

    from conftest import make_pr

    pr = make_pr(files=[{"path": "pkg/platform.py", "status": "modified", "additions": 3,
                         "deletions": 1, "patch": "@@ -1 +1 @@\n-a = 1\n+a = 2"}])  # fmt: skip

    def name(text: str, reason: str, change: str) -> SalientFact:
        where = Provenance(kind="file", ref="pkg/platform.py", line=1)
        return SalientFact(id=f"s:{text}", provenance=where, name=text, kind="identifier",
                           path="pkg/platform.py", line=1, score=1.0, reasons=(reason,),
                           change=change)  # fmt: skip

    salient = (
        name("max_tokens_across_dp", "relocated", "used"),
        name("padded_tokens", "introduced", "introduced"),
        name("legacy_tokens", "gone", "gone"),
    )
    d = analyze(pr, load_preset(pr.repo)).model_copy(update={"salient": salient})
    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    said = " ".join(p.texts[0] for p in focus_points(d, skim, Phrases("zh", 1), Cited()))
    # two kinds at most: the new and the gone code's names, not those of code that moved
    assert "新加的代码用到 `padded_tokens`" in said
    assert "删掉的代码用到 `legacy_tokens`" in said
    assert "`max_tokens_across_dp`" not in said


def test_a_class_said_with_its_generic_method_is_not_said_again_beside_it() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.focus import focus_points
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import make_pr

    patch = (
        "@@ -1,4 +1,4 @@ class Attention(nn.Module):\n"
        "-    use_streams = False\n"
        "+    use_streams = True\n"
        "     def forward(self, x):\n"
        "-        y = self.attn(x)\n"
        "+        y = self.attn_in_streams(x)\n"
        "         return y"
    )
    pr = make_pr(
        files=[{"path": "pkg/attention.py", "status": "modified", "additions": 2, "deletions": 2,
                "patch": patch}],
    )  # fmt: skip
    d = analyze(pr, load_preset(pr.repo))
    assert {s.name for s in d.symbols} >= {"Attention", "forward"}
    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    texts = [t for point in focus_points(d, skim, Phrases("zh", 1), Cited()) for t in point.texts]
    said = next(t for t in texts if "`forward`" in t)
    assert "`Attention` 的 `forward`" in said and said.count("`Attention`") == 1


def test_a_bare_todo_goes_before_a_third_focus_point_an_owned_one_stays() -> None:
    from prdigest.write.template.paragraph import _Draft
    from prdigest.write.template.phrases import Phrases

    p = Phrases("zh", 1)
    points = [[f"第{i}处改动涉及 `name_{i}_{'x' * 30}`"] for i in range(3)]

    def draft(weak: int) -> _Draft:
        made = _Draft(
            p, "值得精读。", [], "", [list(w) for w in points], set(), {frozenset(): NO_OTHERS}, {}, [],
            ["代码里留下了 `TODO`（`a.py`），需确认有人跟进"], weak,
        )  # fmt: skip
        made.limit = len(made.text()) - 5  # one piece must go
        while len(made.text()) > made.limit and made.shrink():
            pass
        return made

    bare = draft(weak=1)
    assert len(bare.wordings) == 3 and not bare.followups  # the TODO went, the points stayed
    owned = draft(weak=0)
    assert owned.followups and len(owned.wordings) == 2  # an owned TODO outranks a 3rd point


def test_a_todo_is_weak_unless_it_names_an_owner_or_topic() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.followups import weighed_followups
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import file_patch, make_pr

    def weak(line: str) -> list[bool]:
        pr = make_pr(files=[file_patch("vllm/x.py", ["def f():", f"    {line}", "    return 1"])])
        d = analyze(pr, load_preset(pr.repo))
        items = weighed_followups(d, Phrases("zh", 1), Cited(), 3)
        return [flag for text, flag in items if "TODO" in text]

    assert weak("# TODO: handle the hybrid case") == [True]
    assert weak("# TODO(HMA): handle the hybrid case") == [False]


def test_the_other_files_count_is_of_the_files_the_paragraph_does_not_name() -> None:
    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch("pkg/core.py", [f"    value_{i} = compute_{i}(x)" for i in range(6)]),
            *(file_patch(f"pkg/m{i}.py", [f"VALUE_{i} = {i}"]) for i in range(6)),
            file_patch("pkg/__init__.py", ["from .core import *"]),
        ]
    )
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    d = analyze(pr, load_preset(pr.repo))
    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    paragraph = TemplateWriter().write(d, skim, lang="zh", paragraph=True).paragraph or ""
    said = re.search(r"另有 (\d+) 个文件", paragraph)
    assert said is not None, paragraph
    unnamed = [f.path for f in d.files if f"`{f.path.rsplit('/', 1)[-1]}`" not in paragraph]
    assert int(said.group(1)) == len(unnamed)  # `__init__.py` is counted, never listed
    assert "pkg/__init__.py" in unnamed


def test_an_about_figure_has_no_direction_and_stays_out_of_the_title() -> None:
    from prdigest.write.template.title import RELATIVE

    assert RELATIVE.search("+4.6%") and RELATIVE.search("-5~9%") and RELATIVE.search("3.8x")
    assert RELATIVE.search("~1.4%") is None  # "about 1.4 %": up or down is not said


def test_a_name_only_the_title_gives_is_said_as_the_titles() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.focus import focus_points
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import file_patch, make_pr

    pr = make_pr(
        title="[Perf] Split mixed ChunkedPrefill batches",
        body="Decode and prefill requests now get separate attention calls.",
        files=[file_patch("vllm/attn.py", ["    if state == ChunkedPrefill:", "        y = 1"])],
    )
    d = analyze(pr, load_preset(pr.repo))
    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    texts = [t for point in focus_points(d, skim, Phrases("zh", 1), Cited()) for t in point.texts]
    said = [t for t in texts if "`ChunkedPrefill`" in t]
    assert said and all("标题里的" in t and "描述" not in t for t in said)


def test_a_small_prs_long_rewrite_is_said_when_the_paragraph_has_room() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import make_pr

    old = "pow = triton.language.extra.cann.libdevice.pow"
    new = "pow = triton.language.extra.libdevice.pow"  # 85 characters with the old line
    patch = f"@@ -21,5 +21,5 @@\n import torch\n-{old}\n+{new}\n \n \n @triton.jit"
    pr = make_pr(
        title="[BugFix] Use the generic triton pow",
        files=[{"path": "pkg/penalties.py", "status": "modified", "additions": 1,
                "deletions": 1, "patch": patch}],
    )  # fmt: skip
    d = analyze(pr, load_preset(pr.repo))
    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    paragraph = TemplateWriter().write(d, skim, lang="zh", paragraph=True).paragraph or ""
    assert f"`{old}`" in paragraph and f"`{new}`" in paragraph, paragraph
    assert len(paragraph) <= 450


def test_a_tiny_change_without_runtime_code_says_both() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    pr = make_pr(
        title="[CI] Set PRE_COMMIT_HOME for pre-commit",
        files=[file_patch(".github/workflows/pr_test.yaml", ["          PRE_COMMIT_HOME: /tmp/x"])],
    )
    d = analyze(pr, load_preset(pr.repo))
    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    paragraph = TemplateWriter().write(d, skim, lang="zh", paragraph=True).paragraph or ""
    assert says(paragraph, "why", "small_no_source", lines=1, roles="CI"), paragraph


def _summary_of(body: str, title: str = "[Misc] Tidy the store loader") -> str | None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.why import summary_sentence

    from conftest import file_patch, make_pr

    pr = make_pr(title=title, body=body, files=[file_patch("vllm/x.py", ["a = 2"], ["a = 1"])])
    found = summary_sentence(analyze(pr, load_preset(pr.repo)))
    return found[1] if found else None


def test_a_body_without_a_reason_is_summarised_by_its_first_telling_sentence() -> None:
    """The purpose section's first sentence that says more than the title, standing alone; not
    a pointer to another PR, a thank-you, a command line or the title again."""
    body = (
        "## Purpose\n"
        "Tidy up the store loader code here.\n\n"  # the title again
        "Same to https://github.com/o/r/pull/7 for the release branch.\n\n"
        "Thanks to @bob for the first draft of this loader.\n\n"
        "vllm serve /model --port 8000 --max-model-len 4096 for the check\n\n"
        "The loader now reads each shard once and keeps the index in memory between calls.\n"
        "## Test Plan\n"
        "pytest tests/test_loader.py\n"
    )
    assert _summary_of(body, title="[Misc] Tidy up the store loader code") == (
        "The loader now reads each shard once and keeps the index in memory between calls"
    )
    # only the purpose section: a test or result line is no summary
    assert (
        _summary_of("## Test Plan\nThe loader now reads each shard once in the new test.\n") is None
    )


def test_a_summary_is_said_only_where_the_body_gives_no_reason_and_room_is_left() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    purpose = "The loader reads each shard once per call now."  # short: Chinese stays the most
    skim = Assessment("vllm-project/vllm", 1, Level.SKIM, 1.0, (), None, None)
    for reason, said in (
        ("", True),
        (" This avoids an OOM because shards were read twice.", False),
    ):
        pr = make_pr(
            title="[Misc] Tidy the store loader",
            body=f"## Purpose\n{purpose}{reason}\n",
            files=[file_patch("vllm/loader.py", ["def load():", "    return 2"], ["x = 1"])],
        )
        d = analyze(pr, load_preset(pr.repo))
        paragraph = TemplateWriter().write(d, skim, lang="zh", paragraph=True).paragraph or ""
        assert ("reads each shard once" in paragraph) is said, paragraph
        assert len(paragraph) <= 450


def test_a_reason_that_only_points_back_gives_way_to_the_purpose() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    purpose = "The scheduler now clears the draft tokens of a preempted request."
    skim = Assessment("vllm-project/vllm", 1, Level.SKIM, 1.0, (), None, None)
    files = [file_patch("vllm/v1/core/sched/scheduler.py", ["    req.drafts.clear()"], [])]
    for reason, quoted in (
        # says nothing without the sentence before it, or only points at another PR
        ("Drafts were kept. That causes two crashes.", purpose),
        ("Drafts were kept. This causes the crash fixed in #1234 before.", purpose),
        # still tells the effect: quoted
        ("It crashed because the drafts of a preempted request were kept.", "drafts of a"),
    ):
        pr = make_pr(
            title="[Bugfix] Clear drafts on preemption",
            body=f"## Purpose\n{purpose}\n\n## Background\n{reason}\n",
            files=files,
        )
        d = analyze(pr, load_preset(pr.repo))
        paragraph = TemplateWriter().write(d, skim, lang="zh", paragraph=True).paragraph or ""
        assert quoted[:40] in paragraph, (reason, paragraph)


def test_a_file_its_rewrite_point_names_gets_no_second_point_of_line_counts() -> None:
    from prdigest.core.models import Assessment

    from conftest import one_file_dossier

    patch = (
        "@@ -10,3 +10,3 @@\n"
        "     auto x = tilingData->base;\n"
        "-    auto rows = tilingData->stage2RowFactor;\n"
        "+    auto rows = curRowFactor;\n"
        "     return rows;"
    )
    d = one_file_dossier("csrc/hc_pre/split_core.h", patch)
    assert not d.symbols and d.edits  # no definition to name: the file and its rewrite
    skim = Assessment(d.repo, d.number, Level.SKIM, 1.0, (), None, None)
    paragraph = TemplateWriter().write(d, skim, lang="zh", paragraph=True).paragraph or ""
    assert "`curRowFactor`" in paragraph  # the rewrite point
    assert "`split_core.h`（+1/−1）" not in paragraph


def test_a_second_rewrite_in_another_function_is_not_said_under_the_first() -> None:
    from prdigest.core.models import Assessment

    from conftest import one_file_dossier

    patch = (
        "@@ -10,3 +10,3 @@ def compute_transfer_block_ids(request):\n"
        "     total = request.prompt_len\n"
        "-    n = total // cfg.compress_ratio[i]\n"
        "+    n = total // cfg.group_compress_ratio[i]\n"
        "     return n\n"
        "@@ -40,3 +40,3 @@ def request_finished(request):\n"
        "     blocks = request.blocks\n"
        "-    freed = len(computed_block_ids)\n"
        "+    freed = sum(computed_block_lens)\n"
        "     return blocks"
    )
    d = one_file_dossier("pkg/connector.py", patch)
    assert {e.symbol for e in d.edits} == {"compute_transfer_block_ids", "request_finished"}
    skim = Assessment(d.repo, d.number, Level.SKIM, 1.0, (), None, None)
    paragraph = TemplateWriter().write(d, skim, lang="zh", paragraph=True).paragraph or ""
    for edit in d.edits:  # each rewrite said, if at all, under its own function
        said = paragraph.find(f"`{edit.after}`")
        other = next(e for e in d.edits if e is not edit)
        if said >= 0:
            assert paragraph.rfind(f"`{other.symbol}` 里", 0, said) < paragraph.rfind(
                f"`{edit.symbol}` 里", 0, said
            ), paragraph


def test_a_field_renamed_in_its_class_is_not_said_as_new() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.focus import _field_point

    from conftest import make_pr

    def point(added: str) -> str | None:
        patch = (
            "@@ -1,3 +1,3 @@\n class Runner310:\n-    _mtp_spec_dummy_capture: bool = False\n"
            f"+    {added}: bool = False\n     mode: str = 'eager'"
        )
        change = {"path": "vllm_ascend/runner.py", "additions": 1, "deletions": 1, "patch": patch}
        d = analyze(make_pr(files=[change]), load_preset("vllm-project/vllm-ascend"))
        return _field_point(d, Phrases("zh", 1), Cited(), {})

    assert point("_spec_dummy_capture") is None  # renamed: the old name is in the new one
    said = point("use_lease_release")
    assert said is not None and "`use_lease_release`" in said


def test_a_large_pr_with_one_place_to_read_promises_no_order() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.models import Assessment, Level
    from prdigest.core.presets import load_preset
    from prdigest.write.template.paragraph import paragraph_for

    from conftest import file_patch, make_pr

    body = [f"    value_{i} = compute_{i}(config)" for i in range(120)]
    files = [file_patch("pkg/coverage.py", ["def build_report(config):", *body], status="added")]
    files += [
        file_patch(f"docs/source/page_{i}.md", [f"line {j}" for j in range(100)]) for i in range(7)
    ]
    d = analyze(make_pr(files=files), load_preset(None, None))
    a = Assessment(d.repo, d.number, Level.SKIM, 1.0, (), None, None)
    text, _cited = paragraph_for(d, a, "zh", None)
    assert "`build_report`" in text
    assert "按下面的顺序读" not in text and "抓住下面几处" not in text, text


def test_the_copies_a_point_reads_once_are_not_counted_again_as_other_files() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.models import Assessment, Level
    from prdigest.core.presets import load_preset
    from prdigest.write.template.paragraph import paragraph_for

    from conftest import file_patch, make_pr

    bump = (["ARG TORCH_NPU=2.10.0", "ARG CANN=8.3"], ["ARG TORCH_NPU=2.9.0", "ARG CANN=8.2"])
    files = [
        file_patch(
            ".github/workflows/_e2e_test.yaml", ["  image: npu:2.10.0"], ["  image: npu:2.9"]
        ),
        file_patch("Dockerfile.310p", *bump),
        file_patch("Dockerfile.310p.openEuler", *bump),
        file_patch(".github/workflows/pr_test_light.yaml", ["  timeout: 60"], ["  timeout: 45"]),
    ]
    d = analyze(make_pr(files=files), load_preset("vllm-project/vllm-ascend"))
    assert any(f.duplicate_of for f in d.files)
    a = Assessment(d.repo, d.number, Level.SKIM, 1.0, (), None, None)
    text, _cited = paragraph_for(d, a, "zh", None)
    assert "`Dockerfile.310p` 与 `Dockerfile.310p.openEuler` 中是同一改动" in text, text
    assert "另有" not in text, text  # the four files are all said


def test_the_copies_said_are_those_of_the_source_before_those_of_its_tests() -> None:
    # a fix made in two backends and in both backends' tests: the second backend is what the
    # reader must know of (said by name), not the test's copy
    from prdigest.analyze import analyze
    from prdigest.core.models import Assessment, Level
    from prdigest.core.presets import load_preset
    from prdigest.write.template.paragraph import paragraph_for

    from conftest import file_patch, make_pr

    fix = (
        [
            "        w = w.transpose(1, 2).contiguous()",
            "        s = s.transpose(1, 2).contiguous()",
        ],
        ["        w = w.transpose(1, 2)", "        s = s.transpose(1, 2)"],
    )
    check = (
        ["    assert w.is_contiguous()", "    assert s.is_contiguous()"],
        ["    assert w is not None", "    assert s is not None"],
    )
    files = [
        file_patch("tests/ut/a310/test_moe.py", *check),
        file_patch("tests/ut/ops/test_moe.py", *check),
        file_patch("pkg/a310/moe.py", *fix),
        file_patch("pkg/ops/moe.py", *fix),
    ]
    d = analyze(make_pr(files=files), load_preset("vllm-project/vllm-ascend"))
    a = Assessment(d.repo, d.number, Level.SKIM, 1.0, (), None, None)
    text, _cited = paragraph_for(d, a, "zh", None)
    assert "`a310/moe.py` 与 `ops/moe.py` 中是同一改动" in text, text


def test_a_test_switched_off_comes_before_a_todo_among_the_follow_ups() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.followups import weighed_followups
    from prdigest.write.template.phrases import Cited, Phrases

    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch(
                "vllm_ascend/spec_decode/proposer.py",
                ["    # TODO(alice): drop once GLM graphs work", "    use_graph = not is_glm"],
            ),
            file_patch(
                "tests/e2e/test_moe_310p.py",
                ['@pytest.mark.skip("Probabilistic failure, need fix")', "def test_moe_tp4():"],
            ),
        ]
    )
    d = analyze(pr, load_preset("vllm-project/vllm-ascend"))
    first = weighed_followups(d, Phrases("zh", 1), Cited(), 1)
    assert len(first) == 1 and "@pytest.mark.skip" in first[0][0], first


def test_monkeypatch_setenv_is_said_to_set_a_variable_not_to_swap_a_dependency() -> None:
    from prdigest.core.models import Provenance, TechniqueFact
    from prdigest.write.template.focus import technique_phrase

    def fact(label: str) -> TechniqueFact:
        return TechniqueFact(
            id="q1",
            provenance=Provenance(kind="file", ref="tests/test_a.py"),
            technique="monkeypatch",
            label=label,
            path="tests/test_a.py",
        )

    p = Phrases("zh", 1)
    assert technique_phrase(fact("monkeypatch.setenv"), p, "`monkeypatch.setenv`") == (
        "用 `monkeypatch.setenv` 设置环境变量"
    )
    assert technique_phrase(fact("monkeypatch.setattr"), p, "`monkeypatch.setattr`") == (
        "用 `monkeypatch.setattr` 替换依赖"
    )


@pytest.mark.parametrize(
    ("subject", "kind", "title"),
    [
        # what changed comes after the colon; the words before it name where
        (
            "w4a8 dispatch_ffn_combine: support x_active_mask",
            "feature",
            "w4a8 dispatch_ffn_combine：支持 x_active_mask",
        ),
        # a verb before the colon is the change itself, not a place
        ("Refactor balance schedule: drop copied run_engine_core", "refactor", None),
    ],
)
def test_a_multiword_place_before_a_colon_is_the_component_when_a_verb_follows(
    dossiers: dict[int, Dossier], subject: str, kind: str, title: str | None
) -> None:
    said = title_for(_retitled(dossiers[56104], subject, kind), "zh")
    if title is None:
        assert not said.startswith("Refactor balance schedule：")
    else:
        assert said == title


def _points_of(files: list[dict[str, object]], body: str = "") -> list[str]:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.focus import focus_points

    from conftest import make_pr

    pr = make_pr(files=files, body=body)
    d = analyze(pr, load_preset(pr.repo))
    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    return [point.texts[0] for point in focus_points(d, skim, Phrases("zh", 1), Cited())]


_RUNNER_PATCH = (
    "@@ -20,10 +20,8 @@ class Runner:\n"
    "     def initialize_kv_cache(\n"
    "         self,\n"
    "         kv_cache_config,\n"
    "-        is_profiling: bool = False,\n"
    "     ) -> None:\n"
    "-        self.initialize_attn_backend(kv_cache_config, is_profiling=is_profiling)\n"
    "+        self.initialize_attn_backend(kv_cache_config)\n"
    "         self.may_reinitialize_input_batch(kv_cache_config)\n"
    "-        if not is_profiling:\n"
    "-            self.register_kv_caches(kv_cache_config)\n"
    "+        self.register_kv_caches(kv_cache_config)\n"
    "         return None"
)


def test_a_function_that_changed_its_parameters_is_said_with_them() -> None:
    files = [{"path": "pkg/runner.py", "status": "modified", "additions": 2, "deletions": 4,
              "patch": _RUNNER_PATCH}]  # fmt: skip
    said = next(t for t in _points_of(files) if "`initialize_kv_cache`" in t)
    assert "`initialize_kv_cache`（去掉参数 `is_profiling`）" in said


def test_a_class_whose_changed_methods_are_named_is_not_named_beside_them() -> None:
    # the first hunk's lines sit in a method git shows only as its class (the hunk header)
    patch = (
        "@@ -40,2 +40,4 @@ class Runner:\n"
        "         batch = self.pad(batch)\n"
        "+        batch = self.sort(batch)\n"
        "+        batch = self.trim(batch)\n"
        "         return batch\n"
        "@@ -80,2 +82,4 @@ class Runner:\n"
        "     def step(self, batch):\n"
        "+        self.steps += 1\n"
        "+        self.log_step(batch)\n"
        "         return self.model(batch)"
    )
    files = [{"path": "pkg/runner.py", "status": "modified", "additions": 4, "deletions": 0,
              "patch": patch}]  # fmt: skip
    said = next(t for t in _points_of(files) if "改动的 `step`" in t)
    assert "`Runner`" not in said
    # the body talks about the class: then it is named as a changed definition
    named = " ".join(_points_of(files, body="`Runner` now passes its mode to the model."))
    assert "改动的 `Runner`（描述点名）" in named


def test_a_new_class_implies_its_methods_unless_the_body_talks_about_one() -> None:
    patch = (
        "@@ -0,0 +1,8 @@\n"
        "+class SparseAttention(AttentionLayerBase):\n"
        "+    def get_attn_backend(self):\n"
        "+        return SparseBackend\n"
        "+\n"
        "+    def warm_up(self, batch):\n"
        "+        self.cache = batch\n"
        "+        self.ready = True\n"
        "+        return batch\n"
    )
    files = [{"path": "pkg/models/sparse.py", "status": "added", "additions": 8, "deletions": 0,
              "patch": patch}]  # fmt: skip
    plain = " ".join(_points_of(files))
    assert "`SparseAttention`" in plain and "`get_attn_backend`" not in plain
    body = "The runner now asks each layer's `get_attn_backend()` for its backend."
    named = " ".join(_points_of(files, body=body))
    assert "`SparseAttention`" in named and "`get_attn_backend`" in named
    assert "`warm_up`" not in named  # the methods the body does not name stay implied


def test_the_audience_is_said_without_the_presets_list_of_examples(
    dossiers: dict[int, Dossier],
) -> None:
    from prdigest.core.models import AreaText
    from prdigest.write.template.paragraph import paragraph_for

    d = dossiers[56104]
    must = Assessment(d.repo, d.number, Level.MUST_READ, 3.0, (), "attention", "attention")
    listed = AreaText(
        name="Attention", audience="维护 Ascend Attention 后端（MLA、SFA、DSA、FA3）的工程师"
    )
    text, _cited = paragraph_for(d, must, "zh", listed)
    # the list reads as what the PR touched: the readers are said without it
    assert "维护 Ascend Attention 后端的工程师" in text and "MLA、SFA" not in text
    single = AreaText(name="310P", audience="维护 Atlas 300I（310P）推理卡支持的工程师")
    assert "Atlas 300I（310P）推理卡" in paragraph_for(d, must, "zh", single)[0]


def test_an_environment_variable_the_new_code_reads_is_not_said_as_new() -> None:
    # the diff shows a read, not whether the project (or CANN) had the variable before
    patch = (
        "@@ -10,2 +10,4 @@ class A5DeviceAdaptor:\n"
        "     def npu_mm_reduce_scatter_base(self, x):\n"
        '+        expansion_mode = os.environ.get("HCCL_OP_EXPANSION_MODE")\n'
        "+        x = self.scatter(x, expansion_mode)\n"
        "         return x"
    )
    files = [{"path": "vllm_ascend/device/device_op.py", "status": "modified", "additions": 2,
              "deletions": 0, "patch": patch}]  # fmt: skip
    said = " ".join(_points_of(files))
    assert "读取环境变量 `HCCL_OP_EXPANSION_MODE`" in said
    assert "新增环境变量" not in said and "引入了环境变量" not in said


def test_the_test_ratio_is_said_only_when_the_test_lines_hold_tests() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    skim = Assessment("vllm-project/vllm", 1, Level.SKIM, 1.0, (), None, None)
    code = file_patch("vllm/v1/worker/gpu_worker.py", ["    ratio = 0.7"], ["    ratio = 0.95"])
    thresholds = file_patch(
        "tests/e2e/test_memory.py", ["    LIMIT = 0.7"] * 9, ["    LIMIT = 0.95"] * 9
    )
    new_test = file_patch(
        "tests/v1/test_worker.py",
        ["def test_ratio_is_lowered():", *["    assert worker.ratio == 0.7"] * 8],
    )
    for tests, said in ((thresholds, False), (new_test, True)):
        pr = make_pr(title="[Misc] Lower the memory ratio", files=[code, tests])
        d = analyze(pr, load_preset(pr.repo))
        paragraph = TemplateWriter().write(d, skim, lang="zh", paragraph=True).paragraph or ""
        assert ("测试却有" in paragraph or "配了" in paragraph) is said, paragraph


def test_a_pr_without_source_is_said_with_every_role_it_changes_an_example_as_an_example() -> None:
    # "只改了 CI、文档、测试" of a PR that also changes a fourth kind of file would be false; a
    # script under examples/ is filed with the docs but is no document
    from prdigest.analyze import analyze
    from prdigest.core.models import Assessment, Level
    from prdigest.core.presets import load_preset
    from prdigest.write.template.paragraph import paragraph_for

    from conftest import file_patch, make_pr

    files = [
        file_patch(".github/workflows/configs/nightly.yaml", ["  - dcp"], ["  - pcp"]),
        file_patch("docs/source/guide.md", ["DCP only."], ["PCP and DCP."]),
        file_patch("examples/offline_long_seq.py", ["dcp = 2"], ["pcp = 2"]),
        file_patch("tests/e2e/configs/model.yaml", ["dcp: 2"], ["pcp: 2"]),
        file_patch("requirements.txt", ["torch==2.10"], ["torch==2.9"]),
    ]
    d = analyze(make_pr(files=files), load_preset("vllm-project/vllm-ascend"))
    a = Assessment(d.repo, d.number, Level.SKIM, 1.0, (), None, None)
    text, _cited = paragraph_for(d, a, "zh", None)
    roles = "CI、文档、示例、测试、依赖"
    assert says(text, "why", "small_no_source", lines=10, roles=roles), text


def test_a_file_whose_point_is_dropped_is_said_among_the_other_files_before_a_smaller_one() -> None:
    # #13009's new 1,067-line msa_m3.py lost its point to the length limit and was then hidden
    # in "另有 3 个文件" behind two small files: the other files are chosen from the final text
    from prdigest.write.template.paragraph import _Draft
    from prdigest.write.template.phrases import Phrases

    p = Phrases("zh", 1)
    others = OtherFiles(
        ("`big.py`（新增）", "`small.py`"),
        ("pkg/big.py", "pkg/small.py"),
        ("`big.py`", "`small.py`"),
        1,
    )
    points = [["`a.py` 中新增的 `u`"], ["`b.py` 中新增的 `v`"], ["`big.py` 中新增的 `x`"]]
    draft = _Draft(
        p, "值得精读。", [], "", points, set(), {frozenset(): others}, {}, [], [], limit=0
    )
    assert "`small.py`。" in draft.text() and draft.text().count("`big.py`") == 1
    assert draft.shrink() and len(draft.points) == 2  # the third point goes
    assert "`big.py`（新增）" in draft.text() and "`small.py`" not in draft.text()


def test_the_file_that_carries_most_source_lines_is_named_before_less_salient_files() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.focus import focus_points

    from conftest import file_patch, make_pr

    def function(name: str, lines: int) -> list[str]:
        return (
            [f"def {name}(x):"] + [f"    y{i} = x + {i}" for i in range(lines)] + ["    return x"]
        )

    pr = make_pr(
        title="[Feature] Route requests with `pick_route`",
        body="`pick_route` picks the route; `warm_cache` warms it; `count_rows` counts them.",
        files=[
            file_patch("pkg/router.py", function("pick_route", 4)),
            file_patch("pkg/cache.py", function("warm_cache", 4)),
            file_patch("pkg/extra.py", function("count_rows", 4)),
            file_patch("pkg/kernel.py", function("tile_rows", 40)),  # 42 of the 60 source lines
        ],
    )
    d = analyze(pr, load_preset(None, None))
    a = Assessment(pr.repo, pr.number, Level.WORTH_READING, 2.0, (), None, None)
    points = [x.texts[0] for x in focus_points(d, a, Phrases("zh", 1), Cited())]
    # the body names the small files' functions, not the big one: salience alone left it out
    assert "`pick_route`" in points[0]
    assert "`kernel.py`" in points[1] and "`tile_rows`" in points[1]


def test_a_function_extracted_from_another_is_said_as_extracted_not_new() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.focus import focus_points

    from conftest import make_pr

    block = [
        "        for req_info in scheduler_output.recomputed_reqs or []:",
        "            outputs[req_info.client_index].append(",
        "                EngineCoreOutput(request_id=req_info.request_id,",
        '                                 stop_reason="recomputed"))',
    ]
    patch = (
        "@@ -10,7 +10,4 @@ class Scheduler:\n"
        "     def update_from_output(self, scheduler_output):\n"
        "         outputs = self.collect(scheduler_output)\n"
        + "\n".join("-" + x for x in block)
        + "\n+        self._add_recomputed_outputs(outputs, scheduler_output)\n"
        "         return outputs\n"
        "@@ -40,0 +38,5 @@ class Scheduler:\n"
        "+    def _add_recomputed_outputs(self, outputs, scheduler_output):\n"
        + "\n".join("+" + x for x in block)
    )
    change = {"path": "pkg/sched.py", "status": "modified", "additions": 6, "deletions": 4}
    pr = make_pr(title="[Refactor] Tidy the scheduler", files=[{**change, "patch": patch}])
    d = analyze(pr, load_preset(None, None))
    a = Assessment(pr.repo, pr.number, Level.WORTH_READING, 2.0, (), None, None)
    text = " ".join(x.texts[0] for x in focus_points(d, a, Phrases("zh", 1), Cited()))
    assert "从 `update_from_output` 抽出的 `_add_recomputed_outputs`" in text
    assert "新增的 `_add_recomputed_outputs`" not in text


def test_a_new_function_put_in_another_classs_place_is_said_as_replacing_it() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.focus import focus_points

    from conftest import file_patch, make_pr

    lines = [
        "def _patched_forward(self, hidden_states):",
        "    hidden_states = self.norm(hidden_states)",
        "    return self.head(hidden_states)",
        "",
        "",
        "Qwen3_5MultiTokenPredictor.forward = _patched_forward",
        "self.cache = _patched_forward",  # state of its own: no replacement
    ]
    pr = make_pr(files=[file_patch("pkg/patch/patch_qwen3_5.py", lines, status="added")])
    d = analyze(pr, load_preset(None, None))
    assert [s.replaces for s in d.symbols if s.name == "_patched_forward"] == [
        "Qwen3_5MultiTokenPredictor.forward"
    ]
    a = Assessment(pr.repo, pr.number, Level.WORTH_READING, 2.0, (), None, None)
    text = " ".join(x.texts[0] for x in focus_points(d, a, Phrases("zh", 1), Cited()))
    assert "替换 `Qwen3_5MultiTokenPredictor.forward` 的 `_patched_forward`" in text


def test_a_reported_figure_says_which_way_it_went() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset
    from prdigest.write.template.why import why_parts

    from conftest import file_patch, make_pr

    pr = make_pr(
        title="[Perf] Replace the ngram op",
        body="### Test\nTTFT 221 -> 233 at input 128.\n",
        files=[file_patch("pkg/ngram.py", ["def spec(x):", "    return kernel(x)"])],
    )
    d = analyze(pr, load_preset(None, None))
    assert [(c.before, c.after) for c in d.comparisons] == [("221", "233")]
    said = " ".join(why_parts(d, Phrases("zh", 1), Cited()))
    assert says(said, "why_body", "comparison_up") and not says(said, "why_body", "comparison")
    fell = d.model_copy(
        update={"comparisons": (d.comparisons[0].model_copy(update={"after": "200"}),)}
    )
    assert says(" ".join(why_parts(fell, Phrases("zh", 1), Cited())), "why_body", "comparison_down")


def test_figures_with_thousands_separators_compare_as_numbers() -> None:
    from prdigest.write.template.why import _comparison_key

    assert _comparison_key("1,012 tok/s", "3,856 tok/s") == "comparison_up"
    assert _comparison_key("9,500 tok/s", "12,000 tok/s") == "comparison_up"  # not 9 > 1
    assert _comparison_key("45.2ms", "44.9ms") == "comparison_down"
    assert _comparison_key("fast", "slow") == "comparison"


def test_a_new_base_class_made_of_a_classs_moved_methods_is_said_as_extracted() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import make_pr

    methods = [
        "    def propose(self, batch):",
        "        drafts = self._run_model(batch)",
        "        return self._generate_draft(drafts)",
        "",
        "    def _run_model(self, batch):",
        "        hidden = self.model(batch.input_ids)",
        "        return self.head(hidden)",
        "",
        "    def _generate_draft(self, drafts):",
        "        tokens = drafts.argmax(dim=-1)",
        "        return tokens.to(self.device)",
    ]
    old = "\n".join(["-class AscendEagleSpeculator(EagleSpeculator):", *("-" + x for x in methods)])
    eagle = (
        f"@@ -1,{len(methods) + 1} +1,2 @@\n{old}\n"
        "+class AscendEagleSpeculator(AscendAutoRegressiveSpeculator, EagleSpeculator):\n"
        "+    pass"
    )
    base = f"@@ -0,0 +1,{len(methods) + 1} @@\n" + "\n".join(
        [
            "+class AscendAutoRegressiveSpeculator(AutoRegressiveSpeculator):",
            *("+" + x for x in methods),
        ]
    )
    files = [
        {
            "path": "pkg/eagle/speculator.py",
            "status": "modified",
            "additions": 2,
            "deletions": 12,
            "patch": eagle,
        },
        {
            "path": "pkg/autoregressive/speculator.py",
            "status": "added",
            "additions": 12,
            "deletions": 0,
            "patch": base,
        },
    ]
    d = analyze(make_pr(files=files), load_preset(None, None))
    [cls] = [s for s in d.symbols if s.name == "AscendAutoRegressiveSpeculator"]
    assert (cls.extracted, cls.extracted_from) == (True, "AscendEagleSpeculator")


def _definitions(last: str = "drain_queues") -> list[str]:
    """A file's added lines: a large function, `plan_batches`, then a small one, ``last``."""
    body = [f"    total += step_{i}(total)" for i in range(30)]
    return ["def plan_batches(total):", *body, "", f"def {last}(q):", "    q.clear()"]


def test_a_file_whose_point_went_is_said_with_its_most_telling_definition() -> None:
    """A point that named a file's main definition may be dropped for length; the other-files
    sentence then says that definition, not the next one; while a point says it, the next."""
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch("pkg/core/engine.py", _definitions()),
            file_patch("pkg/core/helpers.py", ["def tidy(x):", "    return x"]),
        ]
    )  # fmt: skip
    d = analyze(pr, load_preset(pr.repo))
    cited = Cited()
    cited.name("plan_batches", "pkg/core/engine.py")  # as a point that may go does
    files = other_files(d, Phrases("zh", pr.number), cited)
    assert "`engine.py`（`plan_batches`）" in files.unnamed_in("").said
    said_by_a_point = files.unnamed_in("… `plan_batches` …").said
    assert "`engine.py`（`drain_queues`）" in said_by_a_point  # not said twice


def test_the_other_files_sentence_says_a_definition_name_once() -> None:
    """Two files that each define the name a dropped point named: the first file is said with
    it, the second with its next definition, not the same name again."""
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    pr = make_pr(
        files=[
            file_patch("pkg/core/engine.py", _definitions()),
            file_patch("pkg/core/worker.py", _definitions("flush_worker")),
        ]
    )  # fmt: skip
    d = analyze(pr, load_preset(pr.repo))
    cited = Cited()
    cited.name("plan_batches", "pkg/core/engine.py")
    said = other_files(d, Phrases("zh", pr.number), cited).unnamed_in("").said
    assert sum("`plan_batches`" in s for s in said) == 1, said


def test_a_name_a_point_gave_another_file_is_not_said_for_this_one() -> None:
    """The same name defined in two files: cited for one file's definition (its link goes
    there), it is not the other file's most telling definition in the other-files sentence."""
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import file_patch, make_pr

    pr = make_pr(files=[file_patch("pkg/core/engine.py", _definitions())])
    d = analyze(pr, load_preset(pr.repo))
    cited = Cited()
    cited.name("plan_batches", "pkg/core/planner.py")  # another file's definition
    said = other_files(d, Phrases("zh", pr.number), cited).unnamed_in("").said
    assert "`engine.py`（`drain_queues`）" in said, said

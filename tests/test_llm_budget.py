"""Token estimates and the budgeted, relevance-ordered slice of a PR in the prompt."""

from __future__ import annotations

import json
from pathlib import Path

from prdigest.analyze import analyze
from prdigest.core.models import Assessment, Dossier, Level
from prdigest.core.presets import load_preset
from prdigest.core.records import FileChange, PullRequest
from prdigest.triage import assess
from prdigest.write.llm.budget import (
    NAMES_LABEL,
    FactLine,
    Hunk,
    body_sections,
    changed_names,
    clip_to_tokens,
    clip_with_spans,
    compact_hunk,
    diff_slice,
    estimate_tokens,
    fact_lines,
    facts_tokens,
    fold_imports,
    key_fact_ids,
    pack_facts,
    rank_hunks,
    render_facts,
    strip_license,
    without_media,
)
from prdigest.write.llm.prompt import (
    SHORT_DIFF_TOKENS,
    TEST_SHARE,
    deep_level,
    entry_prompt,
    fence_for,
)
from prdigest.write.llm.style import default_reference, format_examples, pick_examples

from llm_support import analyzed, fixture_prs

STYLE = format_examples(pick_examples(default_reference()))


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("中文四字") == 3  # 4 × 0.74, rounded up
    assert estimate_tokens("read") == 2  # one word: 1.13
    assert estimate_tokens("_init_layerwise_config") == 6  # 3 words, 3 long letters, 3 "_"
    assert estimate_tokens("12345") == 7  # digits are one token each in Qwen's vocabulary


TOKENS = Path(__file__).parent / "fixtures" / "tokens" / "qwen2.5.json"


def test_the_estimate_is_within_3_percent_or_above_the_true_count() -> None:
    # true counts of prdigest's prompts over the fixture PRs by Qwen2.5's own tokenizer,
    # recorded by scripts/record_token_counts.py (the estimator was fitted on other prompts)
    recorded = json.loads(TOKENS.read_text(encoding="utf-8"))["prompts"]
    assert len(recorded) >= 20
    ratios = [estimate_tokens(p["text"]) / p["tokens"] for p in recorded]
    assert min(ratios) >= 0.97, min(ratios)
    total = sum(estimate_tokens(p["text"]) for p in recorded) / sum(p["tokens"] for p in recorded)
    assert 1.0 <= total <= 1.12  # safely above, and not so high that budgets are wasted


def test_clip_to_tokens_marks_the_cut() -> None:
    text = "\n".join(f"line {i} with some words" for i in range(200))
    clipped = clip_to_tokens(text, 100)
    assert estimate_tokens(clipped) <= 100 and clipped.endswith("clipped）")


def _big(pr: PullRequest, factor: int) -> PullRequest:
    """A synthetic PR: every hunk repeated, extra lock file, many review threads."""
    files = [
        f.model_copy(update={"patch": "\n".join([f.patch] * factor) if f.patch else None})
        for f in pr.files or ()
    ]
    lock = "@@ -1,3 +1,3 @@\n" + "\n".join(f"-pkg{i}==1\n+pkg{i}==2" for i in range(400))
    files.append(FileChange(path="requirements/uv.lock", additions=400, deletions=400, patch=lock))
    threads = list(pr.review_threads or ()) * factor
    return pr.model_copy(update={"files": tuple(files), "review_threads": tuple(threads)})


def test_prompts_of_fixtures_keep_every_key_fact_under_budget() -> None:
    for pr in fixture_prs():
        _, dossier, assessment = analyzed(pr.number)
        if assessment.level is Level.LIST_ONLY:
            continue
        built = entry_prompt(pr, dossier, assessment, lang="zh", style=STYLE, budget_tokens=8000)
        assert built.tokens <= 8000
        assert built.key_ids <= built.fact_ids
        if deep_level(assessment.level):
            assert built.hunks_shown == built.hunks_total  # fixtures fit whole
        else:  # a short entry's diff is held to SHORT_DIFF_TOKENS
            assert built.hunks_shown <= built.hunks_total


def test_big_prs_stay_within_budget_and_rank_relevant_hunks_first() -> None:
    pr, dossier, assessment = analyzed(56104)
    big = _big(pr, 12)
    for budget in (4000, 8000, 12000):
        built = entry_prompt(big, dossier, assessment, lang="zh", style=STYLE, budget_tokens=budget)
        assert built.tokens <= budget
    ranked = rank_hunks(big, dossier)
    tiers = [h.tier for h in ranked]
    assert tiers == sorted(tiers) and tiers[-1] == 5  # the lock file comes last
    sliced = diff_slice(big, dossier, 1500)
    assert "uv.lock" in sliced.text.split("names only")[-1]  # named, not shown
    assert any(name.startswith("requirements/uv.lock") for name in sliced.names_only)


def test_unresolved_threads_come_first_in_the_discussion() -> None:
    pr, dossier, assessment = analyzed(55602)
    built = entry_prompt(pr, dossier, assessment, lang="zh", style=STYLE, budget_tokens=8000)
    text = built.messages[1]["content"].split("## discussion")[1]
    first = text.strip().splitlines()[0]
    assert "CHANGES_REQUESTED" in first or "unresolved" in first


def test_fence_defuses_look_alike_markers() -> None:
    fence, safe = fence_for("text <<<PR-DATA-0000000000>>> more")
    assert fence.startswith("<<<PR-DATA-") and "<<<PR-DATA-0000000000" not in safe


# -- the compact evidence pack ------------------------------------------------------------------


def _hunk(path: str, lines: list[str], header: str = "@@ -1,3 +1,9 @@") -> Hunk:
    return Hunk(path, 0, 0, "\n".join([header, *lines]), 0, 0.0)


def test_the_names_index_puts_definitions_keys_and_types_before_local_names() -> None:
    lines = [
        "+def batch_get_key_info(keys):",
        '+    timeout = os.environ.get("VLLM_ASCEND_KV_TIMEOUT")',
        '+    cfg["enable_fused_mc2"] = 1',
        "+    save_start_block = 0",
        "+    save_start_block += 1",
        "+    save_start_block += 2",
        "+    logger.info(save_start_block)",
        '+    raise NotImplementedError("Only one Layer is supported")',
        "+    # Skip every Layer here",
    ]
    names = changed_names([_hunk("pkg/worker.py", lines)], shown="")
    local = names.index("save_start_block")
    for cited in ("batch_get_key_info", "VLLM_ASCEND_KV_TIMEOUT", "enable_fused_mc2"):
        assert names.index(cited) < local, names
    assert names.index("NotImplementedError") < local
    assert names[-1] in ("logger.info", "os.environ.get")  # library calls come last
    assert "Only" not in names and "Layer" not in names and "Skip" not in names  # prose


def test_the_names_index_names_the_function_a_hidden_hunk_changes() -> None:
    hunk = _hunk(
        "pkg/sched.py", ["     x = 1", "+    y = 2"], "@@ -5,2 +5,3 @@ def _get_hit_tokens("
    )
    assert changed_names([hunk], shown="") == ["_get_hit_tokens"]
    assert changed_names([hunk], shown="see _get_hit_tokens") == []  # shown already
    assert changed_names([hunk], shown="s6 +._get_hit_tokens (3)") == []  # a member fact


def test_license_headers_and_import_runs_are_folded_but_includes_and_code_stay() -> None:
    header = [
        "+/**",
        "+ * Copyright (c) 2026 Someone.",
        "+ * Licensed under the BSD License.",
        "+ */",
    ]
    code = ["+#include <vector>", "+int main() { return 0; }"]
    text = strip_license("\n".join(["@@ -0,0 +1,6 @@", *header, *code]))
    assert "Copyright" not in text and "license header" in text
    assert "#include <vector>" in text and "int main()" in text
    plain = "@@ -0,0 +1,2 @@\n+/* a helper, no licence text */\n+int f();"
    assert strip_license(plain) == plain  # a comment that is not a license stays
    imports = ["+import os", "+from a.b import (", "+    c,", "+    d,", "+)", "+x = os.sep"]
    folded = fold_imports("\n".join(["@@ -0,0 +1,6 @@", *imports]))
    assert folded.splitlines()[1:] == ["+…（5 import lines）", "+x = os.sep"]
    two = "@@ -1,2 +1,3 @@\n+import os\n+import re\n y = 1"
    assert fold_imports(two) == two  # a short run is cheap and stays


def test_a_copied_hunk_is_ranked_with_the_generated_files() -> None:
    pr, dossier, _ = analyzed(56104)
    change = next(f for f in pr.files or () if f.patch and len(f.patch) > 300)
    copy = change.model_copy(update={"path": "copy/" + change.path.rsplit("/", 1)[-1]})
    doubled = pr.model_copy(update={"files": (*(pr.files or ()), copy)})
    ranked = rank_hunks(doubled, dossier)
    copies = [h for h in ranked if h.path == copy.path]
    assert copies and all(h.tier == 5 for h in copies)
    assert any(h.path == change.path and h.tier < 5 for h in ranked)


def _sections_of(body: str) -> tuple[dict[str, str], str]:
    """The description sections the prompt shows for a fixture PR given this body, and their text."""
    pr, dossier, _ = analyzed(56104)
    bare = pr.model_copy(update={"body": body, "linked_issues": ()})
    sections = dict(body_sections(bare, dossier))
    return sections, "\n".join(sections.values())


def test_empty_template_sections_and_version_stamps_leave_the_description() -> None:
    body = (
        "### What this PR does?\nAdds `fast_path` to `Runner.step`.\n\n"
        "### Does this PR introduce any user-facing change?\n\n"
        "### How was this patch tested?\nUT\n\n- vLLM version: v0.19.1\n- vLLM main:\n"
        "https://github.com/vllm-project/vllm/commit/4d51588e2381018348f1022dfa3a76980d4e1c2b\n"
    )
    sections, texts = _sections_of(body)
    assert "fast_path" in texts and "UT" in texts
    assert not any("user-facing" in label for label in sections)
    assert "v0.19.1" not in texts and "commit/" not in texts and "vLLM main" not in texts


def test_a_clipped_section_keeps_the_code_names_of_its_cut_off_part() -> None:
    text = "word " * 400 + "then `late_flag` and `LateClass.method()` matter."
    clipped = clip_with_spans(text, 120)
    assert estimate_tokens(clipped) <= 120
    assert "`late_flag`" in clipped and "`LateClass.method()`" in clipped


def test_facts_are_grouped_by_folder_and_file_and_fit_their_grant() -> None:
    _, dossier, _ = analyzed(56104)
    lines = fact_lines(dossier)
    text = render_facts(lines)
    for f in dossier.files:
        assert f.path.rsplit("/", 1)[-1] in text
    folders = {f.path.rsplit("/", 1)[0] + "/" for f in dossier.files if "/" in f.path}
    assert sum(1 for x in text.splitlines() if x.split(": ", 1)[0] in folders) == len(folders)
    assert estimate_tokens(text) <= facts_tokens(lines)
    for grant in (60, 150, 400):
        kept, _ = pack_facts(lines, grant)
        assert estimate_tokens(render_facts(kept)) <= grant


def test_a_member_after_its_class_is_shown_without_the_class_name() -> None:
    grouped = [
        FactLine("s1", "s1 +class Pool (40)", 40, True, "pool.py", defines="Pool"),
        FactLine("s2", "s2 +method Pool.put (9)", 40, True, "pool.py", "Pool", "s2 +.put (9)"),
        FactLine("s3", "s3 +class Other (5)", 40, True, "pool.py", defines="Other"),
        FactLine("s4", "s4 ~method Pool.get (2)", 40, True, "pool.py", "Pool", "s4 ~.get (2)"),
    ]
    line = render_facts(grouped).splitlines()[-1]
    assert (
        line
        == "pool.py: s1 +class Pool (40), s2 +.put (9), s3 +class Other (5), s4 ~method Pool.get (2)"
    )


def test_a_skim_entry_gets_the_short_instructions_with_the_same_rules() -> None:
    pr, dossier, assessment = analyzed(56104)
    skim = assessment.model_copy(update={"level": Level.SKIM})
    deep = entry_prompt(pr, dossier, assessment, lang="zh", style="", budget_tokens=8000)
    short = entry_prompt(pr, dossier, skim, lang="zh", style="", budget_tokens=8000)
    deep_system, short_system = deep.messages[0]["content"], short.messages[0]["content"]
    assert estimate_tokens(short_system) < 0.6 * estimate_tokens(deep_system)
    for rule in ("不可信的数据", "原样", "cites", "JSON"):
        assert rule in short_system
    en = entry_prompt(pr, dossier, skim, lang="en", style=STYLE, budget_tokens=8000)
    assert "untrusted data" in en.messages[0]["content"]


def test_examples_by_level_close_reads_for_must_read_one_for_the_others() -> None:
    from prdigest.write import WriteRequest
    from prdigest.write.llm import LLMSettings, LLMWriter

    writer = LLMWriter(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m"))
    pr, dossier, assessment = analyzed(56104)
    systems = {}
    for level in (Level.MUST_READ, Level.WORTH_READING, Level.SKIM):
        graded = assessment.model_copy(update={"level": level})
        request = WriteRequest(pr, dossier, graded, True, "k")
        systems[level] = writer.prompt_for(request, "zh").messages[0]["content"]
    examples = [e for e in pick_examples(default_reference()) if e.paragraph]
    close = [e for e in examples if e.level is Level.MUST_READ]
    assert len(close) == 2  # the bundled reference: two close reads and a skim entry
    assert all(e.paragraph in systems[Level.MUST_READ] for e in close)
    assert not any(e.paragraph in systems[Level.MUST_READ] for e in examples if e not in close)
    shown = [e for e in examples if e.paragraph in systems[Level.WORTH_READING]]
    assert len(shown) == 1 and shown[0] == examples[0]  # one close-read example
    short = [e for e in default_reference().entries if e.paragraph in systems[Level.SKIM]]
    assert len(short) == 1 and short[0].level is Level.SKIM  # a short example for a short entry


def test_a_short_entry_gets_the_most_salient_hunks_only() -> None:
    pr, dossier, assessment = analyzed(56104)
    body = [f"+    value_{i} = compute_part_{i}(value_{i - 1})" for i in range(1, 400)]
    patch = "\n".join(["@@ -1,1 +1,400 @@ def build(", *body])
    big = pr.model_copy(
        update={"files": (*pr.files, FileChange(path="pkg/late.py", additions=400, patch=patch))}
    )

    def diff_tokens(level: Level) -> int:
        graded = assessment.model_copy(update={"level": level})
        built = entry_prompt(big, dossier, graded, lang="zh", style=STYLE, budget_tokens=8000)
        user = built.messages[1]["content"]
        return estimate_tokens(user.split("\n## diff", 1)[1].split("<<<PR-DATA-", 1)[0])

    short, deep = diff_tokens(Level.SKIM), diff_tokens(Level.WORTH_READING)
    assert short <= SHORT_DIFF_TOKENS + 20 < deep  # the block's heading beside the slice


def test_the_cut_off_lines_of_a_clipped_hunk_are_in_the_names_index() -> None:
    pr, dossier, _ = analyzed(56104)
    body = [f"+    value_{i} = compute_part_{i}(value_{i - 1})" for i in range(1, 400)]
    body.append("+    def finish_the_late_step():")  # a definition: first in the index
    patch = "\n".join(["@@ -1,1 +1,401 @@ def build(", *body])
    one = pr.model_copy(
        update={"files": (FileChange(path="pkg/late.py", additions=400, patch=patch),)}
    )
    sliced = diff_slice(one, dossier, 1500)
    assert "clipped" in sliced.text  # the hunk is shown in part
    index = next(x for x in sliced.text.splitlines() if x.startswith(NAMES_LABEL))
    names = index.split(": ", 1)[1].split(", ")
    assert names[0] == "finish_the_late_step"
    assert "compute_part_1" not in names and "compute_part_1(" in sliced.text  # shown already


# -- leaner PR data (entry-v5): what goes, and what stays ---------------------------------------


def test_a_compact_hunk_drops_line_ranges_blank_lines_and_edge_markers() -> None:
    hunk = "\n".join(
        [
            "@@ -205,9 +205,10 @@ class ACLGraphWrapper:",
            "     far_before = 1",
            "     before = 2",
            "+",
            "-    old_call(x)",
            "+    new_call(x, y)",
            "     after = 3",
            "     far_after = 4",
            "     further = 5",
            "+    second_change = 6",
            "     tail = 7",
            "     far_tail = 8",
        ]
    )
    lines = compact_hunk(hunk).splitlines()
    assert lines[0] == "@@ class ACLGraphWrapper:"  # the function stays, the ranges go
    assert "+" not in lines and not any(x.strip() in ("", "+", "-") for x in lines)
    assert lines[1] == "     before = 2" and lines[-1] == "     tail = 7"  # no … at either end
    for kept in ("-    old_call(x)", "+    new_call(x, y)", "     after = 3", "     further = 5"):
        assert kept in lines
    assert lines.count(" …") == 1 and "     far_after = 4" not in lines  # the gap, marked once
    assert compact_hunk("@@ -0,0 +1,2 @@\n+a = 1\n+b = 2").splitlines() == [
        "@@",
        "+a = 1",
        "+b = 2",
    ]


def test_a_new_test_is_listed_once_on_its_symbols_place_with_the_tests_id() -> None:
    _, dossier, _ = analyzed(56104)
    lines = fact_lines(dossier)
    text = render_facts(lines)
    assert dossier.tests
    facts = "\n".join(x for x in text.splitlines() if not x.startswith("h"))  # not threads
    for t in dossier.tests:
        assert facts.count(t.name) == 1, t.name  # was twice: as a symbol and as a test
        line = next(x for x in lines if x.id == t.id)
        assert line.key and line.group == t.path.rsplit("/", 1)[-1]
        symbol = next(s for s in dossier.symbols if s.in_test and s.name == t.name)
        assert f"{t.id} " in text and f"{symbol.id} " not in text
        assert f"({symbol.lines_changed}" in line.text  # the symbol's changed lines stay
    assert key_fact_ids(dossier) >= {t.id for t in dossier.tests}


def test_a_test_no_symbol_names_keeps_its_own_line_in_its_files_group() -> None:
    _, dossier, _ = analyzed(56104)
    alone = dossier.model_copy(update={"symbols": ()})
    text = render_facts(fact_lines(alone))
    for t in dossier.tests:
        assert f"{t.id} test {t.name}" in text
    assert t.path not in text  # the file's folder is in the files group, not on every test


def test_body_sections_are_facts_of_the_description_not_repeated_in_the_facts() -> None:
    pr, dossier, assessment = analyzed(56366)  # Test Result is empty
    built = entry_prompt(pr, dossier, assessment, lang="zh", style="", budget_tokens=8000)
    user = built.messages[1]["content"]
    facts = user.split("## facts", 1)[1].split("## description", 1)[0]
    description = user.split("## description", 1)[1].split("\n## ", 1)[0]
    assert "body section" not in facts
    for section in dossier.sections:
        label = f"[{section.id} {section.heading}]"
        assert label in description
        assert (f"{label} (empty)" in description) is section.empty
    assert {s.id for s in dossier.sections} <= built.fact_ids  # still key facts kept
    assert built.key_ids <= built.fact_ids


def test_a_stamp_with_a_tag_for_a_commit_leaves_with_its_label() -> None:
    body = (
        "### What this PR does?\nAdds `fast_path`.\n\n### How was this patch tested?\nNightly UT\n"
        "- vLLM version: \n- vLLM main: https://github.com/vllm-project/vllm/commit/v0.19.0\n"
    )
    _sections, texts = _sections_of(body)
    assert "Nightly UT" in texts and "fast_path" in texts
    assert "vLLM" not in texts and "commit/" not in texts


def test_no_discussion_block_without_discussion_and_a_whole_diff_says_so() -> None:
    pr, dossier, assessment = analyzed(56597)  # no review threads
    bare = pr.model_copy(update={"reviews": (), "review_threads": (), "comments": ()})
    built = entry_prompt(bare, dossier, assessment, lang="zh", style="", budget_tokens=8000)
    user = built.messages[1]["content"]
    assert "## discussion" not in user and "reviews: " in user  # the overview says it
    assert built.hunks_shown == built.hunks_total and "\n## diff\n" in user
    _, talked, graded = analyzed(55602)  # threads: the block stays
    pr2, _, _ = analyzed(55602)
    with_talk = entry_prompt(pr2, talked, graded, lang="zh", style="", budget_tokens=8000)
    assert "## discussion\n" in with_talk.messages[1]["content"]


def test_an_added_files_fact_and_a_listed_files_diff_header_carry_no_zero_side() -> None:
    _, dossier, _ = analyzed(56104)
    text = render_facts(fact_lines(dossier))
    added = [f for f in dossier.files if f.status == "added" and f.deletions == 0]
    assert added
    for f in added:
        assert f"{f.id} {f.path.rsplit('/', 1)[-1]} (+{f.additions}; " in text
    assert "/−0;" not in text and "files in " not in text  # the folder alone heads a group


def _test_heavy(pr: PullRequest, lines: int) -> tuple[PullRequest, Dossier, Assessment]:
    """``pr`` with a new test file of ``lines`` assert lines, analysed again."""
    body = [f"+    assert check_value_{i}(fixture) == {i}" for i in range(lines)]
    patch = "\n".join([f"@@ -0,0 +1,{lines + 1} @@", "+def test_many_values(fixture):", *body])
    big = FileChange(path="tests/test_heavy.py", additions=lines + 1, patch=patch)
    heavy = pr.model_copy(update={"files": (*(pr.files or ()), big)})
    dossier = analyze(heavy, load_preset(heavy.repo), pr_version=heavy.version_key)
    return heavy, dossier, assess(dossier)


def test_test_hunks_get_at_most_their_share_of_the_budget_the_rest_by_name() -> None:
    heavy, dossier, assessment = _test_heavy(analyzed(56104)[0], 120)
    whole = entry_prompt(heavy, dossier, assessment, lang="zh", style="", budget_tokens=10**6)
    assert whole.tokens < 8000  # it would all fit: the cap, not the budget, clips the test
    built = entry_prompt(heavy, dossier, assessment, lang="zh", style="", budget_tokens=8000)
    diff = built.messages[1]["content"].split("## diff", 1)[1]
    tests = [h for h in rank_hunks(heavy, dossier) if h.tier == 1]
    assert any(h.path == "tests/test_heavy.py" for h in tests)
    assert sum(h.tokens for h in tests) > 8000 * TEST_SHARE
    shown = diff.split("### tests/test_heavy.py", 1)[1].split("\n### ", 1)[0]
    assert estimate_tokens(shown) <= 8000 * TEST_SHARE  # the test hunk is clipped
    assert "check_value_1(" in shown and "clipped" in shown
    index = next(x for x in diff.splitlines() if x.startswith(NAMES_LABEL))
    assert "check_value_110" in index and "check_value_110(" not in shown  # cut: named
    sources = [f.path for f in dossier.files if f.role.value == "source"]
    assert sources and all(f"### {path}" in diff for path in sources)  # the code is all shown
    assert built.tokens < whole.tokens


def test_a_clipped_hunk_leaves_room_for_the_small_hunks_after_it() -> None:
    pr, dossier, _ = analyzed(56104)
    long_body = [f"+    value_{i} = compute_part_{i}(value_{i - 1})" for i in range(1, 400)]
    long = "\n".join(["@@ -1,1 +1,400 @@ def build(", *long_body])
    small = "@@ -3,2 +3,3 @@ def test_late():\n     x = 1\n+    assert late_flag_checked(x)"
    files = (
        FileChange(path="pkg/late.py", additions=400, patch=long),
        FileChange(path="tests/test_late.py", additions=1, patch=small),
    )
    sliced = diff_slice(pr.model_copy(update={"files": files}), dossier, 1500)
    assert "clipped" in sliced.text and "late_flag_checked(x)" in sliced.text


def test_a_moved_block_is_folded_and_its_names_stay_in_the_index() -> None:
    pr, dossier, _ = analyzed(56104)
    body = [
        "    total = sum_partial_blocks(blocks)",
        "    scale = compute_block_scale(total)",
        "    blocks = [b * scale for b in blocks]",
        "    return normalise_blocks(blocks)",
    ]
    old = "\n".join(
        ["@@ -1,6 +1,1 @@", " def keep():", "-def helper_old(blocks):", *("-" + x for x in body)]
    )
    new = "\n".join(
        [
            "@@ -0,0 +1,7 @@",
            "+def helper_new(blocks):",
            *("+" + x for x in body),
            "+    x = 1",
            "+    y = 2",
        ]
    )
    moved = pr.model_copy(
        update={
            "files": (
                FileChange(path="pkg/old.py", deletions=5, patch=old),
                FileChange(path="pkg/new.py", additions=7, patch=new),
            )
        }
    )
    sliced = diff_slice(moved, dossier, 3000)
    assert "+…（4 lines the same as lines the PR removes）" in sliced.text
    assert "-…（4 lines the same as lines the PR adds）" in sliced.text
    assert "compute_block_scale(total)" not in sliced.text  # the moved lines are not shown
    assert "+def helper_new(blocks):" in sliced.text and "+    x = 1" in sliced.text
    index = next(x for x in sliced.text.splitlines() if x.startswith(NAMES_LABEL))
    assert "compute_block_scale" in index and "normalise_blocks" in index
    # three lines the same as removed ones are not a block: they stay
    short = new.replace("+    return normalise_blocks(blocks)\n", "")
    kept = pr.model_copy(
        update={"files": (moved.files[0], FileChange(path="pkg/new.py", additions=6, patch=short))}
    )
    assert "compute_block_scale(total)" in diff_slice(kept, dossier, 3000).text


def test_images_and_links_of_the_description_shrink_to_what_an_entry_can_use() -> None:
    text = (
        "Fixes https://github.com/vllm-project/vllm/issues/40859 (see "
        "https://docs.google.com/document/d/160uodRrWmB7/edit?usp=sharing).\n"
        '<img width="747" height="187" alt="image"\nsrc="https://github.com/user-attachments/'
        'assets/d117ea05" />\n![plot](https://example.org/p.png) TPOT 12.5 ms -> 11.9 ms'
    )
    assert without_media(text) == (
        "Fixes vllm-project/vllm#40859 (see <docs.google.com link>).\n"
        "[image]\n[image] TPOT 12.5 ms -> 11.9 ms"
    )

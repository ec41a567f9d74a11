"""Body and title facts: template sections, claims, references, reverts, series."""

from __future__ import annotations

from prdigest.analyze.body import (
    extract_claims,
    extract_sections,
    issue_refs,
    reverted_pr,
    series_of,
    split_title,
)

TEMPLATE_BODY = """<!-- Describe what this PR changes. -->

## Purpose

Fixes #55871. Decode ITL -5~9% on EP8.

## Test Plan

pytest tests/v1/kv_connector

## Test Result

<!-- paste results here -->

| concurrency | before (tok/s) | after (tok/s) | delta |
|---|---|---|---|
| 64 | 3,902 | 4,081 | +4.6% |

---
<details>
<summary> Essential Elements of an Effective PR Description Checklist </summary>
- [x] The purpose of the PR, 99% done
</details>
"""


def test_sections_found_and_emptiness_ignores_comments() -> None:
    sections = {s.name: s for s in extract_sections(TEMPLATE_BODY)}
    assert set(sections) == {"purpose", "test_plan", "test_result"}
    assert not sections["test_result"].empty
    empty = extract_sections("## Purpose\nx\n## Test Result\n<!-- fill in -->\n\nN/A\n")
    assert [s.empty for s in empty] == [False, True]


def test_a_byte_order_mark_does_not_hide_the_first_heading() -> None:
    # an editor's BOM before "## What this PR does": the purpose was read as prose, and its
    # heading was quoted as what the PR does
    body = "\ufeff## What this PR does / why we need it?\n\nAdd a cache for the lint hooks.\n"
    (section,) = extract_sections(body)
    assert section.name == "purpose"
    assert section.text == "Add a cache for the lint hooks."


def test_claims_from_prose_and_tables_not_checklist() -> None:
    claims = extract_claims(TEMPLATE_BODY)
    assert [(c.figure, c.metric, c.in_table) for c in claims] == [
        ("-5~9%", "ITL", False),
        ("+4.6%", "tok/s", True),
    ]
    assert claims[0].provenance.line == 5


def test_multiplier_beats_absolute_value_on_a_line() -> None:
    claims = extract_claims("Throughput goes from 1,012 tok/s to 3,856 tok/s (3.8x).")
    assert [c.figure for c in claims] == ["3.8x"]


def test_a_range_of_multipliers_is_one_figure_not_its_low_end() -> None:
    claims = extract_claims("AscendC vs Triton: 1.27x-9.73x speedup, zero regressions.")
    assert [c.figure for c in claims] == ["1.27x-9.73x"]
    assert [c.figure for c in extract_claims("Decode is 2-3x faster.")] == ["2-3x"]


def test_numbers_without_a_metric_are_not_claims() -> None:
    assert extract_claims("Unblocks 81 tests; see 2 issues.") == []


def test_issue_refs_mark_closing_keywords() -> None:
    refs = issue_refs(
        "Fixes #55871, related to #54042.\nSee https://github.com/o/r/issues/7", "o/r"
    )
    assert refs == [(55871, 1, True), (54042, 1, False), (7, 2, False)]


def test_split_title() -> None:
    assert split_title("[Bugfix][KV Connector] NIXL: fix race (#56104)") == (
        ("Bugfix", "KV Connector"),
        "NIXL: fix race",
    )
    assert split_title("[CI/Build] Pin x") == (("CI/Build",), "Pin x")


def test_revert_and_series() -> None:
    assert (
        reverted_pr('Revert "[Metrics] Add gauge" (#56712)', "Reverts vllm-project/vllm#56712")
        == 56712
    )
    assert reverted_pr("Fix revert handling", None) is None
    series = series_of("[Refactor][1/3] Move multimodal processing")
    assert series is not None and (series.index, series.total) == (1, 3)
    assert series_of("Support 3/4 of layers") is None


def test_reduce_claim_drops_lead_ins_and_keeps_code_and_figures() -> None:
    from prdigest.analyze.body import reduce_claim

    assert reduce_claim("**Root cause:** `seq_lens - offset` goes to -2 for padding slots.") == (
        "`seq_lens - offset` goes to -2 for padding slots"
    )
    assert reduce_claim("This PR fixes the 4360us FIA call.") == "fixes the 4360us FIA call"
    long = "Currently, " + "the scheduler waits for every rank, " * 8 + "which stalls decode."
    reduced = reduce_claim(long)
    assert len(reduced) <= 150 and reduced.startswith("the scheduler")


def test_what_the_test_section_says() -> None:
    from prdigest.analyze.body import extract_sections, testing_of

    boiler = "\n\n- vLLM version: v0.25.1\n- vLLM main: https://github.com/vllm-project/vllm/commit/abc\n"
    head = "### How was this patch tested?\n"
    assert testing_of(extract_sections(head + boiler)) == "none"
    assert testing_of(extract_sections(head + "No involvement" + boiler)) == "none"
    assert testing_of(extract_sections(head + "- pre-commit run --all-files" + boiler)) == "lint"
    assert testing_of(extract_sections(head + "pytest tests/ut/test_x.py" + boiler)) == "described"
    assert testing_of(extract_sections("### What this PR does?\nA fix.")) == "unknown"
    hooks = "- All pre-commit hooks passed, including ruff.\n- py_compile passed.\n"
    assert testing_of(extract_sections(head + hooks + boiler)) == "lint"
    checked = hooks + "- Targeted checks passed for protocol selection and lazy init.\n"
    assert testing_of(extract_sections(head + checked + boiler)) == "described"
    script = "```shell\nvllm serve /models/ds --tp 8\n```\n```text\nacceptance_len=3.04\n```\n"
    assert testing_of(extract_sections(head + script + boiler)) == "described"
    hooks_only = "```bash\npre-commit run --all-files\n```\n"
    assert testing_of(extract_sections(head + hooks_only + boiler)) == "lint"


def test_before_after_figures_and_user_facing_changes() -> None:
    from prdigest.analyze.body import extract_comparisons, extract_sections, user_facing_of

    body = (
        "### What this PR does?\nSingle FIA call latency 4360us -> 3949us.\n"
        "### Does this PR introduce _any_ user-facing change?\n"
        "Yes, `weight_prefetch_config` is no longer\nread.\n"
    )
    sections = extract_sections(body)
    [found] = extract_comparisons(body, sections)
    assert (found.before, found.after, found.metric) == ("4360us", "3949us", "latency")
    assert user_facing_of(sections) == ("`weight_prefetch_config` is no longer read", True)
    assert user_facing_of(
        extract_sections("### Does this PR introduce any user-facing change?\nNo")
    ) == ("", False)


def test_a_section_holds_the_subsections_under_it() -> None:
    from prdigest.analyze.body import extract_sections

    body = (
        "## Results\n### DeepSeek V3.2 TP16 hit rate 90%\n| pool | TTFT |\n| --- | --- |\n"
        "| memcache | 1.2 s |\n### What this PR does / why we need it?\nLayerwise transfer.\n"
    )
    by_name = {s.name: s for s in extract_sections(body)}
    assert not by_name["test_result"].empty and "memcache" in by_name["test_result"].text
    assert by_name["purpose"].text == "Layerwise transfer."  # a known heading starts its own


def test_two_durations_of_a_test_section_are_the_time_taken() -> None:
    # a kernel's cost pasted under the test heading names no metric: both sides being durations
    # says it; a setting's durations (a timeout) or a line of the purpose section do not
    from prdigest.analyze.body import extract_comparisons, extract_sections

    body = "### How was this patch tested?\ncost:\n**4360us --> 3949us( ↑ 9.4%)**\n"
    [found] = extract_comparisons(body, extract_sections(body))
    assert (found.before, found.after, found.metric) == ("4360us", "3949us", "time")
    timeout = "### How was this patch tested?\nraised the timeout 30s -> 60s\n"
    assert extract_comparisons(timeout, extract_sections(timeout)) == []
    purpose = "### What this PR does / why we need it?\nstep 6ms -> 3ms\n"
    assert extract_comparisons(purpose, extract_sections(purpose)) == []
    counts = "### How was this patch tested?\nlayers 47 -> 48\n"  # no unit, no metric
    assert extract_comparisons(counts, extract_sections(counts)) == []


def test_a_series_of_three_figures_is_no_before_and_after() -> None:
    from prdigest.analyze.body import extract_comparisons, extract_sections

    body = "### Test\nOver three runs the prefix cache hit rate 0% -> 40.3% -> 53.7%.\n"
    assert extract_comparisons(body, extract_sections(body)) == []
    two = "### Test\nprefix cache hit rate 0% -> 40.3%.\n"
    [found] = extract_comparisons(two, extract_sections(two))
    assert (found.before, found.after) == ("0%", "40.3%")


def test_a_section_that_says_nothing_breaks_is_no_breaking_change() -> None:
    from prdigest.analyze.body import extract_sections, user_facing_of

    body = (
        "### Does this PR introduce _any_ user-facing change?\n"
        "Yes. The deprecated `--foo` alias is removed from the docs.\n"
        "No breaking changes: all changes are backward compatible.\n"
    )
    change, breaking = user_facing_of(extract_sections(body))
    assert change and not breaking
    loud = body.replace("No breaking changes: all changes are backward compatible.", "")
    assert user_facing_of(extract_sections(loud))[1]


def test_a_deprecation_whose_old_keys_remain_supported_is_no_breaking_change() -> None:
    from prdigest.analyze.body import extract_sections, user_facing_of

    body = (
        "### Does this PR introduce *any* user-facing change?\n\nYes.\n\n"
        "Scheduler-related `additional_config` entries now use the nested `scheduler_config`\n"
        "format. Existing top-level keys remain supported temporarily with deprecation warnings.\n"
    )
    change, breaking = user_facing_of(extract_sections(body))
    assert change and not breaking
    gone = body.replace("remain supported temporarily with", "are removed; see the")
    assert user_facing_of(extract_sections(gone))[1]


def test_a_change_of_what_the_code_does_inside_is_no_breaking_change() -> None:
    from prdigest.analyze.body import extract_sections, user_facing_of

    body = (
        "### Does this PR introduce _any_ user-facing change?\n"
        "Yes. KV cache auto-sizing will no longer subtract the estimated ACL graph pool memory.\n"
    )
    change, breaking = user_facing_of(extract_sections(body))
    assert change and not breaking
    gone = body.replace("will no longer subtract the estimated", "no longer accepts the")
    assert user_facing_of(extract_sections(gone))[1]


def test_a_title_in_quotes_still_gives_its_tags() -> None:
    from prdigest.analyze.body import split_title

    title = '"[Ascend950] [BugFix]Fix garbled MoE output with allgather when SP is off.“'
    assert split_title(title) == (
        ("Ascend950", "BugFix"),
        "Fix garbled MoE output with allgather when SP is off.",
    )
    assert split_title('[Revert] "[Bugfix] Fix eplb"') == (("Revert",), '"[Bugfix] Fix eplb"')


def test_why_a_test_was_not_run_is_no_reason_for_the_change() -> None:
    from prdigest.analyze.body import extract_rationale

    body = (
        "## Summary\n"
        "The parser dropped the tool name because the remaining call was empty.\n\n"
        "## Validation\n"
        "- python -m ruff check\n\n"
        "Focused pytest was not run locally because the local vLLM checkout is not aligned.\n"
    )
    said = [r.text for r in extract_rationale(body)]
    assert said == ["The parser dropped the tool name because the remaining call was empty."]


def test_the_template_questions_without_their_hashes_are_headings() -> None:
    from prdigest.analyze.body import extract_rationale, extract_sections

    body = (
        "What this PR does / why we need it?\n"
        "This PR overlaps the prefill allgather with the indexer to reduce its latency.\n\n"
        "  How was this patch tested?\n"
        "CI passed.\n"
    )
    sections = extract_sections(body)
    assert [(x.name, x.empty) for x in sections] == [("purpose", False), ("test_plan", False)]
    said = [r.text for r in extract_rationale(body)]
    assert said == [
        "This PR overlaps the prefill allgather with the indexer to reduce its latency."
    ]


def test_an_abbreviation_does_not_end_a_sentence() -> None:
    from prdigest.analyze.body import extract_rationale

    body = (
        "## Purpose\n"
        "If `input_size` is not divisible by `group_size` (e.g. 2880 / 32), the scale is "
        "truncated and the op fails. Done.\n"
    )
    said = [r.text for r in extract_rationale(body)]
    assert said == [
        "If `input_size` is not divisible by `group_size` (e.g. 2880 / 32), the scale is "
        "truncated and the op fails."
    ]


def test_a_claim_keeps_the_underscores_of_its_code_spans() -> None:
    from prdigest.analyze.body import reduce_claim

    claim = reduce_claim(
        "- **Engine init mismatch**: `NPUIPCWeightTransferEngine.__init__` did not accept `model`"
    )
    assert (
        claim
        == "Engine init mismatch: `NPUIPCWeightTransferEngine.__init__` did not accept `model`"
    )
    assert reduce_claim("The __bold__ word stays a word, `a__b` stays code.") == (
        "The bold word stays a word, `a__b` stays code"
    )


def test_a_comparison_names_the_quantity_not_the_word_of_how_it_moved() -> None:
    from prdigest.analyze.body import extract_comparisons

    found = extract_comparisons(
        "Enabling FlashCommV3 improves QPS from 0.62 to 0.64 in our runs.", []
    )
    assert [(c.metric, c.before, c.after) for c in found] == [("QPS", "0.62", "0.64")]

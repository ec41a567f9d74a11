"""Token estimates and the budgeted, relevance-ordered slice of a PR in the prompt."""

from __future__ import annotations

import json
from pathlib import Path

from prdigest.core.models import Level
from prdigest.core.records import FileChange, PullRequest
from prdigest.write.llm.budget import clip_to_tokens, diff_slice, estimate_tokens, rank_hunks
from prdigest.write.llm.prompt import entry_prompt, fence_for
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
        assert built.hunks_shown == built.hunks_total  # fixtures fit whole


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

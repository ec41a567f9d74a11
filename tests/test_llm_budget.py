"""Token estimates and the budgeted, relevance-ordered slice of a PR in the prompt."""

from __future__ import annotations

from prdigest.core.models import Level
from prdigest.core.records import FileChange, PullRequest
from prdigest.write.llm.budget import clip_to_tokens, diff_slice, estimate_tokens, rank_hunks
from prdigest.write.llm.prompt import entry_prompt, fence_for
from prdigest.write.llm.style import default_reference, format_examples, pick_examples

from llm_support import analyzed, fixture_prs

STYLE = format_examples(pick_examples(default_reference()))


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("中文四字") == 4
    assert estimate_tokens("abcdefg") == 2  # 7 / 3.5
    assert estimate_tokens("值得 read") == 2 + 2  # two CJK, " read" is 5 chars


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

"""Discussion facts from reviews, threads, comments and commits."""

from __future__ import annotations

from prdigest.analyze import analyze
from prdigest.core.presets import Preset

from conftest import make_pr

REVIEWED = dict(
    author="alice",
    reviews=[
        {
            "author": "coderabbitai",
            "author_type": "Bot",
            "state": "COMMENTED",
            "submitted_at": "2026-06-09T01:00:00Z",
        },
        {"author": "bob", "state": "CHANGES_REQUESTED", "submitted_at": "2026-06-09T02:00:00Z"},
        {"author": "alice", "state": "COMMENTED", "submitted_at": "2026-06-09T02:30:00Z"},
        {"author": "bob", "state": "APPROVED", "submitted_at": "2026-06-09T05:00:00Z"},
    ],
    review_threads=[
        {
            "path": "a.py",
            "line": 3,
            "is_resolved": True,
            "comments": [
                {
                    "author": "bob",
                    "body": "Why not reuse `pop_done` here?",
                    "created_at": "2026-06-09T02:00:00Z",
                }
            ],
        },
        {
            "path": "a.py",
            "line": 9,
            "is_resolved": False,
            "comments": [
                {
                    "author": "coderabbitai",
                    "author_type": "Bot",
                    "body": "> quoted\n**Potential issue** leak",
                }
            ],
        },
    ],
    comments=[
        {
            "author": "mergify",
            "author_type": "Bot",
            "body": "This pull request has merge conflicts that must be resolved.",
        },
        {
            "author": "carol",
            "body": "Follow-up idea (not for this PR): add a lint against nested decorators.",
        },
    ],
    commits=[
        {"sha": "a" * 40, "message": "First version", "committed_at": "2026-06-09T00:00:00Z"},
        {
            "sha": "b" * 40,
            "message": "Address review: drop the shield loop",
            "committed_at": "2026-06-09T03:00:00Z",
        },
        {
            "sha": "c" * 40,
            "message": "Merge branch 'main' into fix",
            "committed_at": "2026-06-09T04:00:00Z",
        },
    ],
)


def test_reviewers_exclude_author_and_flag_bots(vllm_preset: Preset) -> None:
    d = analyze(make_pr(**REVIEWED), vllm_preset)
    assert [(r.login, r.is_bot, r.last_state) for r in d.reviewers] == [
        ("coderabbitai", True, "COMMENTED"),
        ("bob", False, "APPROVED"),
    ]
    assert d.reviewers[1].states == ("CHANGES_REQUESTED", "APPROVED")


def test_threads_keep_state_names_and_excerpts(vllm_preset: Preset) -> None:
    d = analyze(make_pr(**REVIEWED), vllm_preset)
    first, second = d.threads
    assert (first.is_resolved, first.started_by, first.code_names) == (True, "bob", ("pop_done",))
    assert second.started_by_bot and not second.is_resolved
    assert second.excerpt == "**Potential issue** leak"  # the quoted line is dropped


def test_commits_after_human_review_skip_merges(vllm_preset: Preset) -> None:
    d = analyze(make_pr(**REVIEWED), vllm_preset)
    assert [c.after_review for c in d.commits] == [False, True, False]


def test_boilerplate_bot_comments_are_not_remarks(vllm_preset: Preset) -> None:
    d = analyze(make_pr(**REVIEWED), vllm_preset)
    assert [m.author for m in d.remarks] == ["carol"]
    assert any(s.kind.value == "followup_promised" and s.owner == "carol" for s in d.signals)


def test_unknown_discussion_stays_unknown(vllm_preset: Preset) -> None:
    d = analyze(make_pr(), vllm_preset)
    assert not d.coverage.discussion
    assert d.reviewers == () and d.threads == ()


def test_issue_references(vllm_preset: Preset) -> None:
    pr = make_pr(
        body="Fixes #100. See #200.",
        linked_issues=[{"number": 100, "title": "bug", "state": "CLOSED"}],
    )
    d = analyze(pr, vllm_preset)
    assert [(i.number, i.closing, i.provenance.kind) for i in d.issues] == [
        (100, True, "issue"),
        (200, False, "body"),
    ]


def test_coverage_levels(vllm_preset: Preset) -> None:
    text = {"path": "vllm/a.py", "additions": 1, "deletions": 0, "patch": "@@ -0,0 +1,1 @@\n+a = 1"}
    binary = {"path": "docs/a.png", "additions": 0, "deletions": 0, "binary": True, "patch": None}
    too_large = {"path": "requirements/lock.txt", "additions": 9000, "deletions": 0, "patch": None}
    full = analyze(make_pr(files=[text, binary]), vllm_preset).coverage
    assert (full.diff.value, full.label) == ("full", "full")
    partial = analyze(make_pr(files=[text, too_large]), vllm_preset).coverage
    assert partial.diff.value == "partial" and "1 file(s) without patch" in partial.note
    listed_short = analyze(make_pr(files=[text], changed_files=300), vllm_preset).coverage
    assert listed_short.diff.value == "partial" and "1 of 300 files listed" in listed_short.note
    metadata = analyze(make_pr(additions=5, deletions=1), vllm_preset)
    assert metadata.coverage.label == "metadata" and metadata.additions == 5

"""Discussion facts: reviewers and their states, review threads, remarks, commit timing, checks.

Assumptions:

* The PR author's own reviews (replies in review form) are not "reviewers".
* A commit counts as pushed "after review" when its time is later than the first review or
  review-thread comment by a person other than the author (bots do not count).
* Boilerplate bot comments (welcome messages, merge-conflict notices, CI pings) are not remarks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from prdigest.analyze.body import issue_refs
from prdigest.core.models import (
    ChecksSummary,
    CommitFact,
    IssueFact,
    Provenance,
    RemarkFact,
    ReviewerFact,
    ThreadFact,
)
from prdigest.core.records import PullRequest

IsBot = Callable[[str | None, str | None], bool]

_DECISIVE = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
_BACKTICKED = re.compile(r"`([^`\n]{2,80})`")
_BOILERPLATE = re.compile(
    r"thank you for (?:your )?contribut|this pull request has merge conflicts|"
    r"^/(?:ready|rerun|retest|buildkite|gemini|coderabbit)|documentation preview|"
    r"ready label|you ask your reviewers to trigger|👋|run fastcheck|"
    r"codecov report|^lgtm\W*$|please rebase|auto-merge",
    re.I | re.M,
)
_WHITESPACE = re.compile(r"\s+")
_QUOTE = re.compile(r"^>[^\n]*$", re.M)
_CODE_BLOCK = re.compile(r"```.*?```", re.S)


def excerpt(text: str, limit: int = 160) -> str:
    """One line of prose from a comment: quotes and code blocks dropped, whitespace folded."""
    plain = _WHITESPACE.sub(" ", _QUOTE.sub(" ", _CODE_BLOCK.sub(" ", text or ""))).strip()
    return plain if len(plain) <= limit else plain[: limit - 1].rstrip() + "…"


def reviewers(pr: PullRequest, is_bot: IsBot) -> list[ReviewerFact]:
    by_login: dict[str, list[tuple[str, datetime | None, bool]]] = {}
    for review in pr.reviews or ():
        if not review.author or review.author == pr.author:
            continue
        bot = is_bot(review.author, review.author_type)
        by_login.setdefault(review.author, []).append((review.state, review.submitted_at, bot))
    facts: list[ReviewerFact] = []
    for login, items in by_login.items():
        states = tuple(state for state, _, _ in items)
        decisive = [s for s in states if s in _DECISIVE]
        times = [t for _, t, _ in items if t is not None]
        facts.append(
            ReviewerFact(
                id=f"r{len(facts) + 1}",
                provenance=Provenance(kind="review", ref=login),
                login=login,
                is_bot=items[0][2],
                states=states,
                last_state=decisive[-1] if decisive else states[-1],
                first_review_at=min(times) if times else None,
            )
        )
    return facts


def threads(pr: PullRequest, is_bot: IsBot) -> list[ThreadFact]:
    facts: list[ThreadFact] = []
    for index, thread in enumerate(pr.review_threads or (), start=1):
        if not thread.comments:
            continue
        first = thread.comments[0]
        authors = tuple(dict.fromkeys(c.author for c in thread.comments if c.author))
        names = tuple(
            dict.fromkeys(
                name for c in thread.comments for name in _BACKTICKED.findall(c.body or "")
            )
        )
        facts.append(
            ThreadFact(
                id=f"h{len(facts) + 1}",
                provenance=Provenance(
                    kind="thread", ref=f"{thread.path or 'pr'}#{index}", line=thread.line
                ),
                path=thread.path,
                line=thread.line,
                is_resolved=thread.is_resolved,
                is_outdated=thread.is_outdated,
                authors=authors,
                started_by=first.author,
                started_by_bot=is_bot(first.author, first.author_type),
                comment_count=len(thread.comments),
                excerpt=excerpt(first.body),
                code_names=names,
            )
        )
    return facts


def remarks(pr: PullRequest, is_bot: IsBot, *, limit: int = 4) -> list[RemarkFact]:
    """Conversation comments with substance: not boilerplate, not the author's thanks."""
    facts: list[RemarkFact] = []
    for index, comment in enumerate(pr.comments or (), start=1):
        body = comment.body or ""
        if _BOILERPLATE.search(body) or len(excerpt(body)) < 30:
            continue
        facts.append(
            RemarkFact(
                id=f"m{len(facts) + 1}",
                provenance=Provenance(kind="comment", ref=str(index)),
                author=comment.author,
                is_bot=is_bot(comment.author, comment.author_type),
                excerpt=excerpt(body),
            )
        )
        if len(facts) >= limit:
            break
    return facts


def first_human_review(pr: PullRequest, is_bot: IsBot) -> datetime | None:
    times: list[datetime] = []
    for review in pr.reviews or ():
        if (
            review.submitted_at
            and review.author != pr.author
            and not is_bot(review.author, review.author_type)
        ):
            times.append(review.submitted_at)
    for thread in pr.review_threads or ():
        for comment in thread.comments:
            if (
                comment.created_at
                and comment.author != pr.author
                and not is_bot(comment.author, comment.author_type)
            ):
                times.append(comment.created_at)
    return min(times) if times else None


_MERGE_HEADLINE = re.compile(
    r"^Merge (?:branch|remote-tracking branch|pull request|.* into )", re.I
)


def is_merge_headline(headline: str) -> bool:
    """``Merge branch 'main' into …``: syncing with the base, not a change in response to review."""
    return bool(_MERGE_HEADLINE.match(headline))


def commits(pr: PullRequest, is_bot: IsBot) -> list[CommitFact]:
    reviewed_at = first_human_review(pr, is_bot)
    facts: list[CommitFact] = []
    for commit in pr.commits or ():
        headline = (commit.message or "").split("\n", 1)[0].strip()
        after = bool(
            reviewed_at
            and commit.committed_at
            and commit.committed_at > reviewed_at
            and not is_merge_headline(headline)
        )
        facts.append(
            CommitFact(
                id=f"k{len(facts) + 1}",
                provenance=Provenance(kind="commit", ref=commit.sha[:7]),
                sha=commit.sha,
                headline=headline,
                author=commit.author,
                committed_at=commit.committed_at,
                after_review=after,
            )
        )
    return facts


def checks_summary(pr: PullRequest) -> ChecksSummary | None:
    if pr.checks is None:
        return None
    failed = tuple(
        c.name
        for c in pr.checks
        if c.conclusion in ("FAILURE", "TIMED_OUT", "ERROR", "STARTUP_FAILURE")
    )
    return ChecksSummary(
        total=len(pr.checks),
        succeeded=sum(1 for c in pr.checks if c.conclusion == "SUCCESS"),
        failed=failed,
        skipped=sum(1 for c in pr.checks if c.conclusion in ("SKIPPED", "NEUTRAL")),
    )


def issues(pr: PullRequest) -> list[IssueFact]:
    """Closing issues from the record, then ``#N`` mentions in the body and comments."""
    facts: list[IssueFact] = []
    seen: set[int] = set()
    for linked in pr.linked_issues or ():
        seen.add(linked.number)
        facts.append(
            IssueFact(
                id=f"i{len(facts) + 1}",
                provenance=Provenance(kind="issue", ref=f"#{linked.number}"),
                number=linked.number,
                title=linked.title or None,
                state=linked.state,
                closing=True,
            )
        )
    texts: Sequence[tuple[str, str | None]] = [("body", pr.body)] + [
        (f"comment {i}", c.body) for i, c in enumerate(pr.comments or (), start=1)
    ]
    for ref, text in texts:
        for number, line, closing in issue_refs(text, pr.repo):
            if number in seen or number == pr.number:
                continue
            seen.add(number)
            kind = "body" if ref == "body" else "comment"
            facts.append(
                IssueFact(
                    id=f"i{len(facts) + 1}",
                    provenance=Provenance(kind=kind, ref=ref, line=line),
                    number=number,
                    closing=closing,
                )
            )
    return facts

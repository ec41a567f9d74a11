"""Evidence from the discussion: a review that changed the code, threads open at merge, bots."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from prdigest.analyze.discussion import is_merge_headline
from prdigest.core.models import CommitFact, Dossier, SignalKind, ThreadFact
from prdigest.write.template.phrases import Cited, Phrases, display_names, file_name, quote


def _where(thread: ThreadFact, names: dict[str, str], cited: Cited) -> str:
    if not thread.path:
        return "PR"
    return cited.name(
        names.get(thread.path, PurePosixPath(thread.path).name), thread.path, thread.line
    )


_COMMIT_CLASSES = (
    re.compile(r"\b(?:regress\w*|restore\w*|revert\w*)\b", re.I),
    re.compile(r"\bfix\w*\b", re.I),
    re.compile(r"\b(?:instead|replace\w*|rework\w*|switch\w*|drop\w*|remove\w*)\b", re.I),
    re.compile(r"\baddress\w*\b", re.I),
)
_SUGGESTION = re.compile(r"^Apply suggestions? from (?:@(?P<who>[\w-]+)|code review)", re.I)


def _telling_commit(commits: Sequence[CommitFact], avoid: set[str]) -> CommitFact | None:
    """The after-review commit whose headline says most about what review changed."""
    after = [
        c
        for c in commits
        if c.after_review and not is_merge_headline(c.headline) and c.id not in avoid
    ]
    for pattern in _COMMIT_CLASSES:
        telling = [c for c in after if pattern.search(c.headline)]
        if telling:
            return telling[-1]
    return after[-1] if after else None


def _suggestion_regression(d: Dossier, p: Phrases, cited: Cited) -> tuple[str, set[str]] | None:
    """An applied review suggestion followed by a commit that repairs what it broke."""
    for index, commit in enumerate(d.commits):
        match = _SUGGESTION.match(commit.headline)
        if not match:
            continue
        repair = next(
            (
                c
                for c in d.commits[index + 1 :]
                if _COMMIT_CLASSES[0].search(c.headline)
                or re.search(r"\bfix\w*\b", c.headline, re.I)
            ),
            None,
        )
        if repair is None:
            continue
        who = match["who"] or next((r.login for r in d.reviewers if not r.is_bot), None)
        cited.fact(commit.id)
        cited.fact(repair.id)
        text = p.get(
            "discussion",
            "suggestion_regression",
            who=p.who(who),
            applied=cited.name(commit.sha[:7]),
            fix=cited.name(repair.sha[:7]),
            headline=quote(repair.headline, 70),
        )
        return text, {commit.id, repair.id}
    return None


def _requested_part(d: Dossier, p: Phrases, cited: Cited) -> str | None:
    requested = [r for r in d.reviewers if "CHANGES_REQUESTED" in r.states and not r.is_bot]
    if not requested:
        return None
    for r in requested:
        cited.fact(r.id)
    return p.get(
        "discussion", "changes_requested", who=p.listing([p.who(r.login) for r in requested[:2]])
    )


def _commit_part(d: Dossier, p: Phrases, cited: Cited, avoid: set[str]) -> str | None:
    dropped_tests = {s.provenance.ref for s in d.signals if s.kind is SignalKind.TESTS_DELETED}
    avoid = avoid | {c.id for c in d.commits if c.sha[:7] in dropped_tests}
    commit = _telling_commit(d.commits, avoid)
    if commit is None or not any(not r.is_bot for r in d.reviewers):
        return None
    cited.fact(commit.id)
    count = sum(1 for c in d.commits if c.after_review)
    if len(commit.headline) > 80:
        return p.get("discussion", "commits_after_short", count=count)
    return p.get(
        "discussion",
        "commits_after",
        count=count,
        sha=cited.name(commit.sha[:7]),
        headline=quote(commit.headline, 80),
    )


def _human_thread_part(d: Dossier, p: Phrases, cited: Cited, names: dict[str, str]) -> str | None:
    people = [t for t in d.threads if not t.started_by_bot and t.started_by != d.author]
    if not people:
        return None
    open_people = [t for t in people if not (t.is_resolved or t.is_outdated)]
    for t in people:
        cited.fact(t.id)
    if len(people) == 1:
        t = people[0]
        state = (
            "state_open" if open_people else "state_resolved" if t.is_resolved else "state_outdated"
        )
        return p.get(
            "discussion",
            "thread_person",
            who=p.who(t.started_by),
            where=_where(t, names, cited),
            state=p.get("discussion", state),
        ) + _thread_names(t, p, cited)
    who = p.listing(list(dict.fromkeys(p.who(t.started_by) for t in people))[:3])
    paths = list(dict.fromkeys(t.path for t in people if t.path))[:2]
    where = p.listing([file_name(x, names, cited) for x in paths]) or "PR"
    text = p.get("discussion", "threads_summary", who=who, count=len(people), where=where)
    if open_people:
        t = open_people[0]
        text += (
            p.w.then
            + p.get(
                "discussion", "threads_open", who=p.who(t.started_by), where=_where(t, names, cited)
            )
            + _thread_names(t, p, cited)
        )
    return text


def _bot_thread_part(d: Dossier, p: Phrases, cited: Cited, names: dict[str, str]) -> str | None:
    open_bot = [
        t for t in d.threads if t.started_by_bot and not t.is_resolved and not t.is_outdated
    ]
    if not open_bot:
        return None
    for t in open_bot:
        cited.fact(t.id)
    where = p.listing(list(dict.fromkeys(_where(t, names, cited) for t in open_bot[:2])))
    bots = p.listing(list(dict.fromkeys(p.who(t.started_by) for t in open_bot)))
    return p.get("discussion", "unresolved", where=where, who=bots, count=len(open_bot))


def _thread_names(t: ThreadFact, p: Phrases, cited: Cited) -> str:
    mentioned = [n for n in t.code_names if re.fullmatch(r"[A-Za-z_][\w.:/()\-]{1,60}", n)][:2]
    if not mentioned:
        return ""
    return p.get(
        "discussion",
        "thread_names",
        names=p.listing([cited.name(n, t.path or "") for n in mentioned]),
    )


def discussion_parts(d: Dossier, p: Phrases, cited: Cited) -> list[str]:
    """Discussion evidence, most telling first (the paragraph may keep only the first ones)."""
    if not d.coverage.discussion:
        return []  # unknown, not absent: the digest header says which records lack reviews
    names = display_names(d.files)
    regression = _suggestion_regression(d, p, cited)
    used = regression[1] if regression else set()
    candidates = [
        regression[0] if regression else None,
        _requested_part(d, p, cited),
        _human_thread_part(d, p, cited, names),
        _bot_thread_part(d, p, cited, names),
        _commit_part(d, p, cited, used),
    ]
    parts = [x for x in candidates if x]
    if not parts:
        bots = [m for m in d.remarks if m.is_bot]
        if bots:
            cited.fact(bots[0].id)
            parts.append(
                p.get(
                    "discussion",
                    "bot_remark",
                    who=p.who(bots[0].author),
                    excerpt=quote(bots[0].excerpt, 60),
                )
            )
    if not parts:
        approvers = [r.login for r in d.reviewers if r.last_state == "APPROVED" and not r.is_bot][
            :2
        ]
        if approvers:
            parts.append(
                p.get("discussion", "approved", who=p.listing([p.who(x) for x in approvers]))
            )
    return parts


def render_discussion(parts: list[str], p: Phrases) -> str:
    if not parts:
        return ""
    text = p.word("discussion", "sep").join(parts)
    lead = p.get("discussion", "lead")
    if p.w.capitalize and not lead:
        text = text[0].upper() + text[1:]
    return lead + text + p.stop

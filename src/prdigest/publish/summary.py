"""The summary a chat message or e-mail is made from: counts, top entries, links.

Titles and area names are PR-derived and untrusted; they are kept as plain text here and each
channel escapes them for its own dialect (:mod:`.text`). Links are built by the project:
pull requests on github.com and, when the site's base URL is configured, the digest page and
each entry's anchor on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from prdigest.core.models import Digest, Level
from prdigest.render.common import LEVEL_LABEL, one_line
from prdigest.render.html import TEXT, area_name, pr_url

SUMMARY_TEXT = {
    "zh": {
        "merged": "合并 PR {total} 个",
        "read_more": "阅读全文",
        "more": "其余 {more} 个 PR 见全文",
        "more_no_page": "其余 {more} 个 PR 未列出",
        "empty": "{label}（{tz}）窗口内没有合并的 PR。",
    },
    "en": {
        "merged": "{total} merged PRs",
        "read_more": "Read the full digest",
        "more": "{more} more PRs in the full digest",
        "more_no_page": "{more} more PRs not listed",
        "empty": "No merged PRs in {label} ({tz}).",
    },
}


@dataclass(frozen=True)
class SummaryEntry:
    number: int
    title: str  # untrusted, one line
    level: Level
    level_label: str
    area: str  # untrusted (comes from paths), one line
    pr_url: str
    link: str  # the entry on the digest page when the site URL is known, else the PR


@dataclass(frozen=True)
class Summary:
    digest: Digest
    heading: str  # "owner/name · 2026-06-10 PR 阅读摘要" (repo names are validated)
    counts: str
    entries: tuple[SummaryEntry, ...]  # every selected entry, rank order
    page_url: str | None
    read_more: str

    @property
    def repo(self) -> str:
        return self.digest.repo

    def top(self, n: int) -> tuple[SummaryEntry, ...]:
        return self.entries[:n]

    def more_line(self, shown: int) -> str | None:
        """ "其余 N 个 PR 见全文" for the PRs a message leaves out, or ``None``."""
        more = self.digest.total - shown
        if more <= 0:
            return None
        text = SUMMARY_TEXT[self.digest.lang]
        return (text["more"] if self.page_url else text["more_no_page"]).format(more=more)

    @property
    def empty(self) -> str | None:
        if self.digest.total:
            return None
        window = self.digest.window
        return SUMMARY_TEXT[self.digest.lang]["empty"].format(label=window.label, tz=window.tz)


def counts_text(digest: Digest) -> str:
    labels = LEVEL_LABEL[digest.lang]
    parts = [SUMMARY_TEXT[digest.lang]["merged"].format(total=digest.total)]
    parts += [
        f"{labels[level]} {digest.counts[level.value]}"
        for level in Level
        if digest.counts.get(level.value)
    ]
    return " · ".join(parts)


def build_summary(digest: Digest, *, page_url: str | None) -> Summary:
    lang = digest.lang
    entries = tuple(
        SummaryEntry(
            number=item.pr.number,
            title=one_line(item.entry.title),
            level=item.assessment.level,
            level_label=LEVEL_LABEL[lang][item.assessment.level],
            area=one_line(area_name(item, lang)),
            pr_url=pr_url(item.pr.repo, item.pr.number),
            link=(
                f"{page_url}#pr-{item.pr.number}"
                if page_url
                else pr_url(item.pr.repo, item.pr.number)
            ),
        )
        for item in digest.selected
    )
    return Summary(
        digest=digest,
        heading=f"{digest.repo} · {digest.window.label} {TEXT[lang]['digest']}",
        counts=counts_text(digest),
        entries=entries,
        page_url=page_url,
        read_more=SUMMARY_TEXT[lang]["read_more"],
    )

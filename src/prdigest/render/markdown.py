"""Markdown: header with window and counts, one section per selected PR, then "其他合并".

PR-derived text (titles, logins, names quoted in entries) is untrusted: Markdown control
characters are escaped outside code spans, raw HTML cannot pass, ``@mentions`` are defused so
posting the digest to GitHub or a chat pings nobody, and links are only ever built by this
module (``https://github.com/…``), never taken from PR text.

Code names in a paragraph link to their line at the merge commit when the record knows both
the commit and the file (a permalink), so a reader lands on the exact function.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from prdigest.core.models import CodeRef, Digest, DigestItem, Entry
from prdigest.core.records import mention
from prdigest.render.common import (
    LEVEL_LABEL,
    counts_line,
    defuse_mentions,
    empty_message,
    one_line,
)

_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_LIST_DASH = re.compile(r"^(\s*)-(?=\s)")
_LIST_NUMBER = re.compile(r"^(\s*\d+)\.(?=\s)")

TEXT = {
    "zh": {
        "title": "PR 阅读摘要",
        "window": "窗口",
        "merged": "合并 PR {total} 个",
        "selection": "本摘要是精选：{selected} 个 PR 附导读，其余 {rest} 个按方向列在“其他合并”。",
        "others": "其他合并",
        "no_reviews": "注：{count} 个 PR 的记录不含评审数据（例如来自 git），"
        "其导读不涉及评审讨论。",
    },
    "en": {
        "title": "PR reading digest",
        "window": "Window",
        "merged": "{total} merged PRs",
        "selection": "A selection: {selected} PRs come with a reading guide; the other {rest} are "
        "listed by area under “Other merges”.",
        "others": "Other merges",
        "no_reviews": "Note: the records of {count} PRs carry no review data (e.g. read from git); "
        "their entries say nothing about review.",
    },
}


def escape(text: str, *, line_start: bool = True) -> str:
    """Escape Markdown control characters and defuse mentions in untrusted text.

    Whitespace is folded but kept at the ends, so fragments between code spans join cleanly.
    """
    escaped = _SPECIAL.sub(r"\\\1", _squash(text))
    if line_start:  # a leading "- " or "1. " would start a list
        escaped = _LIST_NUMBER.sub(r"\1\\.", _LIST_DASH.sub(r"\1\\-", escaped))
    return defuse_mentions(escaped)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _code_span(name: str) -> str:
    fence = "``" if "`" in name else "`"
    pad = " " if name.startswith("`") or name.endswith("`") else ""
    return f"{fence}{pad}{name}{pad}{fence}"


def permalink(repo: str, sha: str, ref: CodeRef) -> str:
    anchor = f"#L{ref.line}" if ref.line else ""
    return f"https://github.com/{repo}/blob/{sha}/{quote(ref.path)}{anchor}"


def paragraph_markdown(entry: Entry, sha: str | None) -> str:
    """The paragraph with code spans kept, prose escaped, and code names linked when possible."""
    text = one_line(entry.paragraph or "")
    refs = {r.name: r for r in entry.code_refs if r.path}
    out: list[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(escape(text[position : match.start()], line_start=position == 0))
        name = match.group(1)
        ref = refs.get(name)
        span = _code_span(name)
        out.append(f"[{span}]({permalink(entry.repo, sha, ref)})" if sha and ref else span)
        position = match.end()
    out.append(escape(text[position:], line_start=position == 0))
    return "".join(out)


def _pr_link(item: DigestItem) -> str:
    return f"https://github.com/{item.pr.repo}/pull/{item.pr.number}"


def _meta(item: DigestItem, lang: str) -> str:
    area = item.pr.area if lang == "zh" else item.pr.area_en
    parts = [f"[#{item.pr.number}]({_pr_link(item)})"]
    if item.pr.author:
        parts.append(escape(mention(item.pr.author)))
    parts.append(f"+{item.pr.additions}/−{item.pr.deletions}")
    if area:
        parts.append(escape(area))
    parts.append(f"**{LEVEL_LABEL[lang][item.assessment.level]}**")
    if item.pr.coverage != "full":
        parts.append(f"diff: {item.pr.coverage}")
    if item.entry.fallback:
        parts.append("template fallback")
    return " · ".join(parts)


def _header(digest: Digest) -> list[str]:
    t = TEXT[digest.lang]
    window = digest.window
    since = window.since.strftime("%Y-%m-%d %H:%M %z")
    until = window.until.strftime("%Y-%m-%d %H:%M %z")
    lines = [f"# {escape(digest.repo)} · {escape(window.label)} {t['title']}", ""]
    summary = [
        f"{t['window']}: {since} – {until} ({escape(window.tz)})",
        t["merged"].format(total=digest.total),
    ]
    counts = counts_line(digest)
    if counts:
        summary.append(counts)
    lines += [" · ".join(summary), ""]
    if digest.total:
        rest = digest.total - len(digest.selected)
        lines += ["> " + t["selection"].format(selected=len(digest.selected), rest=rest), ""]
    unreviewed = sum(1 for item in digest.all_items() if not item.pr.discussion)
    if unreviewed:
        lines += ["> " + t["no_reviews"].format(count=unreviewed), ""]
    return lines


def _selected(digest: Digest) -> list[str]:
    lines: list[str] = []
    for index, item in enumerate(digest.selected, start=1):
        lines += [
            f"## {index}. [{escape(item.entry.title)}]({_pr_link(item)})",
            "",
            _meta(item, digest.lang),
            "",
        ]
        if item.entry.paragraph:
            lines += [paragraph_markdown(item.entry, item.pr.merge_commit_sha), ""]
    return lines


def _others(digest: Digest) -> list[str]:
    if not digest.others:
        return []
    t = TEXT[digest.lang]
    lines = [f"## {t['others']}", ""]
    for group in digest.others:
        lines += [f"### {escape(group.area)}", ""]
        for item in group.items:
            label = LEVEL_LABEL[digest.lang][item.assessment.level]
            author = f" · {escape(mention(item.pr.author))}" if item.pr.author else ""
            lines.append(
                f"- [#{item.pr.number}]({_pr_link(item)}) {escape(item.entry.title)}"
                f"{author} · +{item.pr.additions}/−{item.pr.deletions} · {label}"
            )
        lines.append("")
    return lines


def render(digest: Digest) -> bytes:
    lines = _header(digest)
    if not digest.total:
        lines += [escape(empty_message(digest)), ""]
    lines += _selected(digest) + _others(digest)
    return ("\n".join(lines).rstrip("\n") + "\n").encode("utf-8")

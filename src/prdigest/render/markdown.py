"""Markdown: header with window and counts, one section per selected PR, then "其他合并"; where
an entry's title is a translated headline, the PR's own title is shown beside it.

PR-derived text (titles, logins, names quoted in entries) is untrusted: Markdown control
characters are escaped outside code spans — only those that could start markup, so ``(1)`` stays
``(1)`` —, raw HTML cannot pass, an ``@mention`` becomes a code span and an
author a link to the profile, so posting the digest to GitHub pings nobody and copying it
carries no invisible characters, and links are only ever built by this module
(``https://github.com/…``), never taken from PR text.

Code names in a paragraph link to their line at the merge commit when the record knows both
the commit and the file (a permalink), so a reader lands on the exact function.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from prdigest.core.locale import locale
from prdigest.core.models import CodeRef, Digest, DigestItem, Entry
from prdigest.core.names import is_repo_path
from prdigest.core.records import LOGIN_PATTERN
from prdigest.render.common import counts_line, empty_message, one_line, visible

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")  # what can open markup anywhere in a line
_LINK_TAIL = re.compile(r"\\\]\(")  # "](" would start a link's target: escape the "(" too
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_LINE_START = re.compile(r"^(\s*)([-+#])(?=\s|#|$)")  # a list item or a heading
_LIST_NUMBER = re.compile(r"^(\s*\d+)\.(?=\s)")
# "@name" as GitHub would read it, taken whole ("@with_cancellation", "@org/team", "@x[bot]")
_MENTION = re.compile(r"(?<![\w`@])@[A-Za-z0-9](?:[\w-]|\.(?=\w))*(?:/[\w.-]+)?(?:\[bot\])?")


def escape(text: str, *, line_start: bool = True) -> str:
    """Escape Markdown control characters in untrusted text; mentions become code spans.

    Whitespace is folded but kept at the ends, so fragments between code spans join cleanly.
    """
    squashed = visible(_squash(text))
    out: list[str] = []
    position = 0
    for match in _MENTION.finditer(squashed):
        out.append(_escape_plain(squashed[position : match.start()], line_start and not out))
        out.append(_code_span(match.group(0)))  # GitHub sends no notification from code
        position = match.end()
    out.append(_escape_plain(squashed[position:], line_start and position == 0))
    return "".join(out)


def _escape_plain(text: str, line_start: bool) -> str:
    escaped = _LINK_TAIL.sub(r"\\]\\(", _SPECIAL.sub(r"\\\1", text))
    if line_start:  # a leading "- ", "+ ", "# " or "1. " would start a list or a heading
        escaped = _LIST_NUMBER.sub(r"\1\\.", _LINE_START.sub(r"\1\\\2", escaped))
    return escaped


def person(login: str) -> str:
    """An author: a GitHub login links to its profile (an app's to the app), a name is text."""
    if not LOGIN_PATTERN.fullmatch(login):
        return escape(login)
    if login.endswith("[bot]"):
        return f"[@{escape(login)}](https://github.com/apps/{login.removesuffix('[bot]')})"
    return f"[@{login}](https://github.com/{login})"


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
    refs = {r.name: r for r in entry.code_refs if r.path and is_repo_path(r.path)}
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


def _meta(item: DigestItem, digest: Digest) -> str:
    area = digest.area_name(item.pr.area)
    parts = [f"[#{item.pr.number}]({_pr_link(item)})"]
    if item.pr.author:
        parts.append(person(item.pr.author))
    parts.append(f"+{item.pr.additions}/−{item.pr.deletions}")
    if area:
        parts.append(escape(area))
    parts.append(f"**{locale(digest.lang).label(item.assessment.level)}**")
    if item.pr.coverage != "full":
        parts.append(f"diff: {item.pr.coverage}")
    if item.entry.fallback:
        parts.append("template fallback")
    return " · ".join(parts)


def _header(digest: Digest) -> list[str]:
    words = locale(digest.lang)
    window = digest.window
    since = window.since.strftime("%Y-%m-%d %H:%M %z")
    until = window.until.strftime("%Y-%m-%d %H:%M %z")
    lines = [f"# {escape(digest.repo)} · {escape(window.label)} {words.say('text', 'digest')}", ""]
    summary = [
        f"{words.say('text', 'window')}: {since} – {until} ({escape(window.tz)})",
        words.say("text", "merged", total=digest.total),
    ]
    counts = counts_line(digest)
    if counts:
        summary.append(counts)
    lines += [" · ".join(summary), ""]
    if digest.total:
        rest = digest.total - len(digest.selected)
        selection = words.say("markdown", "selection", selected=len(digest.selected), rest=rest)
        lines += ["> " + selection, ""]
    unreviewed = sum(1 for item in digest.all_items() if not item.pr.discussion)
    if unreviewed:
        lines += ["> " + words.say("markdown", "no_reviews", count=unreviewed), ""]
    if fallbacks := fallback_line(digest):
        lines += ["> " + fallbacks, ""]
    return lines


MAX_REASONS = 5
REASON_CHARS = 60


def fallback_line(digest: Digest) -> str:
    """ "3 / 8 entries from the template: #N (why) …" when a model's entries fell back."""
    items = list(digest.all_items())
    fell = [i for i in items if i.entry.fallback]
    if not fell:
        return ""
    written = sum(1 for i in items if i.entry.writer.startswith("llm:")) + len(fell)
    reasons = []
    for item in fell[:MAX_REASONS]:
        why = item.entry.findings[0] if item.entry.findings else "?"
        short = why if len(why) <= REASON_CHARS else why[: REASON_CHARS - 1] + "…"
        reasons.append(f"#{item.pr.number} ({short})")
    if len(fell) > MAX_REASONS:
        reasons.append("…")
    return escape(
        locale(digest.lang).say(
            "markdown", "from_template", count=len(fell), total=written, reasons=", ".join(reasons)
        )
    )


def _original(item: DigestItem, digest: Digest) -> str | None:
    """The PR's own title where the entry's title is a headline in the digest's language (an
    untranslated one is the PR's own subject)."""
    original = one_line(item.pr.title)
    words = locale(digest.lang)
    if not words.writing.translate_titles or original == one_line(item.entry.title):
        return None
    return f"{words.say('markdown', 'original')}{words.writing.colon}{escape(original)}"


def _selected(digest: Digest) -> list[str]:
    lines: list[str] = []
    for index, item in enumerate(digest.selected, start=1):
        original = _original(item, digest)
        lines += [
            f"## {index}. [{escape(item.entry.title)}]({_pr_link(item)})",
            "",
            *([f"*{original}*", ""] if original else []),
            _meta(item, digest),
            "",
        ]
        if item.entry.paragraph:
            lines += [paragraph_markdown(item.entry, item.pr.merge_commit_sha), ""]
    return lines


def _others(digest: Digest) -> list[str]:
    if not digest.others:
        return []
    words = locale(digest.lang)
    lines = [f"## {words.say('text', 'others')}", ""]
    for group in digest.others:
        lines += [f"### {escape(group.name)}", ""]
        for item in group.items:
            label = words.label(item.assessment.level)
            author = f" · {person(item.pr.author)}" if item.pr.author else ""
            original = _original(item, digest)
            lines.append(
                f"- [#{item.pr.number}]({_pr_link(item)}) {escape(item.entry.title)}"
                f"{author} · +{item.pr.additions}/−{item.pr.deletions} · {label}"
                + (f" · {original}" if original else "")
            )
        lines.append("")
    return lines


def render(digest: Digest) -> bytes:
    lines = _header(digest)
    if not digest.total:
        lines += [escape(empty_message(digest)), ""]
    lines += _selected(digest) + _others(digest)
    return ("\n".join(lines).rstrip("\n") + "\n").encode("utf-8")

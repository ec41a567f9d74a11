"""HTML pages of the digest site, from Jinja2 templates with autoescape on.

Everything that comes from a PR (titles, logins, area names derived from paths, paragraph text)
is escaped by the template engine or, for the paragraph, by :func:`paragraph_html`, which
escapes the prose and wraps backticked code names in ``<code>``. Links are built here and only
here: pull requests as ``https://github.com/OWNER/NAME/pull/N`` and code names as permalinks at
the merge commit (:func:`~prdigest.render.markdown.permalink`); a URL found in PR data is never
used, so a ``javascript:`` link cannot reach a page.

Defence in depth: each page carries a Content-Security-Policy that allows only the page's own
inline style and filter script (by hash), so even a markup bug could not run a script.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from prdigest.core.locale import locale
from prdigest.core.models import Digest, DigestItem, Entry, Level
from prdigest.core.names import is_repo_path
from prdigest.render.common import area_name, one_line, visible
from prdigest.render.markdown import permalink

SHA = re.compile(r"^[0-9a-f]{7,64}$")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_SLUG = re.compile(r"[^0-9a-z]+")


def _asset(name: str) -> str:
    return resources.files("prdigest.render").joinpath("templates", name).read_text("utf-8")


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@dataclass(frozen=True)
class Assets:
    css: str
    js: str
    csp: str


@cache
def assets() -> Assets:
    css, js = _asset("site.css"), _asset("filters.js")
    csp = (
        "default-src 'none'; "
        f"style-src {_csp_hash(css)}; "
        f"script-src {_csp_hash(js)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return Assets(css=css, js=js, csp=csp)


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("prdigest.render", "templates"),
        autoescape=select_autoescape(["html", "xml"], default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["assets"] = assets
    return env


def template_version() -> str:
    """Hash of every template and asset: a page is re-rendered when any of them changes."""
    digest = hashlib.sha256()
    folder = resources.files("prdigest.render").joinpath("templates")
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.is_file():
            digest.update(item.name.encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()[:16]


def pr_url(repo: str, number: int) -> str:
    """The only way a pull-request link is made: never from a URL in the PR's data."""
    return f"https://github.com/{repo}/pull/{number}"


def slug(text: str) -> str:
    value = _SLUG.sub("-", text.lower()).strip("-")
    return value or "x"


def area_key(item: DigestItem) -> str:
    """The filter value of an item's area: its id (ids are the same in every language)."""
    return slug(item.pr.area) if item.pr.area else "other"


def paragraph_html(entry: Entry, sha: str | None) -> Markup:
    """The paragraph as HTML: prose escaped, code names in ``<code>``, linked when known."""
    text = one_line(entry.paragraph or "")
    refs = {r.name: r for r in entry.code_refs if r.path and is_repo_path(r.path)}
    linkable = sha is not None and SHA.match(sha) is not None
    parts: list[Markup] = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        parts.append(escape(text[position : match.start()]))
        name = match.group(1)
        code = Markup("<code>{}</code>").format(name)
        ref = refs.get(name)
        if linkable and ref is not None:
            assert sha is not None
            href = permalink(entry.repo, sha, ref)
            code = Markup('<a class="code" href="{}">{}</a>').format(href, code)
        parts.append(code)
        position = match.end()
    parts.append(escape(text[position:]))
    return Markup("").join(parts)


@dataclass(frozen=True)
class SiteLinks:
    """Where a digest page links inside the site (relative URLs); ``None`` for a lone page."""

    home: str
    repo_index: str
    json: str
    feed: str


def item_view(item: DigestItem, digest: Digest) -> dict[str, Any]:
    words = locale(digest.lang)
    return {
        "number": item.pr.number,
        "anchor": f"pr-{item.pr.number}",
        "url": pr_url(item.pr.repo, item.pr.number),
        "title": one_line(item.entry.title),
        "original": one_line(item.pr.title),
        "author": visible(item.pr.author) if item.pr.author else None,
        "additions": item.pr.additions,
        "deletions": item.pr.deletions,
        "level": item.assessment.level.value,
        "level_label": words.label(item.assessment.level),
        "area_key": area_key(item),
        "area": one_line(area_name(digest, item.pr.area)),
        "coverage": item.pr.coverage if item.pr.coverage != "full" else None,
        "fallback": item.entry.fallback,
        "paragraph": (
            paragraph_html(item.entry, item.pr.merge_commit_sha) if item.entry.paragraph else None
        ),
    }


def _stamp(moment: datetime, tz: str) -> str:
    from zoneinfo import ZoneInfo

    return moment.astimezone(ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M %z")


def digest_context(digest: Digest) -> dict[str, Any]:
    words = locale(digest.lang)
    items = digest.all_items()
    levels = [
        {
            "value": level.value,
            "label": words.label(level),
            "count": digest.counts[level.value],
        }
        for level in Level
        if digest.counts.get(level.value)
    ]
    areas: dict[str, dict[str, Any]] = {}
    for item in items:
        key = area_key(item)
        label = area_name(digest, item.pr.area)
        entry = areas.setdefault(key, {"value": key, "label": label, "count": 0})
        entry["count"] += 1
    return {
        "t": words.site_words(),
        "lang": digest.lang,
        "repo": digest.repo,
        "label": digest.window.label,
        "tz": digest.window.tz,
        "since": _stamp(digest.window.since, digest.window.tz),
        "until": _stamp(digest.window.until, digest.window.tz),
        "total": digest.total,
        "rest": digest.total - len(digest.selected),
        "levels": levels,
        "areas": sorted(areas.values(), key=lambda a: (-a["count"], a["label"])),
        "selected": [item_view(i, digest) for i in digest.selected],
        "others": [
            {
                "area": group.name,
                "key": slug(group.area) if group.area else "other",
                "entries": [item_view(i, digest) for i in group.items],
            }
            for group in digest.others
        ],
        "empty": words.empty(digest.window.label, digest.window.tz),
    }


def digest_page(digest: Digest, links: SiteLinks | None = None, *, site_title: str = "") -> str:
    """One digest as a complete HTML page (inline style and script, no external resources)."""
    context = digest_context(digest)
    return (
        environment()
        .get_template("digest.html")
        .render(links=links, site_title=site_title, **context)
    )


@dataclass(frozen=True)
class IndexRow:
    repo: str
    label: str
    lang: str
    total: int
    must_read: int
    href: str


@dataclass(frozen=True)
class RepoSection:
    repo: str
    href: str | None
    feed: str | None
    rows: tuple[IndexRow, ...]


def index_page(
    sections: list[RepoSection], *, title: str, lang: str, home: str | None = None
) -> str:
    """The list of digests, newest first, one section per repository."""
    return (
        environment()
        .get_template("index.html")
        .render(t=locale(lang).site_words(), lang=lang, title=title, sections=sections, home=home)
    )


def render(digest: Digest) -> bytes:
    """The ``html`` format: one digest as a self-contained page."""
    return digest_page(digest).encode("utf-8")

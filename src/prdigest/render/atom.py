"""Atom feeds (``feedgen``): one entry per digest, newest first.

The entry content is the digest's summary as HTML from the ``feed_entry.html`` template (escaped
like the pages), carried as ``type="html"`` text, so feed readers get the same safe markup.
Every timestamp comes from the data (the digest window, the time a digest last changed), never
from the clock, so an unchanged site regenerates an identical feed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from feedgen.feed import FeedGenerator

from prdigest.core.locale import locale
from prdigest.core.models import Digest
from prdigest.core.version import __version__
from prdigest.render.html import digest_context, environment

_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/prdigest")


@dataclass(frozen=True)
class FeedItem:
    digest: Digest
    href: str  # the digest page, absolute when the site's base URL is known
    updated: datetime  # aware


def entry_id(repo: str, label: str, lang: str) -> str:
    """A stable id for a digest, whatever URL the site is published at."""
    return "urn:uuid:" + str(uuid.uuid5(_NAMESPACE, f"{repo}\n{label}\n{lang}"))


def entry_html(digest: Digest) -> str:
    return environment().get_template("feed_entry.html").render(**digest_context(digest))


def atom_feed(
    repo: str,
    items: Sequence[FeedItem],
    *,
    lang: str,
    self_href: str | None = None,
    page_href: str | None = None,
    fallback_updated: datetime,
) -> bytes:
    """The Atom feed of a repository's digests (``items`` newest first)."""
    words = locale(lang)
    feed = FeedGenerator()
    feed.id(entry_id(repo, "feed", lang))
    feed.title(f"{repo} · {words.say('text', 'digest')}")
    feed.author({"name": "prdigest"})
    feed.generator("prdigest", version=__version__)
    feed.language(words.html_lang)
    if page_href:
        feed.link(href=page_href, rel="alternate")
    if self_href:
        feed.link(href=self_href, rel="self")
    feed.updated(max((i.updated for i in items), default=fallback_updated))
    for item in items:
        digest = item.digest
        entry = feed.add_entry(order="append")
        entry.id(entry_id(digest.repo, digest.window.label, digest.lang))
        heading = locale(digest.lang).say("text", "digest")
        entry.title(f"{digest.repo} · {digest.window.label} {heading}")
        entry.link(href=item.href, rel="alternate")
        entry.published(digest.window.until)
        entry.updated(item.updated)
        entry.content(entry_html(digest), type="html")
    data: bytes = feed.atom_str(pretty=True)
    return data


def render(digest: Digest) -> bytes:
    """A one-entry feed of a single digest (the ``atom`` format of ``prdigest digest``)."""
    page = f"https://github.com/{digest.repo}/pulls?q=is%3Apr+is%3Amerged"
    item = FeedItem(digest=digest, href=page, updated=digest.window.until)
    return atom_feed(
        digest.repo, [item], lang=digest.lang, page_href=page, fallback_updated=item.updated
    )

"""HTML: one digest as a self-contained page (the page the static site publishes).

The templates live with the site (:mod:`prdigest.site.pages`); this module only adapts them to
the renderer registry, importing lazily so plain-text runs do not load Jinja2.
"""

from __future__ import annotations

from ..models import Digest


def render(digest: Digest) -> bytes:
    from ..site.pages import digest_page

    return digest_page(digest).encode("utf-8")

"""Plain text, byte for byte the layout of the example digests.

First line ``owner/name``, a blank line, then per entry the title line, a blank line and the
paragraph line, entries separated by one blank line; an entry without a paragraph is its title
line alone. The selected entries come first (ranked), then every other merged PR of the window
by title, grouped by area. UTF-8, no Markdown, no trailing newline (as in the examples).
"""

from __future__ import annotations

from prdigest.core.models import Digest
from prdigest.render.common import empty_message, one_line


def blocks(digest: Digest) -> list[str]:
    out = []
    for item in digest.all_items():
        entry = item.entry
        title = one_line(entry.title)
        out.append(title if entry.paragraph is None else f"{title}\n\n{one_line(entry.paragraph)}")
    return out


def render(digest: Digest) -> bytes:
    body = blocks(digest) or [empty_message(digest)]
    return (digest.repo + "\n\n" + "\n\n".join(body)).encode("utf-8")

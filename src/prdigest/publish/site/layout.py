"""Where each file of the static site lives, relative to the site's root.

One digest page per (repository, window label, language); the default language's files carry
no language suffix (``2026-06-10.html``), every other language's do (``2026-06-10.en.html``).
Chat messages and e-mail link to these pages, so the layout lives apart from the builder.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from prdigest.core.locale import DEFAULT_LANG
from prdigest.core.names import check_repo

_UNSAFE = re.compile(r"[^0-9A-Za-z._-]+")


def _stem(label: str, lang: str) -> str:
    stem = _UNSAFE.sub("_", label).lstrip(".") or "digest"
    return stem if lang == DEFAULT_LANG else f"{stem}.{lang}"


def repo_dir(repo: str) -> PurePosixPath:
    """``OWNER/NAME``; a ``ValueError`` for anything that is not a valid repository name."""
    owner, name = check_repo(repo).split("/", 1)
    return PurePosixPath(owner, name)


def page_path(repo: str, label: str, lang: str) -> str:
    """Where a digest's page lives in the site, relative to its root."""
    return str(repo_dir(repo) / f"{_stem(label, lang)}.html")


def json_path(repo: str, label: str, lang: str) -> str:
    return str(repo_dir(repo) / f"{_stem(label, lang)}.json")


def feed_path(repo: str, lang: str) -> str:
    return str(repo_dir(repo) / ("feed.xml" if lang == DEFAULT_LANG else f"feed.{lang}.xml"))


def page_url(base_url: str | None, repo: str, label: str, lang: str) -> str | None:
    """The public URL of a digest page, when the site's base URL is known."""
    return None if base_url is None else base_url + page_path(repo, label, lang)

"""Build the static site from the stored digests, rewriting only files whose bytes change.

Layout of the output directory::

    index.html                      every repository, its digests newest first
    OWNER/NAME/index.html           one repository's digests
    OWNER/NAME/feed.xml             its Atom feed (feed.en.xml for English digests)
    OWNER/NAME/2026-06-10.html      one digest (2026-06-10.en.html for English)
    OWNER/NAME/2026-06-10.json      the same digest as JSON (the ``json`` renderer)
    .prdigest-site.json             manifest: what each page was built from

Every path is resolved and checked to lie inside the output directory before anything is
written, and a stored digest whose repository name is not ``owner/name`` is refused (listed in
the report), never rendered. A file is written to ``.prdigest-tmp-*`` beside its target and
renamed over it, so no half file is ever visible under a final name; temp files a killed build
left behind are removed at the start of the next build.

Pages carry no build time, so an unchanged digest gives identical bytes. The manifest records,
per digest page, the digest's content hash, the template version and the written file's hash;
when all three still match, the page is not even rendered again. Every other file is rendered
and compared with what is on disk; a file is replaced (atomically) only when it differs.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from prdigest.core.errors import SiteError
from prdigest.core.locale import DEFAULT_LANG
from prdigest.core.names import repo_problem
from prdigest.core.version import __version__
from prdigest.publish.site.layout import feed_path, json_path, page_path, repo_dir
from prdigest.render import render
from prdigest.render.atom import FeedItem, atom_feed
from prdigest.render.html import (
    IndexRow,
    RepoSection,
    SiteLinks,
    digest_page,
    index_page,
    template_version,
)
from prdigest.store.digests import DigestRepository, StoredDigest

MANIFEST = ".prdigest-site.json"
TEMP_PREFIX = ".prdigest-tmp-"


@dataclass(frozen=True)
class SiteOptions:
    out_dir: Path
    base_url: str | None = None  # https://…/ (ends with a slash)
    title: str = "PR 阅读摘要"
    lang: str = "zh"
    feed_entries: int = 30


@dataclass
class SiteReport:
    out_dir: Path
    digests: int = 0
    written: list[str] = field(default_factory=list)  # relative paths, in write order
    unchanged: int = 0
    refused: list[str] = field(default_factory=list)  # stored digests with a bad name, why
    removed_temp: int = 0  # temp files of an interrupted earlier build, removed


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Writer:
    """Writes files under the output directory only when their bytes change."""

    def __init__(self, root: Path, report: SiteReport) -> None:
        self.root = root
        self.report = report
        try:
            self._real_root = root.resolve()
        except OSError as exc:
            raise SiteError(f"cannot resolve: {exc.strerror}", path=str(root)) from exc

    def inside(self, rel: str) -> Path:
        """The target of ``rel``, resolved, after checking it lies inside the output directory."""
        target = self._real_root / rel
        try:
            resolved = target.resolve()
        except OSError as exc:
            raise SiteError(f"cannot resolve: {exc.strerror}", path=str(target)) from exc
        if not resolved.is_relative_to(self._real_root) or resolved == self._real_root:
            raise SiteError("refused: the path leaves the site directory", path=rel)
        return resolved

    def current(self, rel: str) -> bytes | None:
        try:
            return self.inside(rel).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SiteError(f"cannot read: {exc.strerror}", path=str(self.root / rel)) from exc

    def write(self, rel: str, data: bytes, *, report: bool = True) -> bool:
        if self.current(rel) == data:
            if report:
                self.report.unchanged += 1
            return False
        target = self.inside(rel)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, tmp = tempfile.mkstemp(dir=target.parent, prefix=TEMP_PREFIX)
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except OSError as exc:
            raise SiteError(f"cannot write: {exc.strerror}", path=str(target)) from exc
        if report:
            self.report.written.append(rel)
        return True


def remove_temp_files(root: Path) -> int:
    """Remove the temp files an interrupted build left (only ours: ``.prdigest-tmp-*``)."""
    if not root.is_dir():
        return 0
    removed = 0
    for leftover in root.rglob(TEMP_PREFIX + "*"):
        if leftover.is_file() and not leftover.is_symlink():
            try:
                leftover.unlink()
            except OSError as exc:
                raise SiteError(f"cannot remove: {exc.strerror}", path=str(leftover)) from exc
            removed += 1
    return removed


def _load_manifest(writer: _Writer, version: str) -> dict[str, Any]:
    raw = writer.current(MANIFEST)
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(data, dict) or data.get("version") != version:
        return {}
    pages = data.get("pages")
    return pages if isinstance(pages, dict) else {}


def _links(meta: StoredDigest) -> SiteLinks:
    return SiteLinks(
        home="../../index.html",
        repo_index="index.html",
        json=PurePosixPath(json_path(meta.repo, meta.label, meta.lang)).name,
        feed=PurePosixPath(feed_path(meta.repo, meta.lang)).name,
    )


def _digest_files(
    digests: DigestRepository,
    meta: StoredDigest,
    options: SiteOptions,
    writer: _Writer,
    manifest: dict[str, Any],
    fresh: dict[str, Any],
) -> None:
    page = page_path(meta.repo, meta.label, meta.lang)
    data_file = json_path(meta.repo, meta.label, meta.lang)
    known = manifest.get(page)
    if isinstance(known, dict) and known.get("digest") == meta.content_hash:
        on_disk = [writer.current(page), writer.current(data_file)]
        if all(b is not None for b in on_disk) and [_sha(b or b"") for b in on_disk] == [
            known.get("page_sha"),
            known.get("json_sha"),
        ]:
            fresh[page] = known
            writer.report.unchanged += 2
            return
    digest = digests.load(meta.repo, meta.label, meta.lang)
    html = digest_page(digest, _links(meta), site_title=options.title).encode("utf-8")
    body = render(digest, "json")
    writer.write(page, html)
    writer.write(data_file, body)
    fresh[page] = {"digest": meta.content_hash, "page_sha": _sha(html), "json_sha": _sha(body)}


def _feed(
    digests: DigestRepository, repo: str, lang: str, metas: list[StoredDigest], o: SiteOptions
) -> bytes:
    feed_rel = feed_path(repo, lang)
    items = []
    for meta in metas[: o.feed_entries]:
        page = page_path(meta.repo, meta.label, meta.lang)
        href = o.base_url + page if o.base_url else PurePosixPath(page).name
        items.append(
            FeedItem(
                digest=digests.load(meta.repo, meta.label, meta.lang),
                href=href,
                updated=meta.updated_at,
            )
        )
    base = o.base_url
    return atom_feed(
        repo,
        items,
        lang=lang,
        self_href=base + feed_rel if base else None,
        page_href=base + str(repo_dir(repo)) + "/index.html" if base else "index.html",
        fallback_updated=datetime(1970, 1, 1, tzinfo=UTC),
    )


def _rows(metas: Iterable[StoredDigest], prefix: str) -> tuple[IndexRow, ...]:
    return tuple(
        IndexRow(
            repo=m.repo,
            label=m.label,
            lang=m.lang,
            total=m.total,
            must_read=m.counts.get("must_read", 0),
            href=prefix + PurePosixPath(page_path(m.repo, m.label, m.lang)).name,
        )
        for m in metas
    )


def build_site(digests: DigestRepository, options: SiteOptions) -> SiteReport:
    """Write (or refresh) the site under ``options.out_dir`` from every stored digest."""
    report = SiteReport(out_dir=options.out_dir)
    report.removed_temp = remove_temp_files(options.out_dir)
    writer = _Writer(options.out_dir, report)
    version = "|".join(
        [__version__, template_version(), options.title, options.base_url or "", options.lang]
    )
    manifest = _load_manifest(writer, version)
    fresh: dict[str, Any] = {}
    metas = []
    for meta in digests.query():
        problem = repo_problem(meta.repo)
        if problem is None:
            metas.append(meta)
        else:
            report.refused.append(f"stored digest {meta.label} ({meta.lang}): {problem}")
    report.digests = len(metas)
    by_repo: dict[str, list[StoredDigest]] = {}
    for meta in metas:
        by_repo.setdefault(meta.repo, []).append(meta)
        _digest_files(digests, meta, options, writer, manifest, fresh)
    sections = []
    for repo in sorted(by_repo):
        repo_metas = by_repo[repo]
        languages = sorted({m.lang for m in repo_metas}, key=lambda x: (x != DEFAULT_LANG, x))
        for lang in languages:
            lang_metas = [m for m in repo_metas if m.lang == lang]
            writer.write(feed_path(repo, lang), _feed(digests, repo, lang, lang_metas, options))
        own = RepoSection(
            repo=repo,
            href=None,
            feed=PurePosixPath(feed_path(repo, languages[0])).name,
            rows=_rows(repo_metas, ""),
        )
        html = index_page([own], title=repo, lang=options.lang, home="../../index.html")
        writer.write(str(repo_dir(repo) / "index.html"), html.encode("utf-8"))
        prefix = str(repo_dir(repo)) + "/"
        sections.append(
            RepoSection(
                repo=repo,
                href=prefix + "index.html",
                feed=feed_path(repo, languages[0]),
                rows=_rows(repo_metas, prefix),
            )
        )
    html = index_page(sections, title=options.title, lang=options.lang)
    writer.write("index.html", html.encode("utf-8"))
    state = {"version": version, "pages": fresh}
    writer.write(
        MANIFEST, (json.dumps(state, indent=1, sort_keys=True) + "\n").encode(), report=False
    )
    return report

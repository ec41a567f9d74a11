"""Analysis at two depths: triage depth for every PR, full depth for the PRs that get a paragraph
(and for ``explain``); a triage-depth dossier never reaches a paragraph's writer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from prdigest.analyze import analyze, enrich
from prdigest.core.models import FULL_ONLY, Dossier
from prdigest.core.presets import Preset
from prdigest.core.records import PullRequest
from prdigest.core.window import day_window
from prdigest.pipeline import digest as stage
from prdigest.pipeline.digest import DigestOptions, build_digest, explain
from prdigest.render import render
from prdigest.store import Store, content_hash, open_store
from prdigest.triage import assess
from prdigest.write import BatchResult, Lang, WriteRequest
from prdigest.write.template import TemplateWriter

from conftest import DAY_A, REPO

OPTIONS = DigestOptions(repo=REPO, window=day_window(DAY_A), top=4)


class RecordingWriter:
    """The template writer, keeping every request it is handed; ``key`` can be changed so that
    no stored entry fits."""

    def __init__(self, key: str | None = None) -> None:
        self.requests: list[WriteRequest] = []
        self.template = TemplateWriter()
        self._key = key

    @property
    def key(self) -> str:
        return self._key or self.template.key

    def write_batch(self, requests: Sequence[WriteRequest], *, lang: Lang) -> BatchResult:
        self.requests += requests
        return self.template.write_batch(requests, lang=lang)


def _stored_depths(store: Store, numbers: Sequence[int]) -> dict[int, str]:
    from prdigest.core.models import ANALYZER_VERSION
    from prdigest.core.presets import load_preset

    rows = store.artefacts.dossiers_of(REPO, numbers, ANALYZER_VERSION, load_preset(REPO).key)
    return {n: Dossier.model_validate_json(raw).depth for n, (_h, raw) in rows.items()}


def _counting_analyze(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    calls: list[tuple[int, str]] = []

    def counted(pr: PullRequest, preset: Preset, **kwargs: Any) -> Dossier:
        calls.append((pr.number, kwargs.get("depth", "full")))
        return analyze(pr, preset, **kwargs)

    monkeypatch.setattr(stage, "analyze", counted)
    return calls


def test_triage_depth_leaves_out_only_the_writers_facts(
    records: list[PullRequest], vllm_preset: Preset
) -> None:
    with_writer_facts = 0
    for pr in records:
        full = analyze(pr, vllm_preset, pr_version=pr.version_key)
        triage = analyze(pr, vllm_preset, pr_version=pr.version_key, depth="triage")
        assert full.depth == "full" and triage.depth == "triage"
        cleared = dict.fromkeys(FULL_ONLY, ())
        assert triage == full.model_copy(update={**cleared, "depth": "triage"}), pr.number
        assert assess(triage, bots=vllm_preset.bots) == assess(full, bots=vllm_preset.bots)
        with_writer_facts += bool(full.salient and full.edits)
    assert with_writer_facts >= 3  # the fixtures do exercise the facts left out


def test_enriching_a_triage_dossier_gives_the_full_one(
    records: list[PullRequest], vllm_preset: Preset
) -> None:
    for pr in records:
        full = analyze(pr, vllm_preset, pr_version=pr.version_key)
        triage = analyze(pr, vllm_preset, pr_version=pr.version_key, depth="triage")
        assert enrich(triage, pr) == full, pr.number
        assert enrich(full, pr) is full


def test_a_paragraph_is_never_written_from_a_triage_dossier(
    records: list[PullRequest], vllm_preset: Preset
) -> None:
    pr = records[0]
    triage = analyze(pr, vllm_preset, depth="triage")
    verdict = assess(triage, bots=vllm_preset.bots)
    with pytest.raises(ValueError, match="needs a full dossier"):
        WriteRequest(pr, triage, verdict, paragraph=True)
    with pytest.raises(ValueError, match="needs a full dossier"):
        TemplateWriter().write(triage, verdict, lang="zh", paragraph=True)
    title_only = TemplateWriter().write(triage, verdict, lang="zh", paragraph=False)
    full = analyze(pr, vllm_preset)
    assert title_only == TemplateWriter().write(full, verdict, lang="zh", paragraph=False)


def test_digest_writes_paragraphs_from_full_dossiers_only(
    loaded_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting_analyze(monkeypatch)
    writer = RecordingWriter()
    digest = build_digest(loaded_store, OPTIONS, writer)
    chosen = {i.pr.number for i in digest.selected}
    assert chosen and len(chosen) < digest.total
    depths = {r.dossier.number: r.dossier.depth for r in writer.requests}
    assert {n for n, d in depths.items() if d == "full"} == chosen
    assert all(depths[r.dossier.number] == "full" for r in writer.requests if r.paragraph)
    # every PR analyzed once, at triage depth; the selected ones enriched, not analyzed again
    assert sorted(n for n, _d in calls) == sorted(i.pr.number for i in digest.all_items())
    assert {d for _n, d in calls} == {"triage"}
    # the full dossiers replaced the triage-depth ones in the store
    stored = _stored_depths(loaded_store, list(depths))
    assert stored == depths


def test_the_digest_is_the_one_full_dossiers_give(
    loaded_store: Store, records: list[PullRequest], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    split = render(build_digest(loaded_store, OPTIONS, TemplateWriter()), "json")

    def always_full(pr: PullRequest, preset: Preset, **kwargs: Any) -> Dossier:
        return analyze(pr, preset, pr_version=kwargs.get("pr_version", ""))

    monkeypatch.setattr(stage, "analyze", always_full)
    with open_store(tmp_path / "full.sqlite3") as store:
        store.records.upsert(records)
        assert render(build_digest(store, OPTIONS, TemplateWriter()), "json") == split


def test_explain_shows_full_facts_over_a_stored_triage_dossier(
    loaded_store: Store, records: list[PullRequest], vllm_preset: Preset
) -> None:
    build_digest(
        loaded_store, DigestOptions(repo=REPO, window=OPTIONS.window, top=0), TemplateWriter()
    )
    in_day = [pr for pr in records if pr.merged_at.date().isoformat() == DAY_A]
    pr = next(p for p in in_day if analyze(p, vllm_preset).salient)
    assert _stored_depths(loaded_store, [pr.number]) == {pr.number: "triage"}
    shown = explain(loaded_store, REPO, pr.number)
    assert shown.dossier == analyze(pr, vllm_preset, pr_version=pr.version_key)
    assert shown.dossier.salient and shown.pr_hash == content_hash(pr)
    assert _stored_depths(loaded_store, [pr.number]) == {pr.number: "full"}


def test_cached_runs_analyze_nothing_at_either_depth(
    loaded_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = build_digest(loaded_store, OPTIONS, TemplateWriter())
    calls = _counting_analyze(monkeypatch)
    # a new writer rewrites every entry: the stored dossiers (full for the picks) still serve
    writer = RecordingWriter(key="another-writer/1")
    again = build_digest(loaded_store, OPTIONS, writer)
    assert len(writer.requests) == first.total
    assert calls == []
    chosen = next(iter(again.selected)).pr.number
    explain(loaded_store, REPO, chosen)
    assert calls == []

"""No sentence twice in one digest: two PRs of one area and level whose numbers pick the same
phrase variants would open alike; the digest writes the later one with other variants."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from prdigest.analyze import analyze
from prdigest.core.presets import load_preset
from prdigest.core.records import PullRequest
from prdigest.core.window import day_window
from prdigest.pipeline.digest import DigestOptions, area_text, build_digest
from prdigest.store import open_store
from prdigest.triage import assess
from prdigest.write.template import TemplateWriter, repeated, sentences

from conftest import DAY_A, REPO, load_fixture

OPTIONS = DigestOptions(repo=REPO, window=day_window(DAY_A), top=4)


def _paragraph(pr: PullRequest) -> str:
    preset = load_preset(REPO)
    dossier = analyze(pr, preset, pr_version=pr.version_key)
    assessment = assess(dossier)
    area = area_text(preset, assessment.area, "zh")  # the readers, as a digest says them
    entry = TemplateWriter().write(dossier, assessment, lang="zh", paragraph=True, area=area)
    assert entry.paragraph is not None
    return entry.paragraph


def _colliding_pair() -> tuple[PullRequest, PullRequest, set[str]]:
    """Two must-read KV-connector PRs of one day, the second renumbered so that, written on its
    own, its paragraph repeats a sentence of the first's."""
    first = load_fixture(56104)
    said = sentences(_paragraph(first), "zh")
    base = load_fixture(56317)
    for number in range(70_000, 70_400):
        other = base.model_copy(
            update={
                "number": number,
                "url": f"https://github.com/{REPO}/pull/{number}",
                "merge_commit_sha": f"{number:040x}",
                "merged_at": first.merged_at + timedelta(hours=1),  # the same local day
            }
        )
        common = repeated(_paragraph(other), said, "zh")
        if common:
            return first, other, common
    raise AssertionError("no number makes the two paragraphs share a sentence")


def test_a_paragraph_that_would_repeat_a_sentence_is_written_with_other_variants(
    tmp_path: Path,
) -> None:
    first, other, common = _colliding_pair()
    with open_store(tmp_path / "s.sqlite3") as store:
        store.records.upsert([first, other])
        digest = build_digest(store, OPTIONS, TemplateWriter())
        paragraphs = {i.pr.number: i.entry.paragraph for i in digest.selected}
        assert set(paragraphs) == {first.number, other.number}
        said: set[str] = set()
        for item in digest.selected:  # in digest order, nothing said twice
            assert not repeated(item.entry.paragraph, said, "zh"), item.pr.number
            said |= sentences(item.entry.paragraph, "zh")
        later = digest.selected[-1].pr.number
        alone = _paragraph(first if later == first.number else other)
        assert paragraphs[later] != alone  # written again, with other variants
        again = build_digest(store, OPTIONS, TemplateWriter())  # stored: a re-run reads it
        assert {i.pr.number: i.entry.paragraph for i in again.selected} == paragraphs
    assert common  # the pair did collide before

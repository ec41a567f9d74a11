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


def test_a_phrase_repeats_whatever_quote_code_or_number_fills_it() -> None:
    """Two PRs whose bodies are quoted by the same words, or whose follow-ups say the same
    caveat after different leads, repeat the phrase: what fills it does not make it new."""
    first = "值得精读。描述写道：「the cache leaked」。需要留意：源码改了 12 行却没有新增或修改测试，建议补一个回归测试。"
    later = "值得选读。描述写道：「`free` ran twice」。后续建议：源码改了 30 行却没有新增或修改测试，建议补一个回归测试。"
    other = "值得选读。描述给出的原因：「`free` ran twice」。后续建议：这 30 行源码改动没有配套的测试改动，可补一个回归测试。"
    said = sentences(first, "zh")
    assert len(repeated(later, said, "zh")) == 2  # the quote's intro and the caveat
    assert not repeated(other, said, "zh")
    # a follow-up sentence of two caveats: each caveat is a phrase of its own
    two = "值得选读。遗留问题：测试一栏为空或写明未测试，合入后需自行验证；代码里留下了 `TODO`（`a.py`），需确认有人跟进。"
    one = "值得选读。需要留意：测试一栏为空或写明未测试，合入后需自行验证。"
    assert len(repeated(one, sentences(two, "zh"), "zh")) == 1
    # the level's phrase said alone, and short sentences, may repeat
    assert not repeated(
        "值得选读。描述里说「x」。", sentences("值得选读。描述里说「y」。", "zh"), "zh"
    )
    assert sentences("值得选读。", "zh") == set()


def test_repeats_counts_each_phrase_said_again_in_digest_order() -> None:
    from prdigest.write.template import repeats

    a = "值得精读。描述写道：「one block leaks per retry」。"
    b = "值得精读。描述写道：「two requests hang forever」。需要留意：测试一栏为空或写明未测试，合入后需自行验证。"
    c = "值得选读。后续建议：测试一栏为空或写明未测试，合入后需自行验证。"
    assert repeats([a, b, None, c], "zh") == [
        "描述写道：…",
        "测试一栏为空或写明未测试，合入后需自行验证",
    ]
    assert repeats([a, "值得精读。描述中写着「two requests hang forever」。"], "zh") == []


def test_another_wording_must_say_every_name_and_quote_of_the_first() -> None:
    """A variant whose length makes a quote go repeats less but says less: not taken."""
    from prdigest.write.template import says_all

    first = "值得选读。描述写道：「the engine replays the graph」。重点看：`runner.py` 中改动的 `step`。"
    reworded = "值得选读，可按需细看。描述里说「the engine replays the graph」。要看的是：`runner.py` 中改动的 `step`。"
    shorter = "值得选读。重点看：`runner.py` 中改动的 `step`。"
    assert says_all(reworded, first) and says_all(first, reworded)
    assert not says_all(shorter, first)


def test_no_phrase_twice_in_a_digest_of_the_fixture_days(tmp_path: Path) -> None:
    """Over both fixture days (up to eight paragraphs each), the template writer's digest says
    no phrase twice: the variants are enough to go round."""
    from prdigest.write.template import repeats

    from conftest import DAY_B, all_fixtures

    with open_store(tmp_path / "s.sqlite3") as store:
        store.records.upsert(all_fixtures())
        for day in (DAY_A, DAY_B):
            options = DigestOptions(repo=REPO, window=day_window(day))
            digest = build_digest(store, options, TemplateWriter())
            paragraphs = [i.entry.paragraph for i in digest.selected]
            assert len(paragraphs) >= 5, day
            assert repeats(paragraphs, "zh") == [], day

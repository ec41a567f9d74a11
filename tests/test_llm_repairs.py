"""The LLM writer on the behaviours a real local model showed (issue 12), each played by the
fake server: a slow single-slot server, a model that repeats its answer, a reply without the
opening phrase, every form of reasoning, a borrowed title, an unsupported figure, invented
reviewer attributions; repairs that carry only the answer and the findings; fallbacks that
say why."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from prdigest.analyze import analyze
from prdigest.core.presets import load_preset
from prdigest.core.records import PullRequest
from prdigest.triage import assess
from prdigest.write import BatchResult, Neighbour, WriteRequest
from prdigest.write.llm import LLMSettings, LLMWriter
from prdigest.write.llm.budget import estimate_tokens
from prdigest.write.llm.prompt import verdict_phrase
from prdigest.write.llm.verify import Grounds, verify_paragraph, verify_title

from fakellm import Call, FakeLLM, Reply, Scripted, entry_json, titles_json
from llm_support import analyzed, good_paragraph, good_title

NUMBER = 56104  # must_read, reviewed, no measured figure in its record
OTHER = 56640  # another must_read PR of the same day
LISTED = [56922, 56977, 56991]


class NoSleep:
    async def __call__(self, seconds: float) -> None:
        return None


def request(number: int, paragraph: bool = True, pr: PullRequest | None = None) -> WriteRequest:
    base, dossier, assessment = analyzed(number)
    if pr is not None:
        dossier = analyze(pr, load_preset(pr.repo), pr_version=pr.version_key)
        assessment = assess(dossier)
    neighbours = tuple(
        Neighbour(n, analyzed(n)[0].title) for n in (NUMBER, OTHER, *LISTED) if n != number
    )
    return WriteRequest(pr or base, dossier, assessment, paragraph, f"k{number}", None, neighbours)


def write(
    url: str, requests: Sequence[WriteRequest], **settings: object
) -> tuple[LLMWriter, BatchResult]:
    values: dict[str, object] = {"base_url": url, "model": "fake", "pack_entries": 1}
    values.update(settings)
    w = LLMWriter(LLMSettings(**values), sleep=NoSleep())  # type: ignore[arg-type]
    return w, w.write_batch(requests, lang="zh")


def good(call: Call) -> Reply:
    if call.is_titles:
        return Reply(titles_json({n: good_title(n) for n in call.title_numbers}))
    number = call.pr_number or 0
    return Reply(entry_json(good_title(number), good_paragraph(number), ["s1"]))


def usage_of(result: BatchResult, number: int | None) -> object:
    return next(u for u in result.usage if u.number == number)


@pytest.mark.slow
def test_a_slow_single_slot_server_gets_one_request_at_a_time_and_nothing_twice() -> None:
    # llama.cpp on a CPU: one slot, slow replies; the client reads the slots from /props,
    # so requests never pile up in the server, and each PR's request is sent exactly once
    numbers = [NUMBER, OTHER, 55602, 56908]
    # the server computes the abandoned request on for 3 s after the client gave up at 2 s
    stalled = Reply(entry_json("x", "y"), stall_after=1, stall_s=3.0)
    script = Scripted(good, {55602: [stalled]})
    with FakeLLM(script, latency=0.2, slots=1, props=True) as fake:
        _, result = write(fake.url, [request(n) for n in numbers], timeout_s=2)
        assert fake.max_active == 1
        sent = [c.pr_number for c in fake.calls]
    assert sorted(sent) == sorted(numbers)  # the stalled one too: once, never re-sent
    assert result.entries[55602].fallback
    assert all(not result.entries[n].fallback for n in numbers if n != 55602)
    assert usage_of(result, 55602).outcome == "error"  # type: ignore[attr-defined]


def test_a_model_that_repeats_its_answer_ends_the_repairs() -> None:
    bad = Reply(entry_json(good_title(NUMBER), "Worth a close read: " + "the fix is fine. " * 12))
    with FakeLLM(Scripted(good, {NUMBER: [bad]})) as fake:
        _, result = write(fake.url, [request(NUMBER)], repairs=3)
        asked = [c for c in fake.calls if c.pr_number == NUMBER]
    assert len(asked) == 2  # the first attempt and one repair: the same answer ends it
    entry = result.entries[NUMBER]
    assert entry.fallback and any("重复" in f for f in entry.findings)
    assert any("中文" in f for f in entry.findings)  # the language rule, reported as such


def test_a_reply_without_the_opening_phrase_is_fixed_without_a_call() -> None:
    body = good_paragraph(NUMBER).removeprefix("值得精读。")
    with FakeLLM(Scripted(good, {NUMBER: [Reply(entry_json(good_title(NUMBER), body))]})) as fake:
        _, result = write(fake.url, [request(NUMBER)])
        assert not any(c.is_repair for c in fake.calls)
    entry = result.entries[NUMBER]
    assert entry.paragraph is not None and entry.paragraph.startswith("值得精读。")
    assert entry.writer == "llm:fake" and not entry.fallback
    assert usage_of(result, NUMBER).outcome == "fixed"  # type: ignore[attr-defined]
    assert entry.findings == ("已由程序补上判定短语与读者",)


def test_a_paragraph_over_the_length_bound_is_trimmed_at_a_sentence_end() -> None:
    long = good_paragraph(NUMBER) + "这一点值得再看一遍。" * 40
    with FakeLLM(Scripted(good, {NUMBER: [Reply(entry_json(good_title(NUMBER), long))]})) as fake:
        _, result = write(fake.url, [request(NUMBER)])
        assert not any(c.is_repair for c in fake.calls)
    paragraph = result.entries[NUMBER].paragraph or ""
    assert len(paragraph) <= 650 and paragraph.endswith("。")


@pytest.mark.parametrize(
    "reply",
    [
        lambda j: Reply(f'<think>草稿 {{"title": "别的", "paragraph": "别的"}}</think>{j}'),
        lambda j: Reply(f'<thinking>先想一想 {{"title": "别的"}}</thinking>\n{j}'),
        lambda j: Reply(f'先想想 {{"title": "别的", "paragraph": "别的"}}</think>\n{j}'),
        lambda j: Reply(j, reasoning='{"title": "别的", "paragraph": "别的"}'),
    ],
    ids=["think", "thinking", "no-opening-tag", "reasoning_content"],
)
def test_reasoning_in_every_form_is_not_the_answer(reply: object) -> None:
    answer = entry_json(good_title(NUMBER), good_paragraph(NUMBER))
    with FakeLLM(Scripted(good, {NUMBER: [reply(answer)]})) as fake:  # type: ignore[operator]
        _, result = write(fake.url, [request(NUMBER)])
    assert result.entries[NUMBER].paragraph == good_paragraph(NUMBER)
    assert usage_of(result, NUMBER).outcome == "model"  # type: ignore[attr-defined]


def test_truncated_reasoning_falls_back_at_once_and_says_why() -> None:
    cut = Reply('<think>{"title": "草稿"} and on and on', finish_reason="length")
    with FakeLLM(Scripted(good, {NUMBER: [cut]})) as fake:
        _, result = write(fake.url, [request(NUMBER)])
        assert sum(1 for c in fake.calls if c.pr_number == NUMBER) == 1  # no repair
    entry = result.entries[NUMBER]
    assert entry.fallback and any("max_output_tokens=1200" in f for f in entry.findings)


def test_a_borrowed_title_is_rejected_and_repaired() -> None:
    # the model gives this PR the subject of another PR of the day
    borrowed = "修复 KV leak when full-prefix-hit requests 的问题"
    assert "leak" in analyzed(OTHER)[0].title and "leak" not in analyzed(NUMBER)[0].title
    first = Reply(entry_json(borrowed, good_paragraph(NUMBER)))
    with FakeLLM(Scripted(good, {NUMBER: [first, good(_call_for(NUMBER))]})) as fake:
        _, result = write(fake.url, [request(NUMBER)])
        repair = next(c for c in fake.calls if c.is_repair)
    assert f"#{OTHER}" in repair.first_user
    assert result.entries[NUMBER].title == good_title(NUMBER)
    problems = verify_title(
        borrowed, Grounds(*analyzed(NUMBER)[:2], [(OTHER, analyzed(OTHER)[0].title)]), "zh"
    )
    assert [p.code for p in problems] == ["borrowed_title"]


def _call_for(number: int) -> Call:
    return Call({"messages": [{"role": "user", "content": f"PR：#{number}"}]}, {})


def _no_reviews(number: int) -> PullRequest:
    pr = analyzed(number)[0]
    return pr.model_copy(update={"reviews": None, "review_threads": None, "comments": None})


def test_an_unsupported_figure_and_an_invented_reviewer_are_rejected() -> None:
    pr = _no_reviews(NUMBER)
    r = request(NUMBER, pr=pr)
    grounds = Grounds(pr, r.dossier)
    verdict = verdict_phrase(r.assessment, "zh")
    claim = "实测 decode 吞吐提升约一倍，评审者认为该方案已可用于生产。"
    text = good_paragraph(NUMBER).replace("。", "。" + claim, 1)
    codes = [p.code for p in verify_paragraph(text, grounds, r.assessment, "zh", verdict)]
    assert "unsupported_claim" in codes and "invented_review" in codes
    assert not r.dossier.claims and not r.dossier.coverage.discussion
    # with a measured figure and real reviewers the same words would pass those two checks
    reviewed = Grounds(*analyzed(52781)[:2])
    found = verify_paragraph(claim, reviewed, analyzed(52781)[2], "zh", verdict)
    assert not {"unsupported_claim", "invented_review"} & {p.code for p in found}


def test_an_unsupported_claim_in_a_later_sentence_is_dropped_by_prdigest() -> None:
    text = good_paragraph(NUMBER) + "实测 decode 吞吐提升约一倍。"
    reply = Reply(entry_json(good_title(NUMBER), text))
    with FakeLLM(Scripted(good, {NUMBER: [reply]})) as fake:
        _, result = write(fake.url, [request(NUMBER)])
        assert not any(c.is_repair for c in fake.calls)
    entry = result.entries[NUMBER]
    assert "一倍" not in (entry.paragraph or "") and not entry.fallback
    assert any("删去 1 句" in f for f in entry.findings)


def test_a_repair_request_is_under_half_its_first_attempt() -> None:
    bad = Reply(entry_json(good_title(NUMBER), "Worth a close read. The fix is fine."))
    with FakeLLM(Scripted(good, {NUMBER: [bad, bad]})) as fake:
        write(fake.url, [request(NUMBER)])
        first = next(c for c in fake.calls if c.pr_number == NUMBER and not c.is_repair)
        repair = next(c for c in fake.calls if c.is_repair)

    def size(call: Call) -> int:
        return sum(estimate_tokens(m["content"]) for m in call.messages)

    assert size(repair) < 0.5 * size(first), (size(repair), size(first))
    assert "Worth a close read. The fix is fine." in repair.first_user  # the failed answer
    assert "<<<PR-DATA-" not in repair.first_user  # and no PR data


def test_a_repair_that_would_not_fit_the_context_is_not_sent() -> None:
    bad = Reply(entry_json(good_title(NUMBER), "Worth a close read. " * 800))
    with FakeLLM(Scripted(good, {NUMBER: [bad]})) as fake:
        _, result = write(
            fake.url, [request(NUMBER)], context_tokens=3_000, max_output_tokens=1_200
        )
        assert not any(c.is_repair for c in fake.calls)
    assert any("上下文" in f for f in result.entries[NUMBER].findings)


def test_titles_outcome_is_failed_when_none_is_accepted_and_each_says_why() -> None:
    english = {n: "An English title nobody checked" for n in LISTED}
    script = Scripted(good, titles=[Reply(titles_json(english))])
    with FakeLLM(script) as fake:
        _, result = write(fake.url, [request(n, paragraph=False) for n in LISTED])
    assert usage_of(result, None).outcome == "failed"  # type: ignore[attr-defined]
    for n in LISTED:
        assert result.entries[n].fallback and any("中文" in f for f in result.entries[n].findings)


def test_made_up_cite_ids_are_reported_with_the_entry() -> None:
    reply = Reply(entry_json(good_title(NUMBER), good_paragraph(NUMBER), ["s1", "zz9", "q77"]))
    with FakeLLM(Scripted(good, {NUMBER: [reply]})) as fake:
        _, result = write(fake.url, [request(NUMBER)])
    entry = result.entries[NUMBER]
    assert entry.cites == ("s1",) and "zz9, q77" in " ".join(entry.findings)


def test_dry_run_plans_the_calls_without_sending_any() -> None:
    requests = [request(NUMBER), request(OTHER), *(request(n, paragraph=False) for n in LISTED)]
    with FakeLLM(good) as fake:
        w = LLMWriter(LLMSettings(base_url=fake.url, model="fake", pack_entries=1))
        plan = w.plan(requests, lang="zh")
        assert not fake.calls
    assert [c.purpose for c in plan] == ["titles", "paragraph", "paragraph"]
    assert plan[0].numbers == tuple(LISTED) and all(c.prompt_tokens > 500 for c in plan[1:])


def test_progress_reports_entries_done_and_tokens() -> None:
    seen: list[tuple[int, int, int]] = []
    requests = [request(NUMBER), request(OTHER), request(LISTED[0], paragraph=False)]
    with FakeLLM(good) as fake:
        w = LLMWriter(
            LLMSettings(base_url=fake.url, model="fake", pack_entries=1),
            progress=lambda *a: seen.append(a),
        )
        w.write_batch(requests, lang="zh")
    assert [s[:2] for s in seen] == [(1, 3), (2, 3), (3, 3)]
    assert seen[-1][2] == 3 * 1200  # the fake's usage: 1000 + 200 per call


def test_findings_survive_the_json_format() -> None:
    bad = Reply(entry_json(good_title(NUMBER), "Worth a close read."))
    with FakeLLM(Scripted(good, {NUMBER: [bad]})) as fake:
        _, result = write(fake.url, [request(NUMBER)])
    data = json.loads(result.entries[NUMBER].model_dump_json())
    assert data["fallback"] and data["findings"]

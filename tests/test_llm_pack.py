"""Packs: several paragraph entries in one request with one copy of the instructions, each
entry verified, fixed, repaired, replaced and cached on its own exactly as if it had come alone
(the fake server answers the pack; per-entry behaviour is the one tests/test_llm_writer.py and
tests/test_llm_repairs.py check for single requests)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx

from prdigest.cli.llm import dry_run_text
from prdigest.core.locale import locale
from prdigest.core.models import Level
from prdigest.pipeline.llm_batch import _writer
from prdigest.pipeline.registry import WriterSpec
from prdigest.write.llm import LLMSettings, LLMWriter
from prdigest.write.llm.budget import estimate_tokens
from prdigest.write.llm.writer import pack_requests
from test_llm_repairs import LISTED, NUMBER, OTHER, NoSleep, request

from fakellm import Call, FakeLLM, Reply, entry_json, pack_json
from llm_support import good_paragraph, good_title

PACK = [NUMBER, OTHER]  # two must-read PRs of one day: one pack


def writer(url: str, **settings: Any) -> LLMWriter:
    values: dict[str, Any] = {"base_url": url, "model": "fake", **settings}
    return LLMWriter(LLMSettings(**values), sleep=NoSleep())


def good_entry(number: int) -> str:
    return entry_json(good_title(number), good_paragraph(number), ["s1"])


def answering(entries: dict[int, str]) -> Any:
    """A responder: the pack gets ``entries``; a single request or a repair a good entry."""

    def respond(call: Call) -> Reply:
        if call.pack_numbers:
            return Reply(pack_json({n: entries[n] for n in call.pack_numbers if n in entries}))
        number = call.pr_number
        if number is None:  # a repair carries no PR data: the draft's PR is in its first line
            number = next(n for n in PACK if f"#{n}" in call.first_user)
        return Reply(good_entry(number))

    return respond


def test_a_pack_is_one_request_with_the_instructions_once_and_each_prs_own_data() -> None:
    requests = [request(n) for n in PACK]
    with FakeLLM(answering({n: good_entry(n) for n in PACK})) as fake:
        w = writer(fake.url)
        result = w.write_batch(requests, lang="zh")
    assert len(fake.calls) == 1 and fake.calls[0].pack_numbers == PACK
    call = fake.calls[0]
    single = [w.prompt_for(r, "zh") for r in requests]
    for built in single:  # the PR's data block, exactly as its own request carries it
        assert built.item in call.first_user
    assert call.system.count("铁律") == 1 and '"entries"' in call.system
    pack_tokens = estimate_tokens(call.system) + estimate_tokens(call.first_user)
    assert pack_tokens < sum(b.tokens for b in single) - single[1].system_tokens + 200
    assert [result.entries[n].fallback for n in PACK] == [False, False]
    assert result.cacheable == frozenset(PACK)
    usage = {u.number: u for u in result.usage}
    assert {usage[n].outcome for n in PACK} == {"model"}
    # the pack's cost is shared out, counted once: the fake reports 1000 + 200 per call
    assert sum(usage[n].prompt_tokens for n in PACK) == 1000
    assert sum(usage[n].completion_tokens for n in PACK) == 200
    assert sum(usage[n].calls for n in PACK) == 1 and sum(usage[n].requests for n in PACK) == 1
    assert all(usage[n].prompt_tokens > 0 for n in PACK)


def test_a_failing_entry_of_a_pack_is_fixed_or_repaired_alone() -> None:
    invented = entry_json("修复 `no_such_function` 的问题", good_paragraph(OTHER), ["s1"])
    with FakeLLM(answering({NUMBER: good_entry(NUMBER), OTHER: invented})) as fake:
        result = writer(fake.url).write_batch([request(n) for n in PACK], lang="zh")
    assert len(fake.calls) == 2 and fake.calls[0].pack_numbers == PACK
    repair = fake.calls[1]
    assert repair.is_repair and "no_such_function" in repair.first_user
    assert good_paragraph(NUMBER)[:30] not in repair.first_user  # only the failed entry
    usage = {u.number: u for u in result.usage}
    assert usage[NUMBER].outcome == "model" and usage[OTHER].outcome == "repaired"
    assert usage[OTHER].requests == 1  # its repair; the pack counted with the first entry
    assert "no_such_function" not in result.entries[OTHER].title


def test_an_entry_the_pack_reply_lacks_is_asked_for_in_its_own_request() -> None:
    with FakeLLM(answering({NUMBER: good_entry(NUMBER)})) as fake:
        result = writer(fake.url).write_batch([request(n) for n in PACK], lang="zh")
    assert len(fake.calls) == 2
    assert fake.calls[1].pr_number == OTHER and not fake.calls[1].is_repair
    assert {u.outcome for u in result.usage} == {"model"}
    assert result.cacheable == frozenset(PACK)


def test_a_reply_without_json_sends_each_entry_alone() -> None:
    def respond(call: Call) -> Reply:
        if call.pack_numbers:
            return Reply("对不起，我只能写一条。")
        assert call.pr_number is not None
        return Reply(good_entry(call.pr_number))

    with FakeLLM(respond) as fake:
        result = writer(fake.url).write_batch([request(n) for n in PACK], lang="zh")
    assert [c.pr_number for c in fake.calls[1:]] == PACK
    assert not any(e.fallback for e in result.entries.values())


def test_a_server_error_fails_every_entry_of_the_pack_and_nothing_is_cached() -> None:
    with FakeLLM(lambda call: Reply(status=400, content="bad request")) as fake:
        result = writer(fake.url, max_retries=0).write_batch([request(n) for n in PACK], lang="zh")
    assert len(fake.calls) == 1
    assert all(result.entries[n].fallback for n in PACK)
    assert result.cacheable == frozenset()  # a re-run tries again
    assert {u.outcome for u in result.usage} == {"error"}
    assert sum(u.requests for u in result.usage) == 1


def test_a_cost_budget_refuses_the_pack_as_a_whole() -> None:
    with FakeLLM(answering({})) as fake:
        result = writer(fake.url, max_cost_tokens=100).write_batch(
            [request(n) for n in PACK], lang="zh"
        )
    assert not fake.calls
    assert {u.outcome for u in result.usage} == {"budget"}


def test_dry_run_plans_one_request_per_pack() -> None:
    requests = [*(request(n) for n in PACK), *(request(n, paragraph=False) for n in LISTED)]
    packed = writer("http://127.0.0.1:9/v1").plan(requests, lang="zh")
    alone = writer("http://127.0.0.1:9/v1", pack_entries=1).plan(requests, lang="zh")
    assert [c.numbers for c in packed] == [tuple(LISTED), tuple(PACK)]
    assert packed[1].max_output_tokens == 2 * 1200
    assert [c.numbers for c in alone] == [tuple(LISTED), (NUMBER,), (OTHER,)]
    assert packed[1].prompt_tokens < alone[1].prompt_tokens + alone[2].prompt_tokens
    assert f"paragraphs of #{NUMBER}, #{OTHER}: about" in dry_run_text(packed)
    assert "dry run: 2 request(s)" in dry_run_text(packed)


def test_packs_keep_to_their_kind_size_and_the_servers_context() -> None:
    w = writer("http://127.0.0.1:9/v1")
    deep = request(NUMBER)
    short = replace(deep, assessment=deep.assessment.model_copy(update={"level": Level.SKIM}))
    built_deep = w.prompt_for(deep, "zh")
    built_short = w.prompt_for(short, "zh")
    items = [(deep, built_deep), (short, built_short), (deep, built_deep), (short, built_short)]
    settings = w.settings

    def sizes(packs: list[list[Any]]) -> list[list[Level]]:
        return [[r.assessment.level for r, _ in pack] for pack in packs]

    # close-read entries with close-read ones, short ones with short ones
    assert sizes(pack_requests(items, settings)) == [[Level.MUST_READ] * 2, [Level.SKIM] * 2]
    one = settings.model_copy(update={"pack_entries": 1})
    assert len(pack_requests(items, one)) == 4
    # a server context that holds one entry and its output allowance, not two
    tight = settings.model_copy(update={"context_tokens": built_deep.tokens + 1200 + 600})
    assert all(len(pack) == 1 for pack in pack_requests(items[::2], tight))


def test_the_batch_engine_sends_one_request_per_entry() -> None:
    spec = WriterSpec(writer="llm")
    env = {"PRDIGEST_LLM_MODEL": "m", "PRDIGEST_LLM_BASE_URL": "http://127.0.0.1:9/v1"}
    w = _writer(spec, env, lambda: httpx.MockTransport(lambda r: httpx.Response(404)))
    assert w.settings.pack_entries == 1  # a later round must find each first request again
    assert json.dumps(w.settings.model_dump(mode="json"))  # still a valid settings object


def test_a_pack_says_the_length_once_and_each_prs_verdict_in_its_block() -> None:
    requests = [request(n) for n in PACK]
    w = writer("http://127.0.0.1:9/v1")
    built = [(r, w.prompt_for(r, "zh")) for r in requests]
    _, user = (m["content"] for m in w._pack_messages(built, "zh"))
    assert user.count("段落长度 150–450 字。") == 1 and user.count("必须原样使用") == 1
    for r, entry in built:
        block = user.split(f"### PR #{r.dossier.number}\n", 1)[1]
        assert block.startswith(f"判定：段落以「{entry.verdict}」开头。")
        assert "段落长度" not in entry.item  # the length is the pack's, said once
        assert "段落长度" in entry.messages[1]["content"]  # a request of its own says it


def test_a_pack_explains_the_fact_notation_once_and_each_block_uses_it() -> None:
    requests = [request(n) for n in PACK]
    w = writer("http://127.0.0.1:9/v1")
    built = [(r, w.prompt_for(r, "zh")) for r in requests]
    _, user = (m["content"] for m in w._pack_messages(built, "zh"))
    notation = locale("zh").llm["notation"]
    assert user.count(notation) == 1  # in the frame, before the first PR's block
    assert user.index(notation) < user.index(f"### PR #{PACK[0]}")
    for _, entry in built:
        assert notation not in entry.item and "\nsymbols:\n" in entry.item
        assert notation in entry.messages[1]["content"]  # a request of its own explains it

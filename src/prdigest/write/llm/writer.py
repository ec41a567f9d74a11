"""The LLM writer: entries from any OpenAI-compatible model, verified against the PR record.

Flow per digest (:meth:`LLMWriter.write_batch`): one batched request for the Chinese titles of
every listed PR that gets no paragraph, and one request per selected PR for title + paragraph,
all concurrently under the client's limit. Each reply is verified (:mod:`.verify`); a
failing reply gets one repair request naming its problems; a reply that still fails is
replaced by the template writer's entry, marked ``fallback=True``.

Nothing here raises for one PR's failure: a timeout, an unusable reply or a spent cost budget
ends in the template entry for that PR, and every other PR keeps its own entry. Fallbacks from
network faults or the cost budget are not cacheable (a re-run tries again); fallbacks after
failed verification are (a re-run with the same model and prompt would pay for the same
failure).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from prdigest.core.errors import LLMBudgetError, LLMError, LLMResponseError
from prdigest.core.locale import locale
from prdigest.core.models import Assessment, CodeRef, Dossier, Entry, Level
from prdigest.write import BatchResult, Lang, UsageRecord, WriteRequest
from prdigest.write.llm import prompt as p
from prdigest.write.llm.budget import estimate_tokens
from prdigest.write.llm.client import Completion, LLMClient, Message, Sleep
from prdigest.write.llm.settings import LLMSettings
from prdigest.write.llm.style import Reference, default_reference, format_examples, pick_examples
from prdigest.write.llm.verify import Grounds, Problem, verify_entry, verify_title
from prdigest.write.template import TemplateWriter

TITLES_PER_REQUEST = 150  # one request per digest in practice; bounds the reply of huge days
TITLE_OUTPUT_TOKENS = 48  # per title, JSON included
_BACKTICK = re.compile(r"`([^`\n]+)`")


class Ledger:
    """The run's token spending against ``--max-cost-tokens``; reservations keep concurrent
    requests from overshooting together."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.spent = 0
        self.reserved = 0
        self.refused = 0

    def reserve(self, tokens: int) -> bool:
        if self.limit is not None and self.spent + self.reserved + tokens > self.limit:
            self.refused += 1
            return False
        self.reserved += tokens
        return True

    def settle(self, reserved: int, used: int) -> None:
        self.reserved -= reserved
        self.spent += used


@dataclass
class _Tally:
    """Tokens and calls of one logical write (a request and its repair)."""

    prompt: int = 0
    completion: int = 0
    calls: int = 0
    estimated: bool = False

    def add(self, c: Completion) -> None:
        self.prompt += c.prompt_tokens
        self.completion += c.completion_tokens
        self.calls += c.attempts
        self.estimated = self.estimated or c.estimated


@dataclass(frozen=True)
class _Outcome:
    entry: Entry
    cacheable: bool
    usage: UsageRecord | None = None
    note: str | None = None


@dataclass(frozen=True)
class _Reply:
    title: str
    paragraph: str | None
    cites: tuple[str, ...]


def _reply(data: dict[str, Any] | None, paragraph: bool) -> _Reply | None:
    if not data or not isinstance(data.get("title"), str):
        return None
    text = data.get("paragraph")
    if paragraph and not isinstance(text, str):
        return None
    cites = data.get("cites")
    ids = tuple(str(c) for c in cites) if isinstance(cites, list) else ()
    return _Reply(data["title"].strip(), text.strip() if isinstance(text, str) else None, ids)


def code_refs(text: str, d: Dossier) -> tuple[CodeRef, ...]:
    """Backticked names of an entry that are dossier symbols, tests or files (for permalinks)."""
    where: dict[str, CodeRef] = {}
    for f in d.files:
        for name in (f.path, f.path.rsplit("/", 1)[-1]):
            where.setdefault(name, CodeRef(name=name, path=f.path))
    for t in d.tests:
        where.setdefault(t.name, CodeRef(name=t.name, path=t.path, line=t.line))
    for s in d.symbols:
        line = s.line if s.change != "removed" else None
        where.setdefault(s.name, CodeRef(name=s.name, path=s.path, line=line))
    found: dict[str, CodeRef] = {}
    for raw in _BACKTICK.findall(text):
        name = raw.strip().removesuffix("()")
        if name in where:
            found.setdefault(name, where[name].model_copy(update={"name": raw.strip()}))
    return tuple(found.values())


@dataclass(frozen=True)
class LLMWriter:
    """Writes entries with a model; see the module docstring. ``key`` names the model, the
    prompt version, the budget and the style, so changing any of them rewrites entries."""

    settings: LLMSettings
    style: Reference | None = None
    http_client_factory: Callable[[], httpx.AsyncClient] | None = None
    sleep: Sleep = asyncio.sleep
    template: TemplateWriter = field(default_factory=TemplateWriter)

    @property
    def style_text(self) -> str:
        return format_examples(pick_examples(self.style or default_reference()))

    @property
    def key(self) -> str:
        style = hashlib.sha256(self.style_text.encode()).hexdigest()[:8]
        return (
            f"llm:{self.settings.model}|{p.prompt_version()}"
            f"|budget={self.settings.budget_tokens}|style={style}"
        )

    @property
    def name(self) -> str:
        return f"llm:{self.settings.model}"

    def write_batch(self, requests: Sequence[WriteRequest], *, lang: Lang) -> BatchResult:
        """Entries for all requests (see the module docstring); runs its own event loop."""
        if not requests:
            return BatchResult(entries={}, cacheable=frozenset())
        return asyncio.run(self.write_batch_async(requests, lang=lang))

    async def write_batch_async(
        self, requests: Sequence[WriteRequest], *, lang: Lang
    ) -> BatchResult:
        http = self.http_client_factory() if self.http_client_factory else None
        ledger = Ledger(self.settings.max_cost_tokens)
        style = self.style_text
        deep = [r for r in requests if r.paragraph and r.assessment.level is not Level.LIST_ONLY]
        listed = [r for r in requests if r not in deep]
        # Prompt building and verification are CPU work on the event loop: building every
        # prompt up front would delay the first replies, building each only when an HTTP slot
        # frees would put it on the critical path. Twice the HTTP limit keeps one prompt ready
        # per slot while the others wait for the network.
        slots = asyncio.Semaphore(2 * self.settings.concurrency)

        async def paragraph(r: WriteRequest) -> _Outcome:
            async with slots:
                return await self._paragraph(client, r, lang, style, ledger)

        async with LLMClient(self.settings, http_client=http, sleep=self.sleep) as client:
            jobs = [paragraph(r) for r in deep]
            chunks = [
                listed[i : i + TITLES_PER_REQUEST]
                for i in range(0, len(listed), TITLES_PER_REQUEST)
            ]
            title_jobs = [self._titles(client, chunk, lang, ledger) for chunk in chunks]
            # titles first: their request is small, and scheduled first it is not starved by
            # the paragraph requests' budget reservations; both run concurrently
            titles_future = asyncio.gather(*title_jobs)
            singles = await asyncio.gather(*jobs)
            titled = await titles_future
        outcomes = [o for group in titled for o in group] + list(singles)
        return self._result(requests, outcomes, ledger)

    def _result(
        self, requests: Sequence[WriteRequest], outcomes: list[_Outcome], ledger: Ledger
    ) -> BatchResult:
        entries = {o.entry.number: o.entry for o in outcomes}
        notes = [o.note for o in outcomes if o.note]
        if ledger.refused and ledger.limit is not None:
            budget_hits = sum(1 for o in outcomes if o.usage and o.usage.outcome == "budget")
            notes.append(
                f"cost budget of {ledger.limit} tokens reached after {ledger.spent}: "
                f"{budget_hits} write(s) fell back to the template writer"
            )
        return BatchResult(
            entries={r.dossier.number: entries[r.dossier.number] for r in requests},
            cacheable=frozenset(o.entry.number for o in outcomes if o.cacheable),
            usage=tuple(o.usage for o in outcomes if o.usage),
            notes=tuple(dict.fromkeys(notes)),
        )

    # -- one selected PR: title + paragraph ---------------------------------------------------

    def _fallback(self, r: WriteRequest, lang: Lang, paragraph: bool | None = None) -> Entry:
        wanted = r.paragraph if paragraph is None else paragraph
        entry = self.template.write(
            r.dossier, r.assessment, lang=lang, paragraph=wanted, area=r.area
        )
        return entry.model_copy(update={"fallback": True})

    async def _call(
        self,
        client: LLMClient,
        messages: Sequence[Message],
        max_tokens: int,
        ledger: Ledger,
        pr: str,
    ) -> Completion:
        """One reply; :class:`LLMBudgetError` when the cost budget refuses the request."""
        estimate = sum(estimate_tokens(m["content"]) for m in messages) + max_tokens
        if not ledger.reserve(estimate):
            limit = ledger.limit or 0
            raise LLMBudgetError(
                f"cost budget of {limit} tokens reached", spent=ledger.spent, limit=limit
            )
        completion: Completion | None = None
        try:
            completion = await client.complete_json(messages, max_tokens=max_tokens, pr=pr)
        finally:
            used = completion.prompt_tokens + completion.completion_tokens if completion else 0
            ledger.settle(estimate, used)
        return completion

    async def _paragraph(
        self, client: LLMClient, r: WriteRequest, lang: Lang, style: str, ledger: Ledger
    ) -> _Outcome:
        d, a = r.dossier, r.assessment
        built = p.entry_prompt(
            r.pr,
            d,
            a,
            lang=lang,
            style=style,
            budget_tokens=self.settings.budget_tokens,
            readers=p.Readers(area=r.area_name, audience=r.audience),
        )
        grounds = Grounds(r.pr, d)
        tally = _Tally()
        messages: list[Message] = list(built.messages)
        for attempt in (1, 2):
            try:
                completion = await self._call(
                    client, messages, self.settings.max_output_tokens, ledger, d.ref
                )
            except LLMBudgetError:
                return self._failed(r, lang, tally, "budget", None)
            except LLMResponseError as exc:
                if exc.status is not None or attempt == 2:
                    return self._failed(r, lang, tally, "error", str(exc))
                messages = list(built.messages)  # no usable reply to repair: ask once more
                continue
            except LLMError as exc:
                return self._failed(r, lang, tally, "error", str(exc))
            tally.add(completion)
            reply = _reply(completion.data, paragraph=True)
            problems = self._check(reply, grounds, a, lang, built.verdict)
            if reply is not None and not problems:
                entry = self._entry(r, reply, lang)
                outcome = "verified" if attempt == 1 else "repaired"
                return _Outcome(entry, True, self._usage(r, tally, outcome))
            messages = [
                *built.messages,
                {"role": "assistant", "content": completion.content},
                p.repair_message(problems, built.verdict, lang),
            ]
        entry = self._fallback(r, lang)
        return _Outcome(entry, True, self._usage(r, tally, "fallback"))

    def _check(
        self, reply: _Reply | None, grounds: Grounds, a: Assessment, lang: Lang, verdict: str
    ) -> list[str]:
        if reply is None:
            return [str(locale(lang).verify["format"])]
        problems: list[Problem] = verify_entry(
            reply.title, reply.paragraph or "", grounds, a, lang, verdict
        )
        return [x.message(lang) for x in problems]

    def _failed(
        self, r: WriteRequest, lang: Lang, tally: _Tally, outcome: str, note: str | None
    ) -> _Outcome:
        return _Outcome(self._fallback(r, lang), False, self._usage(r, tally, outcome), note)

    def _usage(self, r: WriteRequest, tally: _Tally, outcome: str) -> UsageRecord:
        return UsageRecord(
            number=r.dossier.number,
            purpose="paragraph",
            prompt_tokens=tally.prompt,
            completion_tokens=tally.completion,
            calls=tally.calls,
            outcome=outcome,
            estimated=tally.estimated,
            entry_key=r.entry_key,
        )

    def _entry(self, r: WriteRequest, reply: _Reply, lang: Lang) -> Entry:
        d = r.dossier
        known = {f.id for f in _facts(d)}
        text = f"{reply.title} {reply.paragraph or ''}"
        return Entry(
            repo=d.repo,
            number=d.number,
            lang=lang,
            title=reply.title,
            paragraph=reply.paragraph,
            writer=self.name,
            cites=tuple(dict.fromkeys(c for c in reply.cites if c in known)),
            code_refs=code_refs(text, d),
        )

    # -- the listed PRs: titles in one batched request -------------------------------------------

    async def _titles(
        self, client: LLMClient, chunk: Sequence[WriteRequest], lang: Lang, ledger: Ledger
    ) -> list[_Outcome]:
        by_number = {r.dossier.number: r for r in chunk}
        grounds = {n: Grounds(r.pr, r.dossier) for n, r in by_number.items()}
        base = p.titles_messages(chunk[0].dossier.repo, [(r.pr, r.dossier) for r in chunk], lang)
        max_tokens = TITLE_OUTPUT_TOKENS * len(chunk) + 100
        titles: dict[int, str] = {}
        pending = dict(by_number)
        tally = _Tally()
        messages: list[Message] = list(base)
        note: str | None = None
        refused = False
        for _attempt in (1, 2):
            try:
                completion = await self._call(client, messages, max_tokens, ledger, "titles")
            except LLMBudgetError:
                refused = True
                break
            except LLMError as exc:
                note = f"titles: {exc}"
                break
            tally.add(completion)
            problems = self._title_problems(completion.data, pending, grounds, titles, lang)
            if not problems:
                break
            messages = [
                *base,
                {"role": "assistant", "content": completion.content},
                p.titles_repair_message(problems, lang),
            ]
        return self._title_outcomes(chunk, titles, tally, refused, lang, note)

    def _title_problems(
        self,
        data: dict[str, Any] | None,
        pending: dict[int, WriteRequest],
        grounds: dict[int, Grounds],
        titles: dict[int, str],
        lang: Lang,
    ) -> list[str]:
        """Accept the verified titles of a reply into ``titles``; the problems of the rest."""
        items = data.get("titles") if data else None
        offered: dict[int, str] = {}
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("title"), str):
                try:
                    offered[int(item.get("number", 0))] = item["title"].strip()
                except (TypeError, ValueError):
                    continue
        problems: list[str] = []
        for number in list(pending):
            title = offered.get(number)
            if title is None:
                problems.append(f"#{number}: " + str(locale(lang).verify["title_missing"]))
                continue
            found = verify_title(title, grounds[number], lang)
            if found:
                problems += [f"#{number}: {x.message(lang)}" for x in found]
            else:
                titles[number] = title
                del pending[number]
        return problems

    def _title_outcomes(
        self,
        chunk: Sequence[WriteRequest],
        titles: dict[int, str],
        tally: _Tally,
        refused: bool,
        lang: Lang,
        note: str | None,
    ) -> list[_Outcome]:
        """One outcome per PR; a fallback title is cacheable only when the model was asked and
        answered (not after a network fault or a budget refusal: a re-run should try again)."""
        retry_later = note is not None or refused
        outcome = "error" if note else ("budget" if tally.calls == 0 else "verified")
        if outcome == "verified" and len(titles) < len(chunk):
            outcome = "partial"
        usage = UsageRecord(
            number=None,
            purpose="titles",
            prompt_tokens=tally.prompt,
            completion_tokens=tally.completion,
            calls=tally.calls,
            outcome=outcome,
            estimated=tally.estimated,
        )
        outcomes: list[_Outcome] = []
        for index, r in enumerate(chunk):
            d = r.dossier
            if d.number in titles:
                entry = Entry(
                    repo=d.repo,
                    number=d.number,
                    lang=lang,
                    title=titles[d.number],
                    paragraph=None,
                    writer=self.name,
                    code_refs=code_refs(titles[d.number], d),
                )
            else:
                entry = self._fallback(r, lang, paragraph=r.paragraph)
            cacheable = d.number in titles or not retry_later
            first = index == 0
            outcomes.append(
                _Outcome(entry, cacheable, usage if first else None, note if first else None)
            )
        return outcomes


def _facts(d: Dossier) -> list[Any]:
    return [
        *d.files,
        *d.symbols,
        *d.tests,
        *d.techniques,
        *d.sections,
        *d.claims,
        *d.reviewers,
        *d.threads,
        *d.remarks,
        *d.issues,
        *d.commits,
        *d.signals,
    ]


__all__ = ["LLMWriter", "Ledger", "code_refs"]

"""The LLM writer: entries from any OpenAI-compatible model, verified against the PR record.

Flow per digest (:meth:`LLMWriter.write_batch`): one batched request for the titles of every
listed PR that gets no paragraph, and the selected PRs' title + paragraph entries in packs
(:func:`pack_requests`: up to ``pack_entries`` a request, the instructions once, each PR's data
block as its own request would carry it), as many at once as the server has slots. Each reply,
or each entry of a pack's reply, is verified (:mod:`.verify`) on its own. A failing draft
is first fixed by prdigest itself where it can (:func:`.repair.fix_draft`: the verdict phrase,
an unsupported sentence, the length); what remains goes back to the model in a *repair
request* that carries only the failed answer and the findings, sent at once in the same server
slot (the prompt cache is still warm). An answer identical to the previous one ends the
repairs. A draft that still fails is replaced by the template writer's entry, marked
``fallback=True`` and carrying the findings that explain why.

Outcomes (``UsageRecord.outcome``): ``model`` (first answer verified), ``repaired`` (after a
repair request), ``fixed`` (a deterministic fix made it pass), ``fallback`` (verification
failed), ``error`` (the server failed or timed out), ``budget`` (``--max-cost-tokens``
refused the request); titles: ``model``, ``partial``, ``failed`` (none accepted), ``error``,
``budget``.

Nothing here raises for one PR's failure. Fallbacks from network faults or the cost budget are
not cacheable (a re-run tries again); fallbacks after failed verification are (a re-run with the
same model and prompt would pay for the same failure).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from prdigest.core.errors import LLMBudgetError, LLMError, LLMResponseError, LLMTimeoutError
from prdigest.core.locale import locale
from prdigest.core.models import CodeRef, Dossier, Entry, Level
from prdigest.write import BatchResult, Lang, UsageRecord, WriteRequest
from prdigest.write.llm import prompt as p
from prdigest.write.llm.budget import estimate_tokens
from prdigest.write.llm.client import Completion, LLMClient, Message, Sleep
from prdigest.write.llm.repair import Draft, check_draft, fix_draft, parse_draft, same_answer
from prdigest.write.llm.settings import OUTPUT_MARGIN_TOKENS, LLMSettings
from prdigest.write.llm.style import (
    Reference,
    default_reference,
    format_examples,
    pick_close_examples,
    pick_examples,
    pick_short_example,
)
from prdigest.write.llm.verify import Grounds, Problem, unknown_cites, verify_title
from prdigest.write.template import TemplateWriter

TITLES_PER_REQUEST = 150  # one request per digest in practice; bounds the reply of huge days
TITLE_OUTPUT_TOKENS = 48  # per title, JSON included
_BACKTICK = re.compile(r"`([^`\n]+)`")

# (entries done, entries to write, tokens spent so far)
ProgressCallback = Callable[[int, int, int], None]


class Ledger:
    """The run's token spending against ``--max-cost-tokens``; reservations keep concurrent
    requests from overshooting together. Checked before every request, repairs included."""

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
    """Tokens, requests and attempts of one logical write (a request and its repairs)."""

    prompt: int = 0
    completion: int = 0
    requests: int = 0
    attempts: int = 0
    estimated: bool = False
    seconds: float = 0.0

    def add(self, c: Completion) -> None:
        self.prompt += c.prompt_tokens
        self.completion += c.completion_tokens
        self.requests += 1
        self.attempts += c.attempts
        self.estimated = self.estimated or c.estimated
        self.seconds += c.latency_s

    def add_failed(self, messages: Sequence[Message], seconds: float, timed_out: bool) -> None:
        """A request that brought no reply: it counts as an attempt; a timed-out prompt was
        sent and probably read, so its tokens count too (estimated)."""
        self.requests += 1
        self.attempts += 1
        self.seconds += seconds
        if timed_out:
            self.prompt += sum(estimate_tokens(m["content"]) for m in messages)
            self.estimated = True


@dataclass(frozen=True)
class _Outcome:
    entry: Entry
    cacheable: bool
    usage: UsageRecord | None = None
    note: str | None = None


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


def grounds_for(r: WriteRequest) -> Grounds:
    """The verifier's view of a request's PR, with the window's other PRs for titles."""
    return Grounds(r.pr, r.dossier, [(n.number, n.title) for n in r.neighbours])


@dataclass(frozen=True)
class PlannedCall:
    """A request a run would send (``--dry-run``)."""

    purpose: str  # "paragraph" | "titles"
    numbers: tuple[int, ...]
    prompt_tokens: int
    max_output_tokens: int


@dataclass(frozen=True)
class LLMWriter:
    """Writes entries with a model; see the module docstring. ``key`` names the model, the
    prompt version, the budget and the style, so changing any of them rewrites entries."""

    settings: LLMSettings
    style: Reference | None = None
    http_client_factory: Callable[[], httpx.AsyncClient] | None = None
    sleep: Sleep = asyncio.sleep
    template: TemplateWriter = field(default_factory=TemplateWriter)
    progress: ProgressCallback | None = None

    @property
    def style_text(self) -> str:
        return format_examples(pick_examples(self.style or default_reference()))

    @property
    def short_style_text(self) -> str:
        """One example for entries that need no close read: their paragraphs are short, and
        three examples would cost more tokens than their PR data."""
        return format_examples(pick_short_example(self.style or default_reference()))

    @property
    def close_style_text(self) -> str:
        """The close-read examples, for a must-read entry (no skim example beside them)."""
        return format_examples(pick_close_examples(self.style or default_reference()))

    @property
    def one_style_text(self) -> str:
        """One close-read example, for a worth-reading entry (a must-read one gets all)."""
        return format_examples(pick_examples(self.style or default_reference(), count=1))

    def _style_for(self, level: Level) -> str:
        if level is Level.MUST_READ:
            return self.close_style_text
        return self.one_style_text if p.deep_level(level) else self.short_style_text

    @property
    def key(self) -> str:
        style = hashlib.sha256(self.style_text.encode()).hexdigest()[:8]
        return (
            f"llm:{self.settings.model}|{p.prompt_version()}"
            f"|budget={self.settings.prompt_room}|style={style}"
        )

    @property
    def name(self) -> str:
        return f"llm:{self.settings.model}"

    # -- planning (--dry-run) -----------------------------------------------------------------

    def plan(self, requests: Sequence[WriteRequest], *, lang: Lang) -> list[PlannedCall]:
        """The requests a run would send for ``requests``, with estimated prompt tokens; no
        call is made. Repairs are not planned: they happen only when a draft fails."""
        deep, listed = _split(requests)
        calls = [
            PlannedCall(
                "titles",
                tuple(r.dossier.number for r in chunk),
                sum(estimate_tokens(m["content"]) for m in self._titles_messages(chunk, lang)),
                _title_tokens(chunk),
            )
            for chunk in _chunks(listed)
        ]
        for pack in self._packs(deep, lang):
            messages = self._pack_messages(pack, lang)
            calls.append(
                PlannedCall(
                    "paragraph",
                    tuple(r.dossier.number for r, _ in pack),
                    sum(estimate_tokens(m["content"]) for m in messages),
                    self.settings.max_output_tokens * len(pack),
                )
            )
        return calls

    def _packs(
        self, deep: Sequence[WriteRequest], lang: Lang
    ) -> list[list[tuple[WriteRequest, p.EntryPrompt]]]:
        """The paragraph requests in packs (see :func:`pack_requests`)."""
        built = [(r, self._entry_prompt(r, lang)) for r in deep]
        return pack_requests(built, self.settings)

    def _pack_messages(
        self, pack: Sequence[tuple[WriteRequest, p.EntryPrompt]], lang: Lang
    ) -> tuple[Message, ...]:
        """What is sent for a pack: one PR's own prompt, or the pack request of several."""
        if len(pack) == 1:
            return pack[0][1].messages
        level = min((r.assessment.level for r, _ in pack), key=_LEVEL_ORDER.index)
        return p.pack_messages(
            pack[0][0].dossier.repo,
            [built for _, built in pack],
            lang,
            self._style_for(level),
            level,
        )

    # -- writing ------------------------------------------------------------------------------

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
        deep, listed = _split(requests)
        done = [0]
        total = len(deep) + (1 if listed else 0)

        def report(outcome: _Outcome | list[_Outcome]) -> None:
            done[0] += 1
            if self.progress:
                self.progress(done[0], total, ledger.spent)

        async with LLMClient(self.settings, http_client=http, sleep=self.sleep) as client:
            # Prompts are built just before their request: one ready per slot while the others
            # wait for the network, none built long before it is needed.
            building = asyncio.Semaphore(2 * client.concurrency)

            async def paragraphs(pack: list[tuple[WriteRequest, p.EntryPrompt]]) -> list[_Outcome]:
                async with building:
                    outcomes = await self._pack(client, pack, lang, ledger)
                for outcome in outcomes:
                    report(outcome)
                return outcomes

            async def titles(chunk: Sequence[WriteRequest]) -> list[_Outcome]:
                outcomes = await self._titles(client, chunk, lang, ledger)
                report(outcomes)
                return outcomes

            # titles first: their request is small, and scheduled first it is not starved by
            # the paragraph requests' budget reservations
            titles_future = asyncio.gather(*(titles(c) for c in _chunks(listed)))
            packs = self._packs(deep, lang)
            written = await asyncio.gather(*(paragraphs(pack) for pack in packs))
            titled = await titles_future
        outcomes = [o for group in titled for o in group] + [o for g in written for o in g]
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

    def prompt_for(self, r: WriteRequest, lang: Lang) -> p.EntryPrompt:
        """The first request of a selected PR's entry (what :meth:`write_batch` sends)."""
        return self._entry_prompt(r, lang)

    def titles_for(self, chunk: Sequence[WriteRequest], lang: Lang) -> tuple[Message, ...]:
        """The titles request of listed PRs (what :meth:`write_batch` sends)."""
        return self._titles_messages(chunk, lang)

    def _entry_prompt(self, r: WriteRequest, lang: Lang) -> p.EntryPrompt:
        return p.entry_prompt(
            r.pr,
            r.dossier,
            r.assessment,
            lang=lang,
            style=self._style_for(r.assessment.level),
            budget_tokens=p.level_budget(self.settings.prompt_room, r.assessment.level),
            readers=p.Readers(area=r.area_name, audience=r.audience),
            neighbours=r.neighbours,
        )

    def _fallback(
        self, r: WriteRequest, lang: Lang, findings: Sequence[str], paragraph: bool | None = None
    ) -> Entry:
        wanted = r.paragraph if paragraph is None else paragraph
        entry = self.template.write(
            r.dossier, r.assessment, lang=lang, paragraph=wanted, area=r.area
        )
        return entry.model_copy(
            update={"fallback": True, "findings": tuple(dict.fromkeys(findings))}
        )

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

    def _fits(self, messages: Sequence[Message]) -> bool:
        """Whether a request fits the server's context (when it is known)."""
        if self.settings.context_tokens is None:
            return True
        tokens = sum(estimate_tokens(m["content"]) for m in messages)
        need = tokens + self.settings.max_output_tokens + OUTPUT_MARGIN_TOKENS
        return need <= self.settings.context_tokens

    async def _pack(
        self,
        client: LLMClient,
        pack: Sequence[tuple[WriteRequest, p.EntryPrompt]],
        lang: Lang,
        ledger: Ledger,
    ) -> list[_Outcome]:
        """The entries of a pack: one request, then each entry verified, fixed, repaired or
        replaced on its own, as if its reply had come alone. An entry the reply lacks (or a
        reply with no JSON object) is asked for in its own request; a server error or a budget
        refusal fails every entry of the pack as it would fail one."""
        # one slot for the first attempt and its repairs: a repair follows at once
        async with client.slot():
            if len(pack) == 1:
                r, built = pack[0]
                return [await self._write_entry(client, r, lang, built, ledger)]
            words = locale(lang).verify
            messages = self._pack_messages(pack, lang)
            refs = ", ".join(r.dossier.ref for r, _ in pack)
            started = time.monotonic()
            try:
                completion = await self._call(
                    client, messages, self.settings.max_output_tokens * len(pack), ledger, refs
                )
            except LLMBudgetError:
                return [
                    self._failed(r, lang, _Tally(), "budget", None, [str(words["budget"])])
                    for r, _ in pack
                ]
            except LLMError as exc:
                if isinstance(exc, LLMResponseError) and exc.status is None:
                    return [await self._write_entry(client, r, lang, b, ledger) for r, b in pack]
                tally = _Tally()
                tally.add_failed(
                    messages, time.monotonic() - started, isinstance(exc, LLMTimeoutError)
                )
                finding = str(words["error"]).format(exc)
                shares = _split_tally(tally, [b.tokens for _, b in pack], [1] * len(pack))
                return [
                    self._failed(r, lang, share, "error", str(exc), [finding])
                    for (r, _), share in zip(pack, shares, strict=True)
                ]
            items = _offered_entries(completion.data)
            answers = [items.get(r.dossier.number) for r, _ in pack]
            sizes = [len(json.dumps(a, ensure_ascii=False)) if a else 0 for a in answers]
            shares = _split_tally(
                _one(completion), [b.tokens - b.system_tokens for _, b in pack], sizes
            )
            outcomes: list[_Outcome] = []
            for (r, built), answer, share in zip(pack, answers, shares, strict=True):
                first = None
                if answer is not None and not completion.reasoning_truncated:
                    first = dataclasses.replace(
                        completion, content=json.dumps(answer, ensure_ascii=False), data=answer
                    )
                outcomes.append(
                    await self._write_entry(client, r, lang, built, ledger, first, share)
                )
            return outcomes

    async def _write_entry(
        self,
        client: LLMClient,
        r: WriteRequest,
        lang: Lang,
        built: p.EntryPrompt,
        ledger: Ledger,
        first: Completion | None = None,
        spent: _Tally | None = None,
    ) -> _Outcome:
        """One entry: its first request (or ``first``, its answer taken from a pack reply whose
        share of the cost is ``spent``), then the checks, fixes and repairs."""
        d = r.dossier
        words = locale(lang).verify
        grounds = grounds_for(r)
        tally = spent or _Tally()
        messages: list[Message] = list(built.messages)
        previous: str | None = None
        findings: list[str] = []
        for attempt in range(1 + self.settings.repairs):
            started = time.monotonic()
            try:
                given = first if attempt == 0 else None
                completion = await self._ask(client, messages, ledger, d.ref, tally, given)
            except LLMBudgetError:
                return self._failed(r, lang, tally, "budget", None, [str(words["budget"])])
            except LLMError as exc:
                timed_out = isinstance(exc, LLMTimeoutError)
                tally.add_failed(messages, time.monotonic() - started, timed_out)
                finding = str(words["error"]).format(exc)
                if isinstance(exc, LLMResponseError) and exc.status is None and attempt == 0:
                    findings.append(finding)  # no usable reply to repair: ask once more
                    continue
                return self._failed(r, lang, tally, "error", str(exc), [*findings, finding])
            if completion.reasoning_truncated:
                findings.append(
                    str(words["reasoning_truncated"]).format(self.settings.max_output_tokens)
                )
                break  # a repair would reason again and run out again
            if previous is not None and same_answer(previous, completion.content):
                findings.append(str(words["repeated"]))
                break
            previous = completion.content
            draft = parse_draft(completion.data, paragraph=True)
            if draft is None:
                problems = [str(words["format"])]
                if completion.truncated:
                    problems.append(str(words["truncated"]).format(self.settings.max_output_tokens))
                findings = problems
                messages = self._repair_messages(d, completion.content, problems, built, lang)
            else:
                found = check_draft(draft, grounds, r.assessment, lang, built.verdict)
                if not found:
                    outcome = "model" if attempt == 0 else "repaired"
                    return self._accept(r, draft, lang, tally, outcome, [])
                fixed = fix_draft(draft, found, r.assessment, lang, built.verdict, r.audience)
                if fixed is not None and not check_draft(
                    fixed.draft, grounds, r.assessment, lang, built.verdict
                ):
                    return self._accept(r, fixed.draft, lang, tally, "fixed", fixed.fixes)
                findings = [x.message(lang) for x in found]
                messages = self._repair_messages(d, completion.content, findings, built, lang)
            if not self._fits(messages):
                findings.append(str(words["no_room"]).format(self.settings.context_tokens))
                break
        entry = self._fallback(r, lang, findings)
        return _Outcome(entry, True, self._usage(r, tally, "fallback", findings))

    async def _ask(
        self,
        client: LLMClient,
        messages: Sequence[Message],
        ledger: Ledger,
        pr: str,
        tally: _Tally,
        given: Completion | None,
    ) -> Completion:
        """``given`` (an answer from a pack reply, already counted), else one request's reply,
        counted in ``tally``."""
        if given is not None:
            return given
        completion = await self._call(client, messages, self.settings.max_output_tokens, ledger, pr)
        tally.add(completion)
        return completion

    def _repair_messages(
        self, d: Dossier, answer: str, problems: Sequence[str], built: p.EntryPrompt, lang: Lang
    ) -> list[Message]:
        return list(p.repair_messages(d, answer, problems, built.verdict, lang))

    def _accept(
        self,
        r: WriteRequest,
        draft: Draft,
        lang: Lang,
        tally: _Tally,
        outcome: str,
        fixes: Sequence[str],
    ) -> _Outcome:
        d = r.dossier
        known = {f.id for f in _facts(d)}
        made_up = unknown_cites(draft.cites, d, known)
        findings = list(fixes)
        if made_up:
            findings.append(str(locale(lang).verify["unknown_cite"]).format(", ".join(made_up)))
        text = f"{draft.title} {draft.paragraph or ''}"
        entry = Entry(
            repo=d.repo,
            number=d.number,
            lang=lang,
            title=draft.title,
            paragraph=draft.paragraph,
            writer=self.name,
            cites=tuple(dict.fromkeys(c for c in draft.cites if c in known)),
            code_refs=code_refs(text, d),
            findings=tuple(findings),
        )
        return _Outcome(entry, True, self._usage(r, tally, outcome, findings))

    def _failed(
        self,
        r: WriteRequest,
        lang: Lang,
        tally: _Tally,
        outcome: str,
        note: str | None,
        findings: Sequence[str],
    ) -> _Outcome:
        entry = self._fallback(r, lang, findings)
        return _Outcome(entry, False, self._usage(r, tally, outcome, findings), note)

    def _usage(
        self, r: WriteRequest, tally: _Tally, outcome: str, findings: Sequence[str]
    ) -> UsageRecord:
        return UsageRecord(
            number=r.dossier.number,
            purpose="paragraph",
            prompt_tokens=tally.prompt,
            completion_tokens=tally.completion,
            calls=tally.attempts,
            requests=tally.requests,
            seconds=round(tally.seconds, 3),
            outcome=outcome,
            estimated=tally.estimated,
            entry_key=r.entry_key,
            findings=tuple(findings),
        )

    # -- the listed PRs: titles in one batched request -------------------------------------------

    def _titles_messages(self, chunk: Sequence[WriteRequest], lang: Lang) -> tuple[Message, ...]:
        return p.titles_messages(chunk[0].dossier.repo, [(r.pr, r.dossier) for r in chunk], lang)

    async def _titles(
        self, client: LLMClient, chunk: Sequence[WriteRequest], lang: Lang, ledger: Ledger
    ) -> list[_Outcome]:
        by_number = {r.dossier.number: r for r in chunk}
        grounds = {n: grounds_for(r) for n, r in by_number.items()}
        messages: list[Message] = list(self._titles_messages(chunk, lang))
        titles: dict[int, str] = {}
        pending = dict(by_number)
        findings: dict[int, list[str]] = {}
        tally = _Tally()
        note: str | None = None
        refused = False
        previous: str | None = None
        async with client.slot():
            for _attempt in range(1 + self.settings.repairs):
                started = time.monotonic()
                max_tokens = _title_tokens(list(pending.values()))
                try:
                    completion = await self._call(client, messages, max_tokens, ledger, "titles")
                except LLMBudgetError:
                    refused = True
                    break
                except LLMError as exc:
                    tally.add_failed(
                        messages, time.monotonic() - started, isinstance(exc, LLMTimeoutError)
                    )
                    note = f"titles: {exc}"
                    break
                tally.add(completion)
                if previous is not None and same_answer(previous, completion.content):
                    break
                previous = completion.content
                drafts = _offered_titles(completion.data)
                findings = self._title_problems(drafts, pending, grounds, titles, lang)
                if not pending:
                    break
                failed = [
                    (p.title_line(pending[n].pr, pending[n].dossier), drafts.get(n, ""), found)
                    for n, found in findings.items()
                ]
                messages = list(p.titles_repair_messages(chunk[0].dossier.repo, failed, lang))
        return self._title_outcomes(chunk, titles, tally, refused, lang, note, findings)

    def _title_problems(
        self,
        drafts: dict[int, str],
        pending: dict[int, WriteRequest],
        grounds: dict[int, Grounds],
        titles: dict[int, str],
        lang: Lang,
    ) -> dict[int, list[str]]:
        """Accept the verified titles into ``titles``; the findings of the others, by PR."""
        problems: dict[int, list[str]] = {}
        for number in list(pending):
            title = drafts.get(number)
            if title is None:
                problems[number] = [str(locale(lang).verify["title_missing"])]
                continue
            found: list[Problem] = verify_title(title, grounds[number], lang)
            if found:
                problems[number] = [x.message(lang) for x in found]
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
        findings: dict[int, list[str]],
    ) -> list[_Outcome]:
        """One outcome per PR; a fallback title is cacheable only when the model was asked and
        answered (not after a network fault or a budget refusal: a re-run should try again)."""
        words = locale(lang).verify
        retry_later = note is not None or refused
        if note:
            outcome = "error"
        elif tally.requests == 0:
            outcome = "budget"
        elif not titles:
            outcome = "failed"
        else:
            outcome = "model" if len(titles) == len(chunk) else "partial"
        usage = UsageRecord(
            number=None,
            purpose="titles",
            prompt_tokens=tally.prompt,
            completion_tokens=tally.completion,
            calls=tally.attempts,
            requests=tally.requests,
            seconds=round(tally.seconds, 3),
            outcome=outcome,
            estimated=tally.estimated,
            accepted=len(titles),
            asked=len(chunk),
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
                why = findings.get(d.number) or [
                    str(words["budget"]) if refused else str(words["error"]).format(note or "")
                ]
                entry = self._fallback(r, lang, why, paragraph=r.paragraph)
            cacheable = d.number in titles or not retry_later
            first = index == 0
            outcomes.append(
                _Outcome(entry, cacheable, usage if first else None, note if first else None)
            )
        return outcomes


_LEVEL_ORDER = list(Level)  # must-read first
PACK_ROOM_FACTOR = 2  # a pack's prompt stays within twice the must-read budget


def pack_requests(
    built: Sequence[tuple[WriteRequest, p.EntryPrompt]], settings: LLMSettings
) -> list[list[tuple[WriteRequest, p.EntryPrompt]]]:
    """Paragraph requests packed, in order, up to ``settings.pack_entries`` a request: close-read
    entries with close-read ones, short ones with short ones (their instructions differ).
    A pack's prompt is the instructions once plus each entry's own block, at most
    :data:`PACK_ROOM_FACTOR` times the prompt room, and with every entry's output allowance
    within the server's context when it is known. Each entry's data is what its own request
    would carry: packing saves the repeated instructions, not evidence."""
    limit = settings.pack_entries
    room = PACK_ROOM_FACTOR * settings.prompt_room
    packs: list[list[tuple[WriteRequest, p.EntryPrompt]]] = []
    open_: dict[bool, tuple[list[tuple[WriteRequest, p.EntryPrompt]], int]] = {}
    for r, b in built:
        deep = p.deep_level(r.assessment.level)
        current = open_.get(deep)
        if current is not None and limit > 1:
            members, tokens = current
            grown = tokens + b.tokens - b.system_tokens
            outputs = settings.max_output_tokens * (len(members) + 1)
            fits_context = (
                settings.context_tokens is None
                or grown + outputs + OUTPUT_MARGIN_TOKENS <= settings.context_tokens
            )
            if len(members) < limit and grown <= room and fits_context:
                members.append((r, b))
                open_[deep] = (members, grown)
                continue
        members = [(r, b)]
        packs.append(members)
        open_[deep] = (members, b.tokens)
    return packs


def _one(c: Completion) -> _Tally:
    tally = _Tally()
    tally.add(c)
    return tally


def _split_tally(tally: _Tally, prompts: Sequence[int], outputs: Sequence[int]) -> list[_Tally]:
    """A pack's cost shared among its entries: prompt tokens by the size of each entry's data,
    completion tokens by the size of its answer; the request, its attempts and time are
    counted once, with the first entry, so a run's totals stay exact."""

    def shares(total: int, weights: Sequence[int]) -> list[int]:
        if not sum(weights):
            weights = [1] * len(weights)  # nothing to weigh by: equal shares
        whole = sum(weights)
        parts = [total * w // whole for w in weights]
        parts[0] += total - sum(parts)
        return parts

    prompt = shares(tally.prompt, prompts)
    completion = shares(tally.completion, outputs)
    out = []
    for index, (pt, ct) in enumerate(zip(prompt, completion, strict=True)):
        first = index == 0
        out.append(
            _Tally(
                prompt=pt,
                completion=ct,
                requests=tally.requests if first else 0,
                attempts=tally.attempts if first else 0,
                estimated=tally.estimated,
                seconds=tally.seconds if first else 0.0,
            )
        )
    return out


def _offered_entries(data: dict[str, Any] | None) -> dict[int, dict[str, Any]]:
    """The items of a pack reply by PR number (an item without a usable number is dropped)."""
    items = data.get("entries") if data else None
    offered: dict[int, dict[str, Any]] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            try:
                number = int(item.get("number", 0))
            except (TypeError, ValueError):
                continue
            offered.setdefault(number, {k: v for k, v in item.items() if k != "number"})
    return offered


def _split(requests: Sequence[WriteRequest]) -> tuple[list[WriteRequest], list[WriteRequest]]:
    deep = [r for r in requests if r.paragraph and r.assessment.level is not Level.LIST_ONLY]
    return deep, [r for r in requests if r not in deep]


def _chunks(listed: Sequence[WriteRequest]) -> list[Sequence[WriteRequest]]:
    return [listed[i : i + TITLES_PER_REQUEST] for i in range(0, len(listed), TITLES_PER_REQUEST)]


def _title_tokens(chunk: Sequence[WriteRequest]) -> int:
    return TITLE_OUTPUT_TOKENS * len(chunk) + 100


def _offered_titles(data: dict[str, Any] | None) -> dict[int, str]:
    items = data.get("titles") if data else None
    offered: dict[int, str] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("title"), str):
            try:
                offered[int(item.get("number", 0))] = item["title"].strip()
            except (TypeError, ValueError):
                continue
    return offered


def _facts(d: Dossier) -> list[Any]:
    return [
        *d.files,
        *d.symbols,
        *d.tests,
        *d.techniques,
        *d.sections,
        *d.claims,
        *d.rationale,
        *d.design,
        *d.reviewers,
        *d.threads,
        *d.remarks,
        *d.issues,
        *d.commits,
        *d.signals,
    ]


__all__ = ["LLMWriter", "Ledger", "PlannedCall", "code_refs", "grounds_for"]

"""Batch LLM runs over days: export the writing requests a digest of each day would send, and
import a batch's results into the entry cache (see :mod:`prdigest.write.llm.batch`).

Export triages each day as a digest would (and stores the triage), finds the entries not cached
yet and lets the LLM writer build its requests against a recording transport. Import digests
each day with the LLM writer answering from the results: entries are verified, repaired or
replaced exactly as in a live run and cached under the same keys, so the ``digest``,
``backfill`` or ``run-all`` that follows makes no model call for them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import httpx

from prdigest.core.errors import ConfigError
from prdigest.pipeline.digest import DigestOptions, pending_requests, run_digest
from prdigest.pipeline.registry import WriterSpec, make_writer
from prdigest.store import Store
from prdigest.write.llm.batch import (
    Recorder,
    Replies,
    capture_transport,
    replay_transport,
)
from prdigest.write.llm.writer import LLMWriter


async def _no_wait(_seconds: float) -> None:
    return None  # a batch result is final: waiting before asking again changes nothing


def _writer(
    spec: WriterSpec, env: Mapping[str, str], transport: Callable[[], httpx.MockTransport]
) -> LLMWriter:
    writer = make_writer(replace(spec, writer="llm"), env)
    if not isinstance(writer, LLMWriter):  # pragma: no cover - the registry's "llm" entry
        raise ConfigError("the batch engine needs the LLM writer", key="--writer")
    # one request per entry: a later round must find an entry's first request again when
    # other entries of its pack are cached by then, and a pack's body would change with them
    return replace(
        writer,
        settings=writer.settings.model_copy(update={"pack_entries": 1}),
        http_client_factory=lambda: httpx.AsyncClient(transport=transport()),
        sleep=_no_wait,
    )


@dataclass(frozen=True)
class Exported:
    lines: list[dict[str, object]]
    entries: int  # entries those requests are for
    days: int


def export_requests(
    store: Store, days: Sequence[DigestOptions], spec: WriterSpec, env: Mapping[str, str]
) -> Exported:
    """The first requests a live LLM run over ``days`` would send, as batch input lines."""
    recorder = Recorder()
    writer = _writer(spec, env, lambda: capture_transport(recorder))
    entries = 0
    for options in days:
        for requests in pending_requests(store, options, writer):
            writer.write_batch(requests, lang=options.lang)
            entries += len(requests)
    return Exported(recorder.lines(), entries, len(days))


@dataclass(frozen=True)
class Imported:
    answered: int  # results in the files
    used: int  # of which a request of this import matched
    outcomes: Mapping[str, int]  # write outcomes (verified, repaired, fallback, error …)
    written: int  # entries written (cached unless their request went unanswered)
    next_round: list[dict[str, object]]  # requests the results did not answer


def import_results(
    store: Store,
    days: Sequence[DigestOptions],
    spec: WriterSpec,
    env: Mapping[str, str],
    replies: Replies,
) -> Imported:
    """Digest ``days`` with the writer answering from ``replies``; entries are cached as in a
    live run (digests are not stored: the command that follows stores them)."""
    writer = _writer(spec, env, lambda: replay_transport(replies))
    outcomes: Counter[str] = Counter()
    written = 0
    for options in days:
        run = run_digest(store, options, writer)
        written += run.written
        outcomes.update(u.outcome for u in run.usage)
    return Imported(
        answered=len(replies.responses),
        used=len(replies.used),
        outcomes=dict(sorted(outcomes.items())),
        written=written,
        next_round=replies.unanswered.lines(),
    )

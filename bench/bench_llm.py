"""LLM writer benchmarks: prompt size, key-fact retention, concurrency, the evidence pack's
share of an expert's code names, and tokens per day against a per-commit tool.

Run: python bench/bench_llm.py   (no network: a fake OpenAI-compatible server on loopback)

1. Prompt tokens per PR (median, p95, max; estimated as the writer counts them) over the fixture
   PRs and a synthetic set (each fixture scaled up: every patch repeated ×8, review threads ×6,
   plus a 400-package lock file), with the share of each dossier's key facts that made it into
   the prompt — for PRs whose whole data fits the budget (target 100%) and for the rest.
2. Wall time of writing 100 PRs against the fake server with 500 ms latency per call at
   concurrency 8, as a ratio to the ideal 100 / 8 × 0.5 s (target ≤ 1.3); the openai client's
   lazy import of its chat resources is done before timing (a start-up cost).

3. The share of the code names of the development references (``eval/reference/vllm-ascend``:
   each entry's backticked names, mapped to its PR by ``DAY.map.json``) that occur in the entry
   prompt prdigest builds for that PR (its level's budget, the day's neighbours) — target ≥ 90 %.
4. Tokens and requests per day for development days of about 10 and 20 PRs and a 100-PR window
   (several days as one), against a per-commit tool: one request per commit (squash merge: one
   per PR) carrying its message and its patch cut to 10,000 characters. Prompt tokens are
   estimated the same way on both sides, and so is output, from the same development
   references: a per-commit summary counts as a median reference paragraph, a prdigest
   paragraph as a median reference entry in the reply's JSON (title, paragraph, cites, PR
   number), a listed PR's title as a median reference title item. (Until entry-v4 the bench
   counted a flat 500 tokens per paragraph against 300 per summary: a paragraph at its length
   limit against a typical summary; that figure is printed beside.) Target ≤ 0.5× the
   per-commit tokens. Under each day: where its prompt tokens go (instructions and frames,
   titles, and each data block of the selected PRs).

3 and 4 need the development records (``PRDIGEST_DEV_RECORDS``, see ``bench/devdays.py``); they
are skipped with a message when the records are absent.

Targets: median ≤ 6,000 and p95 ≤ 10,000 prompt tokens; retention 100% under budget.
"""

from __future__ import annotations

import importlib
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from prdigest.analyze import analyze  # noqa: E402
from prdigest.core.models import Assessment, Dossier, Level  # noqa: E402
from prdigest.core.presets import load_preset  # noqa: E402
from prdigest.core.records import FileChange, PullRequest  # noqa: E402
from prdigest.triage import assess  # noqa: E402
from prdigest.write import WriteRequest  # noqa: E402
from prdigest.write.llm import LLMSettings, LLMWriter  # noqa: E402
from prdigest.write.llm.prompt import entry_prompt  # noqa: E402
from prdigest.write.llm.style import default_reference, format_examples, pick_examples  # noqa: E402
from prdigest.write.llm.writer import PlannedCall  # noqa: E402
from prdigest.write.template import TemplateWriter  # noqa: E402

from fakellm import Call, FakeLLM, Reply, entry_json  # noqa: E402
from llm_support import fixture_prs  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import json  # noqa: E402

import devdays  # noqa: E402
from prdigest.write.evaluate import code_names  # noqa: E402
from prdigest.write.llm.budget import NAMES_LABEL, estimate_tokens  # noqa: E402
from prdigest.write.llm.style import load_reference  # noqa: E402

BUDGET = 8_000
UNLIMITED = 10_000_000
LATENCY_S = 0.5
PRS = 100
CONCURRENCY = 8


def scaled(pr: PullRequest, patches: int = 8, threads: int = 6) -> PullRequest:
    files = [
        f.model_copy(update={"patch": "\n".join([f.patch] * patches) if f.patch else None})
        for f in pr.files or ()
    ]
    lock = "@@ -1,800 +1,800 @@\n" + "\n".join(f"-pkg{i}==1.0\n+pkg{i}==1.1" for i in range(400))
    files.append(FileChange(path="requirements/uv.lock", additions=400, deletions=400, patch=lock))
    return pr.model_copy(
        update={
            "files": tuple(files),
            "review_threads": tuple(pr.review_threads or ()) * threads,
            "number": pr.number + 1_000_000,
        }
    )


def analysed(pr: PullRequest) -> tuple[Dossier, Assessment]:
    dossier = analyze(pr, load_preset(pr.repo), pr_version=pr.version_key)
    return dossier, assess(dossier)


def pct(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def prompt_figures(name: str, prs: list[PullRequest], style: str) -> None:
    tokens: list[int] = []
    fit: list[float] = []
    over: list[float] = []
    for pr in prs:
        dossier, assessment = analysed(pr)
        if assessment.level is Level.LIST_ONLY:
            continue
        built = entry_prompt(pr, dossier, assessment, lang="zh", style=style, budget_tokens=BUDGET)
        whole = entry_prompt(
            pr, dossier, assessment, lang="zh", style=style, budget_tokens=UNLIMITED
        )
        tokens.append(built.tokens)
        kept = len(built.key_ids & built.fact_ids) / len(built.key_ids) if built.key_ids else 1.0
        (fit if whole.tokens <= BUDGET else over).append(kept)
    print(
        f"{name:<10} {len(tokens):>3} PRs  prompt tokens median {statistics.median(tokens):>6,.0f}"
        f"  p95 {pct(tokens, 0.95):>6,}  max {max(tokens):>6,}"
    )
    if fit:
        print(f"{'':<10} key facts kept, {len(fit)} PRs within budget: {statistics.mean(fit):.1%}")
    if over:
        print(
            f"{'':<10} key facts kept, {len(over)} PRs over budget:   {statistics.mean(over):.1%}"
            f" (min {min(over):.1%})"
        )


def hundred_requests() -> tuple[list[WriteRequest], dict[int, str]]:
    base = [p for p in fixture_prs() if analysed(p)[1].level is not Level.LIST_ONLY]
    requests: list[WriteRequest] = []
    replies: dict[int, str] = {}
    template = TemplateWriter()
    for index in range(PRS):
        source = base[index % len(base)]
        pr = source.model_copy(update={"number": 200_000 + index})
        dossier, assessment = analysed(pr)
        entry = template.write(dossier, assessment, lang="zh", paragraph=True)
        replies[pr.number] = entry_json("改动要点：" + pr.title[:12].strip("[]"), entry.paragraph)
        requests.append(WriteRequest(pr, dossier, assessment, True, f"k{index}"))
    return requests, replies


def concurrency_figures() -> None:
    requests, replies = hundred_requests()
    # the openai client loads its chat resources on first use (about 0.3 s, over 1 s on a busy
    # machine): a one-time start-up cost, not one of concurrency, so it is paid before timing
    importlib.import_module("openai.resources.chat")

    def respond(call: Call) -> Reply:
        return Reply(replies[call.pr_number or 0])

    with FakeLLM(respond, latency=LATENCY_S) as fake:
        # one request per entry: this figure is about concurrent requests, not packs
        settings = LLMSettings(
            base_url=fake.url, model="bench", concurrency=CONCURRENCY, pack_entries=1
        )
        writer = LLMWriter(settings)
        started = time.perf_counter()
        result = writer.write_batch(requests, lang="zh")
        wall = time.perf_counter() - started
    ideal = PRS / CONCURRENCY * LATENCY_S
    verified = sum(1 for u in result.usage if u.outcome == "model")
    print(
        f"write {PRS} PRs, {LATENCY_S * 1000:.0f} ms/call, concurrency {CONCURRENCY}: "
        f"{wall:.2f} s vs ideal {ideal:.2f} s → ratio {wall / ideal:.2f} "
        f"({len(fake.calls)} calls, {verified} verified)"
    )


OFFLINE = LLMSettings(base_url="http://127.0.0.1:9/v1", model="bench")
PER_COMMIT_INSTRUCTION = (
    "You summarize one git commit for a daily digest of merged changes. Read the commit message "
    "and the diff below, and write a short summary: what changed, why it matters, and what a "
    "reviewer should look at. Answer in Chinese, in one paragraph."
)
PER_COMMIT_PATCH_CHARS = 10_000
FLAT_OUTPUT = (300, 500, 40)  # the old flat counts: summary, paragraph, title


def measured_output() -> tuple[int, int, int]:
    """Output tokens of a per-commit summary, a prdigest paragraph entry and a title, each the
    median over the development references (see the module docstring)."""
    summaries: list[int] = []
    replies: list[int] = []
    titles: list[int] = []
    for ref in sorted(devdays.REFERENCES.glob("*.txt")):
        mapping = json.loads(ref.with_name(ref.stem + ".map.json").read_text(encoding="utf-8"))
        for number, entry in zip(mapping, load_reference(ref).entries, strict=False):
            item = {"number": number or 0, "title": entry.title}
            titles.append(estimate_tokens(json.dumps(item, ensure_ascii=False)))
            if not entry.paragraph:
                continue
            summaries.append(estimate_tokens(entry.paragraph))
            cites = ["s1", "s2", "f1", "b1"]
            reply = {**item, "paragraph": entry.paragraph, "cites": cites}
            replies.append(estimate_tokens(json.dumps(reply, ensure_ascii=False)))
    return (
        round(statistics.median(summaries)),
        round(statistics.median(replies)),
        round(statistics.median(titles)),
    )


NAME_SHARE_TARGET = 0.90
TOKEN_RATIO_TARGET = 0.5


def reference_names() -> None:
    """Share of the references' code names present in the prompts of their PRs."""
    writer = LLMWriter(OFFLINE)
    found = total = 0
    selected_found = selected_total = 0
    for ref in sorted(devdays.REFERENCES.glob("*.txt")):
        mapping = json.loads(ref.with_name(ref.stem + ".map.json").read_text(encoding="utf-8"))
        day = devdays.day(ref.stem)
        by_number = {r.dossier.number: r for r in day.requests}
        for number, entry in zip(mapping, load_reference(ref).entries, strict=False):
            if number is None or number not in by_number:
                continue
            request = by_number[number]
            text = "\n".join(m["content"] for m in writer.prompt_for(request, "zh").messages)
            names = code_names(f"{entry.title} {entry.paragraph or ''}")
            hits = sum(1 for n in names if n in text)
            found, total = found + hits, total + len(names)
            if request.paragraph:
                selected_found += hits
                selected_total += len(names)
    mark = "✓" if total and found / total >= NAME_SHARE_TARGET else "✗"
    print(
        f"reference code names in the prompt: {found}/{total} = {found / total:.1%} "
        f"(target ≥ {NAME_SHARE_TARGET:.0%} {mark}); of PRs prdigest selects: "
        f"{selected_found}/{selected_total} = {selected_found / max(1, selected_total):.1%}"
    )


def per_commit_tokens(prs: list[PullRequest], output: int) -> int:
    total = 0
    for pr in prs:
        patch = "\n".join(
            f"diff --git a/{f.path} b/{f.path}\n{f.patch or ''}" for f in pr.files or ()
        )[:PER_COMMIT_PATCH_CHARS]
        message = f"{pr.title}\n{pr.body or ''}"
        total += estimate_tokens(PER_COMMIT_INSTRUCTION) + estimate_tokens(message)
        total += estimate_tokens(patch) + output
    return total


def _section(block: str) -> str:
    """The name of a data block of an entry's prompt (``## facts (cite by id)`` → facts)."""
    return block.removeprefix("## ").split("\n", 1)[0].split(" (", 1)[0].split(":", 1)[0]


def breakdown(writer: LLMWriter, day: devdays.Day, calls: list[PlannedCall]) -> str:
    """Where a day's prompt tokens go: instructions and frames (system messages, style
    examples, pack and titles frames), then each data block of the selected PRs, the diff
    split into hunks, the names index and the names-only file list."""
    spent: dict[str, int] = {}

    def add(key: str, tokens: int) -> None:
        spent[key] = spent.get(key, 0) + tokens

    items = 0
    for request in day.selected:
        item = writer.prompt_for(request, "zh").item
        items += estimate_tokens(item)
        head, *blocks = re.split(r"\n\n(?=## )", item)
        add("PR head", estimate_tokens(head))
        for block in blocks:
            name = _section(block)
            if name != "diff":
                add(name, estimate_tokens(block))
                continue
            for line in block.splitlines():
                kind = "diff names index" if line.startswith(NAMES_LABEL[:6]) else "diff hunks"
                kind = "diff files by name" if line.startswith("未展示 diff") else kind
                add(kind, estimate_tokens(line) + 1)
    paragraphs = sum(c.prompt_tokens for c in calls if c.purpose == "paragraph")
    titles = sum(c.prompt_tokens for c in calls if c.purpose == "titles")
    parts = [f"instructions+frames {max(0, paragraphs - items):,}", f"titles {titles:,}"]
    parts += [f"{k} {v:,}" for k, v in sorted(spent.items(), key=lambda x: -x[1])]
    return "        prompt tokens by block: " + " · ".join(parts)


def day_costs() -> None:
    """Tokens and requests of a day against the per-commit tool, at three day sizes."""
    writer = LLMWriter(OFFLINE)
    by_day = devdays.days()
    ten = min(by_day, key=lambda d: (abs(len(by_day[d]) - 10), d))
    twenty = min(by_day, key=lambda d: (abs(len(by_day[d]) - 20), d))
    ordered = sorted(by_day)
    start = ordered.index("2026-07-06")
    span: list[str] = []
    while sum(len(by_day[d]) for d in span) < 100:
        span.append(ordered[start + len(span)])
    windows = [
        devdays.day(ten),
        devdays.day(twenty),
        devdays.digest_requests([pr for d in span for pr in by_day[d]], span[0], span[-1], top=30),
    ]
    measured = measured_output()
    print(
        "output tokens (medians of the references): per-commit summary {}, paragraph {}, "
        "title {}".format(*measured)
    )

    def cost(calls: list[PlannedCall], records: list[PullRequest], out: tuple[int, ...]) -> float:
        ours = sum(
            c.prompt_tokens + (out[1] if c.purpose == "paragraph" else out[2]) * len(c.numbers)
            for c in calls
        )
        return ours / per_commit_tokens(records, out[0])

    for day in windows:
        calls = writer.plan(day.requests, lang="zh")
        records = list(day.records)
        ours = sum(
            c.prompt_tokens
            + (measured[1] if c.purpose == "paragraph" else measured[2]) * len(c.numbers)
            for c in calls
        )
        theirs = per_commit_tokens(records, measured[0])
        ratio = ours / theirs
        mark = "✓" if ratio <= TOKEN_RATIO_TARGET else "✗"
        print(
            f"{len(day.records):>4} PRs ({day.label}): prdigest {len(calls)} requests, "
            f"{ours:,} tokens · per-commit {len(day.records)} requests, {theirs:,} tokens "
            f"→ {ratio:.2f}× (target ≤ {TOKEN_RATIO_TARGET}× {mark}; "
            f"flat 500/300 output: {cost(calls, records, FLAT_OUTPUT):.2f}×)"
        )
        print(breakdown(writer, day, calls))


def main() -> None:
    style = format_examples(pick_examples(default_reference()))
    fixtures = list(fixture_prs())
    print(f"prompt budget {BUDGET:,} estimated tokens per must-read PR (others: a share)")
    prompt_figures("fixtures", fixtures, style)
    prompt_figures("synthetic", [scaled(p) for p in fixtures], style)
    concurrency_figures()
    if devdays.records_path() is None:
        print("skipped: reference names and day costs need PRDIGEST_DEV_RECORDS")
        return
    reference_names()
    day_costs()


if __name__ == "__main__":
    main()

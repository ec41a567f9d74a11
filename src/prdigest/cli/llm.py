"""LLM commands and options: ``llm-check`` and the options of ``--writer llm``.

The settings come from the environment (``PRDIGEST_LLM_*``, see
:mod:`prdigest.pipeline.credentials`), which the CLI hands to the library; the key is never
printed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from prdigest.cli import cli
from prdigest.pipeline.credentials import llm_settings
from prdigest.pipeline.digest import DigestRun

if TYPE_CHECKING:
    from prdigest.write.llm.writer import PlannedCall

F = TypeVar("F", bound=Callable[..., Any])


def writer_options(func: F) -> F:
    """``--writer``, ``--style``, ``--budget-tokens``, ``--max-cost-tokens`` (digest)."""
    options = [
        click.option(
            "--writer",
            default="template",
            show_default=True,
            type=click.Choice(["template", "llm"]),
            help="template: deterministic, offline. llm: PRDIGEST_LLM_* endpoint, verified.",
        ),
        click.option(
            "--style",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Reference digest (text layout) whose entries serve as style examples.",
        ),
        click.option(
            "--budget-tokens",
            type=click.IntRange(1_000, None),
            help="Prompt budget per PR, estimated tokens [default: 8000].",
        ),
        click.option(
            "--max-cost-tokens",
            type=click.IntRange(0, None),
            help="Token bound of the run, checked before each model request (template after).",
        ),
        click.option(
            "--dry-run",
            is_flag=True,
            help="Print the model requests a run would send and their tokens; send none.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def run_summary(run: DigestRun) -> str:
    """One line: requests and attempts, tokens, how the paragraphs and titles came out."""
    paragraphs = run.outcomes("paragraph")
    accepted, asked = run.titles
    estimated = " (some estimated)" if any(u.estimated for u in run.usage) else ""
    parts = [
        f"llm: {run.requests} request(s) in {run.calls} call(s), {run.prompt_tokens:,} prompt "
        f"+ {run.completion_tokens:,} completion tokens{estimated}",
        f"paragraphs: {paragraphs.get('model', 0)} from the model, "
        f"{paragraphs.get('repaired', 0)} repaired, {paragraphs.get('fixed', 0)} fixed by "
        f"prdigest, {sum(paragraphs.get(k, 0) for k in ('fallback', 'error', 'budget'))} "
        "from the template",
    ]
    if asked:
        parts.append(f"titles: {accepted} of {asked} from the model")
    return "; ".join(parts)


def report_run(run: DigestRun) -> None:
    """The cost of a run and its notes, on stderr (stdout may carry the digest)."""
    if not run.usage and not run.notes:
        return
    click.echo(run_summary(run), err=True)
    for note in run.notes:
        click.echo(f"note: {note}", err=True)


LLMProgress = Callable[[int, int, int], None]


@contextmanager
def llm_progress() -> Iterator[LLMProgress]:
    """A bar of the model writes on stderr (terminals only): entries done, tokens, ETA."""
    if not sys.stderr.isatty():
        yield lambda done, total, tokens: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("llm"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[tokens]:,} tokens"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, transient=True, console=Console(stderr=True)) as bar:
        task = bar.add_task("llm", total=None, tokens=0)

        def update(done: int, total: int, tokens: int) -> None:
            bar.update(task, completed=done, total=total, tokens=tokens)

        yield update


def dry_run_text(calls: Sequence[PlannedCall]) -> str:
    """The planned requests, one a line, and their totals."""
    lines = []
    for call in calls:
        what = (
            "titles of "
            + ", ".join(f"#{n}" for n in call.numbers[:6])
            + (" …" if len(call.numbers) > 6 else "")
        )
        if call.purpose == "paragraph":
            what = "paragraph" + ("s" if len(call.numbers) > 1 else "") + " of "
            what += ", ".join(f"#{n}" for n in call.numbers)
        lines.append(
            f"{what}: about {call.prompt_tokens:,} prompt tokens, "
            f"up to {call.max_output_tokens:,} output"
        )
    prompt = sum(c.prompt_tokens for c in calls)
    output = sum(c.max_output_tokens for c in calls)
    lines.append(
        f"dry run: {len(calls)} request(s), about {prompt:,} prompt tokens and at most "
        f"{output:,} output tokens (repairs, when a draft fails, come on top); nothing was sent"
    )
    return "\n".join(lines)


@cli.command("llm-check")
@click.option("--top", default=8, show_default=True, help="Paragraphs of the run to predict.")
def llm_check(top: int) -> None:
    """Send one realistic request to the configured model; measure it and predict a run.

    The request is a real entry prompt of the bundled sample at the configured budget,
    streamed like a run's: the check reports the server's slots, JSON mode, prompt and
    generation speed, the token estimate against the server's count, and how long a digest
    with --top N paragraphs would take.

    \b
    Examples:
      PRDIGEST_LLM_MODEL=deepseek-chat PRDIGEST_LLM_API_KEY=… prdigest llm-check
      PRDIGEST_LLM_BASE_URL=http://127.0.0.1:8080/v1 prdigest llm-check --top 2
    """
    # these load the model client (openai) and the analyzer: only when the command runs
    from prdigest.pipeline.llmcheck import run_prompt_tokens, sample_probe
    from prdigest.write.llm.check import PROBE_OUTPUT_TOKENS, check_endpoint, predict_run

    settings = llm_settings(os.environ)
    probe = sample_probe(settings)
    result = asyncio.run(check_endpoint(settings, probe))
    click.echo(f"model:       {settings.model} at {settings.base_url}")
    click.echo(f"slots:       {result.concurrency} ({result.concurrency_source})")
    click.echo(f"JSON mode:   {'yes' if result.json_mode else 'no (tolerant parsing is used)'}")
    reply = "ok" if result.reply_ok else f"unexpected: {result.reply[:80]!r}"
    if result.reply_ok and result.truncated:
        reply += f" (a JSON object, cut at the probe's {PROBE_OUTPUT_TOKENS} tokens)"
    click.echo(f"reply:       {reply}")
    usage = " (estimated: the server sent no usage)" if result.usage_estimated else ""
    click.echo(
        f"probe:       {result.prompt_tokens:,} prompt + {result.completion_tokens:,} "
        f"completion tokens in {result.latency_s:.1f} s{usage}"
    )
    prompt_speed = f"{result.prompt_tps:,.0f}" if result.prompt_tps else "?"
    gen_speed = f"{result.generation_tps:,.1f}" if result.generation_tps else "?"
    click.echo(f"speed:       prompt {prompt_speed} tokens/s, generation {gen_speed} tokens/s")
    if result.server_tokens:
        error = result.estimated_tokens / result.server_tokens - 1
        click.echo(
            f"tokens:      estimate {result.estimated_tokens:,}, server count "
            f"{result.server_tokens:,} ({error:+.1%})"
        )
    forecast = predict_run(result, top, run_prompt_tokens(settings))
    if forecast is not None:
        click.echo(
            f"a run:       --top {top}: one paragraph request about {forecast.request_s:,.0f} s, "
            f"the run about {forecast.total_s / 60:,.1f} min (before repairs)"
        )

"""LLM commands and options: ``llm-check`` and the options of ``--writer llm``.

The settings come from the environment (``PRDIGEST_LLM_*``, see
:mod:`prdigest.pipeline.credentials`), which the CLI hands to the library; the key is never
printed.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from prdigest.cli import cli
from prdigest.pipeline.credentials import llm_settings
from prdigest.pipeline.digest import DigestRun

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
            help="Stop new LLM writes once the run used this many tokens (template after).",
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


@cli.command("llm-check")
def llm_check() -> None:
    """Send one tiny request to the configured model; report latency and JSON mode.

    
    Examples:
      PRDIGEST_LLM_MODEL=deepseek-chat PRDIGEST_LLM_API_KEY=… prdigest llm-check
    """
    from prdigest.write.llm.check import check_endpoint  # loads the model client (openai)

    settings = llm_settings(os.environ)
    result = asyncio.run(check_endpoint(settings))
    click.echo(f"model:     {settings.model} at {settings.base_url}")
    click.echo(f"latency:   {result.latency_s * 1000:.0f} ms")
    click.echo(f"JSON mode: {'yes' if result.json_mode else 'no (tolerant parsing is used)'}")
    reply = "ok" if result.reply_ok else f"unexpected: {result.reply[:80]!r}"
    click.echo(f"reply:     {reply}")

"""LLM commands and options: ``llm-check``, ``eval``, and the options of ``--writer llm``.

The settings come from the environment (``PRDIGEST_LLM_*``, see
:mod:`prdigest.pipeline.credentials`), which the CLI hands to the library; the key is never
printed.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from prdigest.cli import cli, db_option, emit, opened
from prdigest.pipeline.credentials import llm_settings
from prdigest.pipeline.digest import DigestRun
from prdigest.write.evaluate import evaluate, format_table, load_generated, load_map
from prdigest.write.llm.check import check_endpoint
from prdigest.write.llm.style import load_reference

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


def report_run(run: DigestRun) -> None:
    """The cost of a run and its notes, on stderr (stdout may carry the digest)."""
    if not run.usage and not run.notes:
        return
    click.echo(
        f"llm: {run.calls} call(s), {run.prompt_tokens:,} prompt + "
        f"{run.completion_tokens:,} completion tokens; {run.written} entr(ies) written, "
        f"{run.fallbacks} template fallback(s)",
        err=True,
    )
    for note in run.notes:
        click.echo(f"note: {note}", err=True)


@cli.command("llm-check")
def llm_check() -> None:
    """Send one tiny request to the configured model; report latency and JSON mode."""
    settings = llm_settings(os.environ)
    result = asyncio.run(check_endpoint(settings))
    click.echo(f"model:     {settings.model} at {settings.base_url}")
    click.echo(f"latency:   {result.latency_s * 1000:.0f} ms")
    click.echo(f"JSON mode: {'yes' if result.json_mode else 'no (tolerant parsing is used)'}")
    reply = "ok" if result.reply_ok else f"unexpected: {result.reply[:80]!r}"
    click.echo(f"reply:     {reply}")


@cli.command("eval")
@click.option(
    "--reference",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Reference digest in the text layout.",
)
@click.option(
    "--map",
    "map_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON: PR numbers in reference-entry order, or {title: number}.",
)
@click.option(
    "--generated",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The --format json output of 'prdigest digest'.",
)
@click.option(
    "--format", "fmt", default="table", type=click.Choice(["table", "json"]), show_default=True
)
@click.option(
    "--json-out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON."
)
@click.option("--repo", help="With --db: read participants of the mapped PRs from the store.")
@db_option
def eval_(
    reference: Path,
    map_path: Path,
    generated: Path,
    fmt: str,
    json_out: Path | None,
    repo: str | None,
    db: Path | None,
) -> None:
    """Compare generated entries with a human-written reference digest."""
    ref = load_reference(reference)
    mapping = load_map(map_path)
    gen = load_generated(generated)
    participants = _participants(db, repo or ref.repo, mapping) if db else None
    report = evaluate(ref, mapping, gen, participants)
    payload = json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n"
    if json_out:
        emit(payload.encode("utf-8"), json_out)
    click.echo(payload if fmt == "json" else format_table(report), nl=fmt != "json")


def _participants(db: Path, repo: str, mapping: Any) -> dict[int, set[str]]:
    numbers = [n for n in (mapping.values() if isinstance(mapping, dict) else mapping) if n]
    found: dict[int, set[str]] = {}
    with opened(db) as store:
        for number in numbers:
            pr = store.records.get(repo, int(number))
            logins = {pr.author} | {r.author for r in pr.reviews or ()}
            logins |= {c.author for t in pr.review_threads or () for c in t.comments}
            logins |= {c.author for c in pr.comments or ()}
            found[int(number)] = {x for x in logins if x}
    return found

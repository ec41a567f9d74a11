"""LLM commands and options: ``llm-check``, ``eval``, and the settings of ``--writer llm``.

The environment is read here and nowhere else: ``PRDIGEST_LLM_BASE_URL``, ``PRDIGEST_LLM_MODEL``
and ``PRDIGEST_LLM_API_KEY``, each falling back to ``OPENAI_BASE_URL``, ``OPENAI_MODEL`` and
``OPENAI_API_KEY``; optional ``PRDIGEST_LLM_TIMEOUT`` (seconds), ``PRDIGEST_LLM_CONCURRENCY``
and ``PRDIGEST_LLM_JSON_MODE`` (auto/on/off). The key goes into a ``SecretStr`` and is never
printed.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import SecretStr, ValidationError

from prdigest.cli import cli, db_option, emit, opened
from prdigest.core.errors import ConfigError
from prdigest.pipeline.digest import DigestRun
from prdigest.write.evaluate import evaluate, format_table, load_generated, load_map
from prdigest.write.llm import LLMSettings, LLMWriter
from prdigest.write.llm.check import check_endpoint
from prdigest.write.llm.style import load_reference

OPENAI_URL = "https://api.openai.com/v1"
F = TypeVar("F", bound=Callable[..., Any])


def _env(environ: Mapping[str, str], *names: str) -> str | None:
    return next((environ[n] for n in names if environ.get(n)), None)


def llm_settings(environ: Mapping[str, str] | None = None, **overrides: Any) -> LLMSettings:
    """Settings from the environment (see the module docstring) and command-line overrides."""
    env = os.environ if environ is None else environ
    model = overrides.pop("model", None) or _env(env, "PRDIGEST_LLM_MODEL", "OPENAI_MODEL")
    if not model:
        raise ConfigError("no model: set PRDIGEST_LLM_MODEL (or OPENAI_MODEL)", key="llm.model")
    values: dict[str, Any] = {
        "base_url": _env(env, "PRDIGEST_LLM_BASE_URL", "OPENAI_BASE_URL") or OPENAI_URL,
        "model": model,
        "api_key": SecretStr(_env(env, "PRDIGEST_LLM_API_KEY", "OPENAI_API_KEY") or ""),
    }
    for name, key in (
        ("PRDIGEST_LLM_TIMEOUT", "timeout_s"),
        ("PRDIGEST_LLM_CONCURRENCY", "concurrency"),
        ("PRDIGEST_LLM_JSON_MODE", "json_mode"),
    ):
        if env.get(name):
            values[key] = env[name]
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return LLMSettings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(first["msg"], key=f"llm.{field}") from None


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


def make_llm_writer(
    style: Path | None, budget_tokens: int | None, max_cost_tokens: int | None
) -> LLMWriter:
    settings = llm_settings(budget_tokens=budget_tokens, max_cost_tokens=max_cost_tokens)
    reference = load_reference(style) if style else None
    return LLMWriter(settings, style=reference)


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
    settings = llm_settings()
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
            pr = store.get_pr(repo, int(number))
            logins = {pr.author} | {r.author for r in pr.reviews or ()}
            logins |= {c.author for t in pr.review_threads or () for c in t.comments}
            logins |= {c.author for c in pr.comments or ()}
            found[int(number)] = {x for x in logins if x}
    return found

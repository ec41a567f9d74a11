"""``llm batch export`` and ``llm batch import``: the LLM writer's requests through a batch
endpoint (OpenAI's Batch API, or vLLM's ``run_batch`` on a cluster) instead of a live server."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import click

from prdigest.cli import DbTarget, as_lang, checked_repo, cli, db_option, info, opened
from prdigest.core.locale import DEFAULT_LANG, available
from prdigest.core.window import DEFAULT_TZ, day_window, local_day
from prdigest.pipeline.digest import DigestOptions
from prdigest.pipeline.registry import WriterSpec


def _days(
    repo: str, day: str | None, since: str | None, until: str | None, tz: str, top: int, lang: str
) -> list[DigestOptions]:
    """One digest per day: ``--date D``, or every day from ``--since`` up to ``--until``."""
    if day and (since or until):
        raise click.UsageError("give either --date or --since/--until, not both")
    if day:
        labels = [local_day(day, tz).isoformat()]
    elif since and until:
        first, end = local_day(since, tz), local_day(until, tz)
        if end <= first:
            raise click.UsageError("--until must be a later day than --since")
        labels = [(first + timedelta(days=n)).isoformat() for n in range((end - first).days)]
    else:
        raise click.UsageError("give --date D, or both --since and --until")
    return [DigestOptions(repo, day_window(label, tz), top, as_lang(lang)) for label in labels]


def _scope(func: click.decorators.FC) -> click.decorators.FC:
    options = [
        click.option(
            "-r", "--repo", required=True, callback=checked_repo, help="Repository as owner/name."
        ),
        click.option("-d", "--date", "day", help="One day, YYYY-MM-DD."),
        click.option("--since", help="First day of a range (each day is one digest)."),
        click.option("--until", help="Day after the last one of the range (exclusive)."),
        click.option("--tz", default=DEFAULT_TZ, show_default=True, help="Time zone of the days."),
        click.option(
            "--top",
            default=8,
            show_default=True,
            type=click.IntRange(0, 200),
            help="How many PRs of a day get a paragraph.",
        ),
        click.option(
            "--lang",
            default=DEFAULT_LANG,
            show_default=True,
            type=click.Choice(available()),
            help="Language of the entries.",
        ),
        click.option(
            "--style",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Reference digest for style examples (as for --writer llm).",
        ),
        click.option(
            "--budget-tokens",
            type=click.IntRange(1_000, None),
            help="Prompt budget per PR (as for --writer llm).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@cli.group("llm")
def llm_group() -> None:
    """The LLM writer's batch engine (``llm batch``).

    \b
    Examples:
      prdigest llm batch export -r vllm-project/vllm -d 2026-06-10 -o batch.jsonl
    """


@llm_group.group("batch")
def batch_group() -> None:
    """Write entries through a batch endpoint: export the requests, run them, import the
    results (each reply verified exactly as a live one).

    A vLLM cluster runs the file with `python -m vllm.entrypoints.openai.run_batch -i
    batch.jsonl -o results.jsonl --model M`; OpenAI's Batch API takes the same file.

    \b
    Examples:
      prdigest llm batch export -r acme/widgets --since 2026-01-01 --until 2026-07-01 -o b.jsonl
      prdigest llm batch import r.jsonl -r acme/widgets -d 2026-06-10 --next-round repairs.jsonl
    """


@batch_group.command("export")
@_scope
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The batch input file to write (JSON Lines).",
)
@db_option
def export_command(
    repo: str,
    day: str | None,
    since: str | None,
    until: str | None,
    tz: str,
    top: int,
    lang: str,
    style: Path | None,
    budget_tokens: int | None,
    out: Path,
    db: DbTarget | None,
) -> None:
    """Write the requests a --writer llm digest of each day would send, as a batch file.

    Days are triaged (and the triage stored) as a digest would; entries already cached are
    left out. The model and the prompt budget come from PRDIGEST_LLM_* as for --writer llm.

    \b
    Examples:
      prdigest llm batch export -r vllm-project/vllm -d 2026-06-10 -o batch.jsonl
    """
    from prdigest.pipeline.llm_batch import export_requests
    from prdigest.write.llm.batch import write_lines

    days = _days(repo, day, since, until, tz, top, lang)
    spec = WriterSpec(writer="llm", style=style, budget_tokens=budget_tokens)
    with opened(db) as store:
        exported = export_requests(store, days, spec, os.environ)
    count = write_lines(out, exported.lines)
    click.echo(
        f"exported {count} request(s) for {exported.entries} entr(ies) of {exported.days} "
        f"day(s) to {out}"
    )


@batch_group.command("import")
@click.argument(
    "results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@_scope
@click.option(
    "--next-round",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the requests the results do not answer (repairs) to this batch file.",
)
@db_option
def import_command(
    results: tuple[Path, ...],
    repo: str,
    day: str | None,
    since: str | None,
    until: str | None,
    tz: str,
    top: int,
    lang: str,
    style: Path | None,
    budget_tokens: int | None,
    next_round: Path | None,
    db: DbTarget | None,
) -> None:
    """Verify a batch's results like live replies and cache the entries they make.

    Give every round's results so far (the first round and its repairs). A repair the writer
    asks for goes to --next-round; that PR's entry is cached once its round is imported.

    \b
    Examples:
      prdigest llm batch import r.jsonl -r acme/widgets -d 2026-06-10 --next-round repairs.jsonl
    """
    from prdigest.pipeline.llm_batch import import_results
    from prdigest.write.llm.batch import read_results, write_lines

    days = _days(repo, day, since, until, tz, top, lang)
    spec = WriterSpec(writer="llm", style=style, budget_tokens=budget_tokens)
    replies = read_results(results)
    with opened(db) as store:
        imported = import_results(store, days, spec, os.environ, replies)
    outcomes = ", ".join(f"{n} {name}" for name, n in imported.outcomes.items()) or "none"
    click.echo(
        f"imported {imported.used} of {imported.answered} result(s) for {len(days)} day(s): "
        f"{imported.written} entr(ies) written; outcomes: {outcomes}"
    )
    pending = imported.next_round
    if pending and next_round is not None:
        write_lines(next_round, pending)
        info(f"{len(pending)} request(s) not answered yet written to {next_round}: run them")
    elif pending:
        info(f"{len(pending)} request(s) not answered yet (give --next-round FILE to keep them)")
    unused = imported.answered - imported.used
    if unused:
        info(f"{unused} result(s) matched no request: the store or the settings changed?")

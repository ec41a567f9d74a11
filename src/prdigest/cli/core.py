"""Core commands: demo, import, export, schema, digest, explain."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

import click

from prdigest.cli import (
    DbTarget,
    DbType,
    F,
    as_lang,
    checked_repo,
    cli,
    db_option,
    digest_options,
    emit,
    format_option,
    info,
    make_window,
    opened,
    progress_bar,
    window_options,
)
from prdigest.cli.llm import LLMProgress, dry_run_text, llm_progress, report_run, writer_options
from prdigest.core.errors import ImportLineError, NotFoundError
from prdigest.core.names import check_repo
from prdigest.core.records import record_json_schema
from prdigest.core.window import day_window
from prdigest.pipeline.digest import (
    DigestOptions,
    build_digest,
    empty_window_note,
    explain,
    pending_writes,
    require_repo,
    run_digest,
)
from prdigest.pipeline.registry import WriterSpec, make_writer
from prdigest.render import render
from prdigest.render.explain import explain_text
from prdigest.sources.base import SyncReport, sync
from prdigest.sources.jsonl import JsonlSource, write_records
from prdigest.store import Store
from prdigest.write import Writer
from prdigest.write.template import TemplateWriter

SAMPLE_FILE = "vllm-sample.jsonl"
SAMPLE_REPO = "vllm-project/vllm"
SAMPLE_DATE = "2026-06-10"


@cli.command()
@click.option(
    "-d",
    "--date",
    "day",
    default=SAMPLE_DATE,
    show_default=True,
    help="Sample day to digest (2026-06-10 or 2026-06-11).",
)
@click.option(
    "--db",
    "db",
    type=DbType(),
    default=None,
    help="Keep the sample store in this file or database (default: a temporary one).",
)
@digest_options
def demo(
    day: str,
    db: DbTarget | None,
    top: int,
    fmt: str,
    lang: str,
    out: Path | None,
    preset_path: Path | None,
) -> None:
    """Digest the bundled sample records (no token, no network).

    
    Examples:
      prdigest demo
      prdigest demo -d 2026-06-11 -f md
      prdigest demo --lang en --top 3
    """
    with (
        tempfile.TemporaryDirectory(prefix="prdigest-demo-") as tmp,
        opened(db or Path(tmp) / "demo.sqlite3") as store,
    ):
        sample = resources.files("prdigest.samples").joinpath(SAMPLE_FILE)
        with resources.as_file(sample) as path:
            _import_file(store, path)
        options = DigestOptions(
            repo=SAMPLE_REPO,
            window=day_window(day),
            top=top,
            lang=as_lang(lang),
            preset_path=preset_path,
        )
        emit(render(build_digest(store, options, TemplateWriter()), fmt), out)


def _import_file(store: Store, path: Path) -> SyncReport:
    """Store the good records of a JSONL file; the report lists the bad lines."""
    return sync(JsonlSource(path), store.records, None)


@cli.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@db_option
def import_(file: Path, db: DbTarget | None) -> None:
    """Import PR records from a prdigest.pr/v1 JSONL file (bad lines are reported, not fatal).

    
    Examples:
      prdigest import prs.jsonl
      prdigest import prs.jsonl --db team.sqlite3
    """
    with opened(db) as store:
        report = _import_file(store, file)
    for problem in report.problems:
        click.echo(f"Error: {problem}", err=True)
    result = report.stored
    info(
        f"imported {file}: {result.new} new, {result.updated} updated, "
        f"{result.unchanged} unchanged, {len(report.problems)} bad line(s)",
        err=False,
    )
    if report.problems:
        sys.exit(ImportLineError.exit_code)


@cli.command()
@click.option("-r", "--repo", callback=checked_repo, help="Only this repository (owner/name).")
@click.option(
    "-o",
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of stdout.",
)
@db_option
def export(repo: str | None, out: Path | None, db: DbTarget | None) -> None:
    """Export stored PR records as prdigest.pr/v1 JSONL.

    
    Examples:
      prdigest export -o all.jsonl
      prdigest export -r vllm-project/vllm | head -1
    """
    with opened(db) as store:
        if repo is not None and repo not in store.records.repos():
            stored = ", ".join(store.records.repos()) or "none"
            raise NotFoundError(
                f"no records of {repo} in the store {store.location} (it has: {stored})"
            )
        if out is None:
            count = write_records(store.records.stream(repo), sys.stdout)
        else:
            with out.open("w", encoding="utf-8") as handle:
                count = write_records(store.records.stream(repo), handle)
    info(f"exported {count} record(s)")


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the PR record format prdigest.pr/v1.

    
    Examples:
      prdigest schema > prdigest.pr.v1.schema.json
    """
    click.echo(json.dumps(record_json_schema(), ensure_ascii=False, indent=2))


def no_store_option(func: F) -> F:
    return click.option(
        "--no-store",
        is_flag=True,
        help="Do not keep the digest in the store (site and publish will not see it).",
    )(func)


@cli.command()
@window_options
@digest_options
@writer_options
@no_store_option
@db_option
def digest(
    repo: str,
    day: str | None,
    since: str | None,
    until: str | None,
    tz: str,
    top: int,
    fmt: str,
    lang: str,
    out: Path | None,
    preset_path: Path | None,
    writer: str,
    style: Path | None,
    budget_tokens: int | None,
    max_cost_tokens: int | None,
    no_store: bool,
    dry_run: bool,
    db: DbTarget | None,
) -> None:
    """Digest the stored PRs merged in a window, and store the digest for site and publish.

    
    Examples:
      prdigest digest -r vllm-project/vllm -d yesterday
      prdigest digest -r vllm-project/vllm -d 2026-06-10 -f md -o 2026-06-10.md
      prdigest digest -r vllm-project/vllm --since 2026-06-08 --until 2026-06-15 --top 12
      prdigest digest -r vllm-project/vllm -d today --writer llm --no-store
    """
    window = make_window(day, since, until, tz)
    options = DigestOptions(
        repo=repo, window=window, top=top, lang=as_lang(lang), preset_path=preset_path
    )
    choice = WriterChoice(writer, style, budget_tokens, max_cost_tokens)
    if dry_run:
        dry_run_report(options, choice, db)
        return
    write_digest(options, choice, Output(db, fmt, out, store=not no_store), synced=False)


@dataclass(frozen=True)
class WriterChoice:
    """The ``--writer`` options of a command that writes a digest."""

    writer: str = "template"
    style: Path | None = None
    budget_tokens: int | None = None
    max_cost_tokens: int | None = None

    def make(self, progress: LLMProgress | None = None) -> Writer:
        spec = WriterSpec(
            writer=self.writer,
            style=self.style,
            budget_tokens=self.budget_tokens,
            max_cost_tokens=self.max_cost_tokens,
        )
        made = make_writer(spec, os.environ)
        if progress is not None and hasattr(made, "progress"):
            made = replace(made, progress=progress)  # type: ignore[type-var]
        return made


@dataclass(frozen=True)
class Output:
    """Where a digest goes: the store it is read from (and kept in), the format, a file."""

    db: DbTarget | None
    fmt: str
    out: Path | None
    store: bool = True  # keep the digest in the store (``--no-store``: do not)


def write_digest(
    options: DigestOptions, choice: WriterChoice, output: Output, *, synced: bool
) -> None:
    """Build the digest of a window from the store, print or write it, keep it in the store
    (so ``site`` and ``publish`` see it) and report model cost. ``synced``: the window was just
    synced, so an empty one is true; otherwise an unknown repository is an error (exit 5) and
    an empty window gets a note."""
    with llm_progress() as entries:
        writer = choice.make(entries)  # a writer's configuration error comes before the store
        with (
            opened(output.db) as store,
            store.lock(options.repo),
            progress_bar("digest") as progress,
        ):
            if not synced:
                require_repo(store, options.repo, options.window)
            result = run_digest(store, options, writer, progress)
            note = None if synced else empty_window_note(store, result.digest)
            kept = store.digests.put(result.digest) if output.store else None
            location = store.location
    emit(render(result.digest, output.fmt), output.out)
    report_run(result)
    if note:
        info(f"note: {note}")
    if kept is not None:
        state = "stored" if kept.changed else "unchanged"
        info(f"digest {state}: {kept.repo} {kept.label} ({kept.lang}) in {location}")


def dry_run_report(options: DigestOptions, choice: WriterChoice, db: DbTarget | None) -> None:
    """``--dry-run``: the requests the writer would send and their estimated tokens."""
    writer = choice.make()
    plan_calls = getattr(writer, "plan", None)
    with opened(db) as store:
        requests = pending_writes(store, options, writer)
    if plan_calls is None:
        click.echo(f"dry run: {len(requests)} entr(ies) to write, no model calls (template)")
        return
    calls = plan_calls(requests, lang=options.lang)
    click.echo(dry_run_text(calls))


@cli.command("explain")
@click.argument("ref", metavar="OWNER/NAME#N")
@format_option(["text", "json"], "Output format (json: the dossier and assessment as data)")
@click.option(
    "--preset",
    "preset_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Repository preset TOML (default: bundled for the repo, else generic).",
)
@db_option
def explain_(ref: str, fmt: str, preset_path: Path | None, db: DbTarget | None) -> None:
    """Show the dossier, level and reasons of one stored PR.

    
    Examples:
      prdigest explain vllm-project/vllm#51794
      prdigest explain vllm-project/vllm#51794 -f json
    """
    repo, _, number = ref.partition("#")
    if not repo or not number.isascii() or not number.isdigit():
        raise click.UsageError(f"expected OWNER/NAME#N, got {ref!r}")
    if len(number) > 18:  # beyond any PR number, and beyond what a 64-bit column holds
        raise NotFoundError(f"{ref} is not in the store (no PR has such a number)")
    check_repo(repo, key="OWNER/NAME#N")
    with opened(db) as store:
        analyzed = explain(store, repo, int(number), preset_path)
    if fmt == "json":
        payload = {
            "dossier": analyzed.dossier.model_dump(mode="json"),
            "assessment": analyzed.assessment.model_dump(mode="json"),
            "entries": [e.model_dump(mode="json") for e in analyzed.entries],
        }
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        click.echo(
            explain_text(analyzed.dossier, analyzed.assessment, analyzed.areas, analyzed.entries)
        )

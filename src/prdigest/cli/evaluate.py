"""``prdigest eval``: how prdigest agrees with an expert.

* ``eval entries`` (also plain ``eval --reference …``) compares generated entries with a
  human-written reference digest;
* ``eval triage`` compares triage's verdicts and daily picks with labelled PRs, with the
  shipped model or (``--cv``) cross-validated over days.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from prdigest.cli import DbTarget, cli, db_option, emit, opened
from prdigest.pipeline.evaluate import cross_validate
from prdigest.pipeline.evaluate import evaluate as evaluate_triage
from prdigest.triage.evaluate import format_report
from prdigest.triage.features import NAMES
from prdigest.triage.fit import DEFAULT_C
from prdigest.triage.labels import load_labels
from prdigest.triage.model import load_model
from prdigest.write.evaluate import evaluate, format_table, load_generated, load_map
from prdigest.write.llm.style import load_reference


class DefaultGroup(click.Group):
    """A group that runs ``default`` when called with options only (``eval --reference …``)."""

    default = "entries"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0].startswith("-") and args[0] not in ("-h", "--help"):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


# both eval commands print a report for reading or for scripts
report_format_option = click.option(
    "-f",
    "--format",
    "fmt",
    default="table",
    type=click.Choice(["table", "json"]),
    show_default=True,
    help="table: for reading; json: for scripts.",
)


@cli.group("eval", cls=DefaultGroup)
def eval_group() -> None:
    """Measure prdigest against an expert: entries against a reference digest, triage
    against labels.

    
    Examples:
      prdigest eval triage --labels eval/labels
      prdigest eval entries --reference ref.txt --map map.json --generated gen.json
    """


@eval_group.command("entries")
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
@report_format_option
@click.option(
    "--json-out", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON."
)
@click.option(
    "--repo",
    help="With --db: read the mapped PRs from the store (participants, false-claim candidates).",
)
@db_option
def eval_entries(
    reference: Path,
    map_path: Path,
    generated: Path,
    fmt: str,
    json_out: Path | None,
    repo: str | None,
    db: DbTarget | None,
) -> None:
    """Compare generated entries with a human-written reference digest (the default).

    
    Examples:
      prdigest digest -r vllm-project/vllm -d 2026-06-10 -f json -o gen.json
      prdigest eval entries --reference ref.txt --map map.json --generated gen.json
    """
    ref = load_reference(reference)
    mapping = load_map(map_path)
    gen = load_generated(generated)
    participants = _participants(db, repo or ref.repo, mapping) if db else None
    grounds = _grounds(db, repo or ref.repo, mapping) if db else None
    report = evaluate(ref, mapping, gen, participants, grounds)
    payload = json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n"
    if json_out:
        emit(payload.encode("utf-8"), json_out)
    click.echo(payload if fmt == "json" else format_table(report), nl=fmt != "json")


def _grounds(db: DbTarget, repo: str, mapping: Any) -> dict[int, Any]:
    """The verifier's view of each mapped PR, for the false-claim candidates."""
    from prdigest.pipeline.digest import explain
    from prdigest.write.llm.verify import Grounds

    numbers = [n for n in (mapping.values() if isinstance(mapping, dict) else mapping) if n]
    found: dict[int, Any] = {}
    with opened(db) as store:
        for number in numbers:
            item = explain(store, repo, int(number))
            found[int(number)] = Grounds(item.pr, item.dossier)
    return found


def _participants(db: DbTarget, repo: str, mapping: Any) -> dict[int, set[str]]:
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


@eval_group.command("triage")
@click.option(
    "--labels",
    "label_paths",
    required=True,
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Label file (JSONL) or a directory of them; may be given more than once.",
)
@click.option("--cv", is_flag=True, help="Cross-validate over days (needs the fit extra).")
@click.option(
    "--model",
    "model_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A triage model file (default: the bundled one).",
)
@click.option(
    "--preset",
    "preset_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Preset for every labelled repository (default: bundled for each, else generic).",
)
@report_format_option
@db_option
def eval_triage(
    label_paths: tuple[Path, ...],
    cv: bool,
    model_path: Path | None,
    preset_path: Path | None,
    fmt: str,
    db: DbTarget | None,
) -> None:
    """Agreement of triage with labelled PRs: levels, must-read recall, daily picks.

    
    Examples:
      prdigest import /work/data/ascend-dev.jsonl --db dev.sqlite3
      prdigest eval triage --labels eval/labels --db dev.sqlite3
      prdigest eval triage --labels eval/labels --db dev.sqlite3 --cv -f json
    """
    labels = load_labels(list(label_paths))
    with opened(db) as store:
        if cv:
            result = cross_validate(
                store, labels, names=NAMES, c=DEFAULT_C, preset_path=preset_path
            )
            title = "triage, cross-validated over days"
        else:
            model = load_model(model_path)
            result = evaluate_triage(store, labels, model=model, preset_path=preset_path)
            title = f"triage model {model.key}"
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        click.echo(format_report(result, title))

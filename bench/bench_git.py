"""Benchmark: ingest + analyze a clone's whole first-parent history with the git source.

    python bench/bench_git.py PATH [--repo owner/name] [--branch B] [--pairs 3] [--limit N]
                                   [--store DB] [--skip-analyze] [--full] [--top 8]

The floor is ``git log --first-parent -p --numstat`` over the same history, read to the end and
thrown away. prdigest's run computes, in a fresh interpreter, what a user's ``sync --git`` and
daily digests of that history compute before writing: every PR read with the git source,
analyzed at triage depth and assessed (and stored, with ``--store``); then, per day of merges
(UTC; a day whose merges the first-parent order splits counts as two, which only adds picks),
the PRs the digest picks for a paragraph (``--top`` of them at most) enriched to full dossiers
(the salience ranking added), as the digest's write phase does. Each share is printed;
``--full`` analyzes every PR in full instead (the figure before the depth split). Writing
(templates or a model) and re-reading stored dossiers are not measured. With ``--limit N``
only the first N PRs are processed but the floor still reads the whole history: compare the
shares' seconds, not the ratio.

Floor and prdigest alternate (floor, prdigest, floor, prdigest …) ``--pairs`` times, and each
pair gives one ratio, so a busy machine slows both sides of a pair alike. The figure is the
median of the pairs' ratios of **CPU seconds** (user + system, of the process and every child
it waited for: git included); wall-time ratios are printed beside them. Target (issue 15):
≤ 2.0. Peak RSS of the Python process is printed too (target: ≤ 400 MB). Without PATH it
prints why it skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, date
from pathlib import Path
from typing import Any

TARGET_RATIO = 2.0
TARGET_RSS_MB = 400


@dataclass(frozen=True)
class Measured:
    cpu: float  # user + system seconds of the process and its waited-for children
    wall: float
    rss_mb: float  # peak RSS of the process or of the largest child it waited for


def _run(argv: list[str], *, stdout: int | None = None) -> tuple[Measured, bytes]:
    """Run a command to the end; its CPU seconds come from ``wait4``."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE if stdout is None else stdout)
    out = b""
    if process.stdout is not None:
        while chunk := process.stdout.read(1 << 20):
            if len(out) < 1 << 16:  # the worker's one JSON line; the floor's bytes are dropped
                out += chunk
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench_git: {argv[:3]} failed")
    cpu = usage.ru_utime + usage.ru_stime
    return Measured(cpu, wall, usage.ru_maxrss / 1024), out


def floor(path: Path, ref: str) -> Measured:
    argv = ["git", "-C", str(path), "log", "--first-parent", "-p", "--numstat", ref, "--"]
    return _run(argv)[0]


@dataclass
class Ingest:
    prs: int = 0
    skipped: int = 0
    lines: int = 0  # patch lines kept in the records
    analyze: float = 0.0  # CPU seconds inside analyze() of every PR (triage depth unless --full)
    assess: float = 0.0  # CPU seconds of triage's assess()
    picked: int = 0  # PRs a day's digest picks for a paragraph
    days: int = 0
    full: float = 0.0  # CPU seconds of enriching the picked PRs' dossiers to full
    store: float = 0.0
    rss_mb: float = 0.0  # peak RSS of the Python process alone (its git child not included)


class _Analysis:
    """Triage-depth analysis and assessment of each PR; a day's picks analyzed in full when the
    day ends, as the digest's write phase does (``--full``: every PR in full, no second pass)."""

    def __init__(self, args: argparse.Namespace, result: Ingest) -> None:
        from prdigest.core.presets import load_preset

        self.args, self.result = args, result
        self.preset = load_preset(args.repo, None)
        self.day: list[tuple[Any, Any, Any]] = []  # (PullRequest, Dossier, Assessment) of a day

    def add(self, pr: Any) -> None:
        from prdigest.analyze import analyze
        from prdigest.triage import assess

        if self.day and _utc_day(self.day[-1][0]) != _utc_day(pr):
            self.end_day()
        clock, depth = time.process_time, "full" if self.args.full else "triage"
        began = clock()
        dossier = analyze(pr, self.preset, pr_version=pr.version_key, depth=depth)
        self.result.analyze += clock() - began
        began = clock()
        self.day.append((pr, dossier, assess(dossier, bots=self.preset.bots)))
        self.result.assess += clock() - began

    def end_day(self) -> None:
        from prdigest.analyze import enrich
        from prdigest.triage import select

        if self.args.full or not self.day:
            self.day.clear()
            return
        analyzed = {pr.number: (pr, dossier) for pr, dossier, _ in self.day}
        picks = select([a for _, _, a in self.day], self.args.top)
        began = time.process_time()
        for pick in picks:
            pr, dossier = analyzed[pick.number]
            enrich(dossier, pr)
        self.result.full += time.process_time() - began
        self.result.picked += len(picks)
        self.result.days += 1
        self.day.clear()


def _utc_day(pr: Any) -> date:
    day: date = pr.merged_at.astimezone(UTC).date()
    return day


def ingest(args: argparse.Namespace) -> Ingest:
    """Read every PR with the git source, analyze and assess it (and store it), and analyze a
    day's picks in full: the worker's job."""
    from prdigest.core.records import PullRequest
    from prdigest.sources.git import read_prs
    from prdigest.store import open_store

    store = open_store(args.store) if args.store else None
    result = Ingest()
    analysis = _Analysis(args, result)
    batch: list[PullRequest] = []
    clock = time.process_time
    for item in read_prs(args.path, args.repo, branch=args.branch):
        if not isinstance(item, PullRequest):
            result.skipped += 1
            continue
        result.prs += 1
        result.lines += sum(f.patch.count("\n") + 1 for f in item.files or () if f.patch)
        if not args.skip_analyze:
            analysis.add(item)
        if store is not None:
            batch.append(item)
            if len(batch) >= 200:
                began = clock()
                store.records.upsert(batch)
                result.store += clock() - began
                batch.clear()
        if args.limit and result.prs >= args.limit:
            break
    analysis.end_day()
    if store is not None:
        began = clock()
        store.records.upsert(batch)
        store.close()
        result.store += clock() - began
    result.rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def prdigest_run(argv: list[str]) -> tuple[Measured, Ingest]:
    measured, out = _run([sys.executable, __file__, "--worker", *argv])
    return measured, Ingest(**json.loads(out.decode().strip().splitlines()[-1]))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, help="a local clone")
    parser.add_argument("--repo", default="vllm-project/vllm-ascend")
    parser.add_argument("--branch")
    parser.add_argument("--pairs", type=int, default=3, help="floor/prdigest pairs (median)")
    parser.add_argument("--store", type=Path, help="also upsert into this SQLite file")
    parser.add_argument("--limit", type=int, help="stop after N PRs (profiling)")
    parser.add_argument("--skip-analyze", action="store_true", help="the git source alone")
    parser.add_argument("--full", action="store_true", help="every PR analyzed in full")
    parser.add_argument("--top", type=int, default=8, help="paragraphs per day's digest")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.path is None:
        print(
            "bench_git: skipped — give the path of a clone, e.g. "
            "python bench/bench_git.py /work/data/vllm-ascend"
        )
        return 0
    if args.worker:
        print(json.dumps(asdict(ingest(args))))
        return 0
    from prdigest.sources.git import resolve_branch

    ref = resolve_branch(args.path, args.branch).ref
    forwarded = [a for a in argv if a != "--worker"]
    pairs: list[tuple[Measured, Measured]] = []
    run = Ingest()
    for index in range(1, args.pairs + 1):
        base = floor(args.path, ref)
        own, run = prdigest_run(forwarded)
        pairs.append((base, own))
        print(
            f"pair {index}: floor {base.cpu:6.2f} s CPU ({base.wall:6.2f} s wall), "
            f"prdigest {own.cpu:6.2f} s CPU ({own.wall:6.2f} s wall): "
            f"CPU ratio {own.cpu / base.cpu:.2f}, wall ratio {own.wall / base.wall:.2f}",
            flush=True,
        )
    depth = "full" if args.full else "triage-depth"
    steps = "read" + ("" if args.skip_analyze else f" + {depth} analyze + assess")
    if not (args.skip_analyze or args.full):
        steps += " + each day's picks enriched to full"
    steps += " + store" if args.store else ""
    print(
        f"history: {args.path} ({ref}), {run.prs} PRs, {run.skipped} commits skipped, "
        f"{run.lines:,} patch lines kept; prdigest = {steps}"
    )
    if not args.skip_analyze:
        print(f"  of which analyze: {run.analyze:.2f} s CPU ({depth}, {run.prs} PRs; last run)")
        print(f"  of which assess:  {run.assess:.2f} s CPU")
    if not (args.skip_analyze or args.full):
        print(
            f"  of which enrich of the picks to full: {run.full:.2f} s CPU ({run.picked} PRs "
            f"picked on {run.days} days, top {args.top})"
        )
    if args.store:
        print(f"  of which store:   {run.store:.2f} s CPU (last run)")
    cpu = [own.cpu / base.cpu for base, own in pairs]
    wall = [own.wall / base.wall for base, own in pairs]
    print(
        f"ratio (median of {len(pairs)} pairs): CPU {statistics.median(cpu):.2f} "
        f"({min(cpu):.2f}–{max(cpu):.2f}), wall {statistics.median(wall):.2f} "
        f"(target ≤ {TARGET_RATIO} CPU)"
    )
    print(
        f"peak RSS  python {run.rss_mb:.0f} MB (target ≤ {TARGET_RSS_MB} MB), "
        f"with its git child {max(own.rss_mb for _, own in pairs):.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

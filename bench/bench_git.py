"""Benchmark: ingest + analyze a clone's whole first-parent history with the git source.

    python bench/bench_git.py PATH [--repo owner/name] [--branch B] [--store DB] [--limit N]
                                   [--skip-analyze]

Prints, from one run: the I/O floor (``git log --first-parent -p --numstat`` over the same
history, read to the end and thrown away), the wall time of reading every PR with
``prdigest.sources.git.read_prs`` and analyzing it with ``prdigest.analyze.analyze`` (and
storing it, with ``--store``), their ratio, and peak RSS of this process and of its git
children; ``--skip-analyze`` measures the git source alone. Targets (issue 4): ratio ≤ 2.0,
peak RSS ≤ 500 MB. Without PATH it prints why it skipped and exits 0.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from prdigest.analyze import analyze
from prdigest.core.presets import load_preset
from prdigest.core.records import PullRequest
from prdigest.sources.git import read_prs, resolve_branch
from prdigest.store import open_store

TARGET_RATIO = 2.0
TARGET_RSS_MB = 500


def floor_seconds(path: Path, ref: str) -> tuple[float, int]:
    """Wall time and bytes of ``git log -p --numstat`` over the first-parent history."""
    start = time.perf_counter()
    process = subprocess.Popen(
        ["git", "-C", str(path), "log", "--first-parent", "-p", "--numstat", ref, "--"],
        stdout=subprocess.PIPE,
    )
    assert process.stdout is not None
    size = 0
    while chunk := process.stdout.read(1 << 20):
        size += len(chunk)
    process.wait()
    return time.perf_counter() - start, size


@dataclass
class Ingest:
    total: float = 0.0  # wall time of the whole loop
    analyze: float = 0.0  # of which in analyze()
    store: float = 0.0  # of which in upsert_prs()
    prs: int = 0
    skipped: int = 0
    lines: int = 0  # patch lines kept in the records

    @property
    def read(self) -> float:
        return self.total - self.analyze - self.store


def ingest(
    path: Path,
    repo: str,
    branch: str | None,
    store_path: Path | None,
    limit: int | None,
    skip_analyze: bool = False,
) -> Ingest:
    """Read every PR of the history with the git source, analyze it, and store it if asked."""
    preset = load_preset(repo, None)
    store = open_store(store_path) if store_path else None
    result = Ingest()
    batch: list[PullRequest] = []
    start = time.perf_counter()
    for item in read_prs(path, repo, branch=branch):
        if not isinstance(item, PullRequest):
            result.skipped += 1
            continue
        result.prs += 1
        result.lines += sum(f.patch.count("\n") + 1 for f in item.files or () if f.patch)
        if not skip_analyze:
            began = time.perf_counter()
            analyze(item, preset, pr_version=item.version_key)
            result.analyze += time.perf_counter() - began
        if store is not None:
            batch.append(item)
            if len(batch) >= 200 or (limit and result.prs >= limit):
                began = time.perf_counter()
                store.records.upsert(batch)
                result.store += time.perf_counter() - began
                batch.clear()
        if limit and result.prs >= limit:
            break
    if store is not None:
        began = time.perf_counter()
        store.records.upsert(batch)
        store.close()
        result.store += time.perf_counter() - began
    result.total = time.perf_counter() - start
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, help="a local clone")
    parser.add_argument("--repo", default="vllm-project/vllm-ascend")
    parser.add_argument("--branch")
    parser.add_argument("--store", type=Path, help="also upsert into this SQLite file")
    parser.add_argument("--limit", type=int, help="stop after N PRs (profiling)")
    parser.add_argument(
        "--skip-analyze", action="store_true", help="measure the git source alone (no analyze)"
    )
    args = parser.parse_args(argv)
    if args.path is None:
        print(
            "bench_git: skipped — give the path of a clone, e.g. "
            "python bench/bench_git.py /work/data/vllm-ascend"
        )
        return 0
    ref = resolve_branch(args.path, args.branch).ref
    floor, size = floor_seconds(args.path, ref)
    run = ingest(args.path, args.repo, args.branch, args.store, args.limit, args.skip_analyze)
    own_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    git_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    ratio = run.total / floor
    print(
        f"history: {args.path} ({ref}), {run.prs} PRs, {run.skipped} commits skipped, "
        f"{run.lines:,} patch lines kept, git log output {size / 1e6:.0f} MB"
    )
    steps = "read_prs" + ("" if args.skip_analyze else " + analyze")
    steps += " + store" if args.store else ""
    rows = [
        ("floor", "git log --first-parent -p --numstat", floor),
        ("ingest", steps, run.total),
        ("", "of which read (git, parse, records)", run.read),
    ]
    if not args.skip_analyze:
        rows.append(("", "of which analyze", run.analyze))
    if args.store:
        rows.append(("", "of which store", run.store))
    for label, what, seconds in rows:
        print(f"{label:7s} {what:40s} {seconds:7.2f} s")
    print(f"ratio   {ratio:.2f} (target ≤ {TARGET_RATIO})")
    print(
        f"peak RSS  python {own_mb:.0f} MB (target ≤ {TARGET_RSS_MB}), largest git child "
        f"{git_mb:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

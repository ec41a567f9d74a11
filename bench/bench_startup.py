"""Start-up figures: `prdigest --version` and a cached one-day digest against a floor.

Run: python bench/bench_startup.py [--pairs 3]

The floor is `python -c "import click, pydantic, sqlalchemy"`: the libraries every command that
reads the store needs, so no prdigest command that digests can start faster. Each pair runs the
floor and the command back to back (alternating which goes first), each in a fresh interpreter;
the ratio of a pair is command / floor, and the figure is the median of the pairs' ratios, for
CPU time (user + system, steadier on a loaded machine) and for wall time. The cached digest is
the bundled sample day (`prdigest demo --db …`, then one digest to fill the cache), digested
again. Targets (issue 13): `--version` ≤ 1.5×, cached digest ≤ 3×. Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

FLOOR = [sys.executable, "-c", "import click, pydantic, sqlalchemy"]
PRDIGEST = [sys.executable, "-m", "prdigest"]
TARGETS = {"--version": 1.5, "cached digest": 3.0}


@dataclass(frozen=True)
class Timing:
    cpu: float
    wall: float


def timed(command: list[str]) -> Timing:
    """CPU and wall seconds of one run in a fresh process (its output is discarded)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    stderr = process.stderr.read() if process.stderr else b""
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {stderr.decode(errors='replace')}")
    return Timing(usage.ru_utime + usage.ru_stime, wall)


def paired(command: list[str], pairs: int) -> list[tuple[Timing, Timing]]:
    """(floor, command) timings, alternating which of the two runs first."""
    results = []
    for n in range(pairs):
        if n % 2 == 0:
            floor, own = timed(FLOOR), timed(command)
        else:
            own, floor = timed(command), timed(FLOOR)
        results.append((floor, own))
    return results


def report(name: str, results: list[tuple[Timing, Timing]]) -> None:
    cpu = statistics.median(own.cpu / floor.cpu for floor, own in results)
    wall = statistics.median(own.wall / floor.wall for floor, own in results)
    floor_cpu = statistics.median(floor.cpu for floor, _ in results)
    own_cpu = statistics.median(own.cpu for _, own in results)
    target = TARGETS[name]
    verdict = "meets" if cpu <= target and wall <= target else "MISSES"
    print(
        f"{name:14} {own_cpu:5.2f} s CPU vs floor {floor_cpu:5.2f} s: "
        f"{cpu:4.2f}× CPU, {wall:4.2f}× wall (median of {len(results)} pairs; "
        f"target ≤ {target}×: {verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prdigest-bench-") as tmp:
        db = str(Path(tmp) / "day.sqlite3")
        digest = [*PRDIGEST, "digest", "--repo", "vllm-project/vllm", "--date", "2026-06-10"]
        digest += ["--db", db]
        timed([*PRDIGEST, "demo", "--db", db])
        timed(digest)  # fills the cache: what follows is a re-run of an unchanged day
        report("--version", paired([*PRDIGEST, "--version"], args.pairs))
        report("cached digest", paired(digest, args.pairs))


if __name__ == "__main__":
    main()

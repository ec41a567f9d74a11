"""Benchmark: big windows — peak memory, cold and cached digests, the store, git re-runs.

    python bench/bench_scale.py [--sizes 1000,5000,20000] [--pg URL] [--git PATH]
                                [--only memory,store,git]

* **memory**: per size, a process imports that many synthetic PRs (the fixture PRs, renumbered
  and spread over a year) into a new SQLite store; another digests the whole window with the
  template writer, cold and then again with everything cached (the cold digest released
  first). Printed: the cold and the cached run's CPU seconds, their ratio (target ≤ 0.05) and
  each run's peak RSS (target ≤ 400 MB at every size, flat from 1,000 to 20,000), and the
  fill's peak RSS beside them (the fill is set-up, not the digest: it holds 500 records at a
  time).
* **store**: a 2,000-PR window digested cold and cached on SQLite and on PostgreSQL (``--pg``
  or a throw-away cluster when PostgreSQL's binaries are installed): the share of each run's
  CPU spent in the store's repositories, and the queries a cached run sends.
* **git**: ``sync --git`` of a window of a real clone (``--git PATH``), cold into a new store
  and then re-run: CPU seconds of each (git included) and their ratio (target ≤ 0.1).

CPU seconds, not wall time: the machine is shared. Prints figures only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

TARGET_RSS_MB = 400
TARGET_CACHED = 0.05
TARGET_GIT_RERUN = 0.1
YEAR = ("2026-01-01", "2026-08-01")  # synthetic PRs, all merged before 2026-08-01
GIT_WINDOW = ("2025-01-01", "2026-08-01")


def cpu() -> float:
    """CPU seconds of this process and of the children it waited for (git)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def synthetic(count: int) -> Iterator[Any]:
    """``count`` PRs made from the fixture PRs, renumbered, merged across the year window."""
    from prdigest.core.records import parse_record

    from conftest import all_fixtures

    base = [r.to_json_dict() for r in all_fixtures() if r.files]
    span = 212 * 24 * 3600  # seconds from 2026-01-01 to 2026-07-31
    for i in range(count):
        data = dict(base[i % len(base)])
        data["number"] = 200_000 + i
        offset = (i * span) // max(count, 1)
        day, rest = divmod(offset, 86_400)
        month_days = [31, 28, 31, 30, 31, 30, 31]
        month = 0
        while day >= month_days[month]:
            day -= month_days[month]
            month += 1
        data["merged_at"] = (
            f"2026-{month + 1:02d}-{day + 1:02d}T{rest // 3600:02d}:{rest % 3600 // 60:02d}:00Z"
        )
        yield parse_record(data)


def year_options(repo: str) -> Any:
    from prdigest.core.window import range_window
    from prdigest.pipeline.digest import DigestOptions

    return DigestOptions(repo=repo, window=range_window(*YEAR, "UTC"), top=8)


def fill(store: Any, count: int) -> None:
    batch = []
    for record in synthetic(count):
        batch.append(record)
        if len(batch) == 500:
            store.records.upsert(batch)
            batch.clear()
    store.records.upsert(batch)


# -- memory ------------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """This process's peak RSS since it started or since :func:`reset_peak` (Linux: VmHWM)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak() -> bool:
    """Start the peak RSS again from the current RSS (Linux ``clear_refs``); False: cannot."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def fill_worker(count: int, store_path: str) -> dict[str, float]:
    """Import ``count`` synthetic PRs into a new store, in a process of its own."""
    from prdigest.store import open_store

    with open_store(store_path) as store:
        fill(store, count)
    return {"rss": peak_rss_mb()}


def memory_worker(repo: str, count: int, store_path: str) -> dict[str, float]:
    """Digest the filled store cold, then cached, each run's peak RSS measured on its own (the
    cold digest released first); the fill ran in another process."""
    import gc

    from prdigest.pipeline.digest import run_digest
    from prdigest.store import open_store
    from prdigest.write.template import TemplateWriter

    with open_store(store_path) as store:
        began = cpu()
        cold = run_digest(store, year_options(repo), TemplateWriter())
        cold_s = cpu() - began
        cold_rss = peak_rss_mb()
        assert cold.digest.total == count
        del cold
        gc.collect()
        separate = reset_peak()
        began = cpu()
        warm = run_digest(store, year_options(repo), TemplateWriter())
        warm_s = cpu() - began
        assert warm.written == 0 and warm.digest.total == count
    warm_rss = peak_rss_mb() if separate else -1.0
    return {"cold": cold_s, "cached": warm_s, "rss": cold_rss, "cached_rss": warm_rss}


def worker_json(*args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", *args], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def memory(sizes: list[int]) -> None:
    from conftest import REPO

    print("memory: synthetic PRs in one window, SQLite, template writer")
    print("  (per size: the fill in one process, the cold and the cached digest in another)")
    print(
        f"  {'PRs':>7} {'cold s':>9} {'cached s':>9} {'cached/cold':>12} "
        f"{'peak RSS cold':>14} {'cached':>9} {'(fill)':>9}"
    )
    for count in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            store = str(Path(tmp) / "m.sqlite3")
            filled = worker_json("fill", str(count), store)
            got = worker_json("memory", REPO, str(count), store)
        cached_rss = f"{got['cached_rss']:>6.0f} MB" if got["cached_rss"] >= 0 else f"{'–':>9}"
        print(
            f"  {count:>7,} {got['cold']:>9.1f} {got['cached']:>9.2f} "
            f"{got['cached'] / got['cold']:>12.3f} {got['rss']:>11.0f} MB {cached_rss} "
            f"{filled['rss']:>6.0f} MB",
            flush=True,
        )
    print(
        f"  targets: cached/cold ≤ {TARGET_CACHED}; the digest's peak RSS ≤ {TARGET_RSS_MB} MB "
        "and flat"
    )


# -- store -------------------------------------------------------------------------------------


@dataclass
class StoreClock:
    seconds: float = 0.0
    queries: int = 0


@contextmanager
def timed_store(store: Any) -> Iterator[StoreClock]:
    """Time every call into the store's record and artefact repositories; count queries."""
    from sqlalchemy import event

    clock = StoreClock()
    patched: list[tuple[Any, str, Any]] = []
    for repo in (store.records, store.artefacts, store.usage):
        for name in dir(repo):
            method = getattr(repo, name)
            if name.startswith("_") or not callable(method):
                continue

            def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
                def timed(*args: Any, **kwargs: Any) -> Any:
                    began = cpu()
                    try:
                        result = func(*args, **kwargs)
                        if hasattr(result, "__next__"):
                            result = list(result)
                        return result
                    finally:
                        clock.seconds += cpu() - began

                return timed

            patched.append((repo, name, method))
            setattr(repo, name, wrap(method))

    def count(*_: Any) -> None:
        clock.queries += 1

    engine = store._engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield clock
    finally:
        event.remove(engine, "before_cursor_execute", count)
        for repo, name, _method in patched:
            delattr(repo, name)


def store_run(target: str, count: int) -> dict[str, float]:
    from prdigest.pipeline.digest import run_digest
    from prdigest.store import open_store
    from prdigest.write.template import TemplateWriter

    from conftest import REPO

    with open_store(target) as store:
        fill(store, count)
        figures: dict[str, float] = {}
        for label in ("cold", "cached"):
            with timed_store(store) as clock:
                began = cpu()
                run_digest(store, year_options(REPO), TemplateWriter())
                total = cpu() - began
            figures[f"{label}_s"] = total
            figures[f"{label}_store"] = clock.seconds / total
            figures[f"{label}_queries"] = clock.queries
    return figures


def store_bench(pg_url: str | None, count: int) -> None:
    print(f"store: a {count:,}-PR window, cold then cached (template writer)")
    targets: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        targets.append(("SQLite", str(Path(tmp) / "s.sqlite3")))
        server = None
        if pg_url is None:
            server = throwaway_postgres()
            if isinstance(server, str):
                print(f"  PostgreSQL skipped: {server} (give --pg URL)")
                server = None
            else:
                pg_url = server.create_database("bench")
        if pg_url is not None:
            targets.append(("PostgreSQL", pg_url))
        try:
            print(
                f"  {'backend':<11} {'cold s':>8} {'store':>7} {'cached s':>9} {'store':>7} "
                f"{'queries (cached)':>17}"
            )
            for name, target in targets:
                got = store_run(target, count)
                print(
                    f"  {name:<11} {got['cold_s']:>8.1f} {got['cold_store']:>6.0%} "
                    f"{got['cached_s']:>9.2f} {got['cached_store']:>6.0%} "
                    f"{got['cached_queries']:>17.0f}",
                    flush=True,
                )
        finally:
            if server is not None and not isinstance(server, str):
                server.stop()


def throwaway_postgres() -> Any:
    try:
        from pg_support import start_server
    except ImportError:
        return "tests/pg_support.py not available"
    return start_server()


# -- git ---------------------------------------------------------------------------------------


def git_worker(path: str, store_path: str) -> dict[str, float]:
    from prdigest.core.window import range_window
    from prdigest.pipeline.registry import SourceSpec, sync_repo
    from prdigest.store import open_store

    spec = SourceSpec(repo="vllm-project/vllm-ascend", source="git", path=Path(path))
    window = range_window(*GIT_WINDOW, "UTC")
    with open_store(store_path) as store:
        began = cpu()
        report = sync_repo(store, spec, window, {})
        seconds = cpu() - began
    return {"seconds": seconds, "found": report.found, "known": report.details.known}  # type: ignore[attr-defined]


def git_bench(path: Path) -> None:
    print(f"git: sync --git of {path} over {GIT_WINDOW[0]} .. {GIT_WINDOW[1]}")
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "g.sqlite3")
        runs = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, __file__, "--worker", "git", str(path), store],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
    cold, rerun = runs
    print(f"  cold:   {cold['seconds']:6.2f} s CPU, {cold['found']:.0f} PRs read")
    print(
        f"  re-run: {rerun['seconds']:6.2f} s CPU, {rerun['known']:.0f} PRs already stored, "
        f"{rerun['found']:.0f} read"
    )
    ratio = rerun["seconds"] / cold["seconds"]
    print(f"  re-run / cold: {ratio:.3f} (target ≤ {TARGET_GIT_RERUN})")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        kind, *rest = argv[1:]
        if kind == "fill":
            result = fill_worker(int(rest[0]), rest[1])
        elif kind == "memory":
            result = memory_worker(rest[0], int(rest[1]), rest[2])
        else:
            result = git_worker(*rest)
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--store-prs", type=int, default=2000)
    parser.add_argument("--pg", help="a PostgreSQL URL for the store figures")
    parser.add_argument("--git", type=Path, help="a clone for the sync --git figures")
    parser.add_argument("--only", default="memory,store,git")
    args = parser.parse_args(argv)
    parts = set(args.only.split(","))
    started = time.perf_counter()
    if "memory" in parts:
        memory([int(x) for x in args.sizes.split(",")])
    if "store" in parts:
        store_bench(args.pg, args.store_prs)
    if "git" in parts:
        if args.git is None:
            print("git: skipped — give --git PATH (a clone, e.g. /work/data/vllm-ascend)")
        else:
            git_bench(args.git)
    print(f"({time.perf_counter() - started:.0f} s wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

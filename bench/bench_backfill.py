"""Benchmark: a year of synthetic 100-PR days backfilled by 1 and by 4 workers on PostgreSQL.

    python bench/bench_backfill.py [--days 365] [--per-day 100] [--workers 1,4] [--pg URL]

The fixture PRs, renumbered, make ``--per-day`` PRs on each of ``--days`` days; they are stored
once in a template database. Each run copies that database, starts its workers as separate
processes (``prdigest backfill --worker wN`` against the same PostgreSQL database) and waits for
them all. Printed per run: wall time, days per minute, the speed-up over one worker, and the
duplicates — days digested by more than one worker (from each worker's own list) and days
claimed more than once (``attempts > 1``). Needs PostgreSQL: ``--pg URL`` of a database to
use as the template's server, or PostgreSQL's server programs for a throw-away cluster.

The machine has 2 cores, so 4 workers can at best halve the time; the figure shows the claims
cost nothing and lose nothing, not what a bigger machine would gain.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

REPO = "vllm-project/vllm"
FIRST = date(2025, 7, 1)  # synthetic days, all before 2026-08-01


def records(days: int, per_day: int) -> Any:
    from prdigest.core.records import parse_record

    from conftest import all_fixtures

    base = [r.to_json_dict() for r in all_fixtures() if r.files]
    for d in range(days):
        day = FIRST + timedelta(days=d)
        for i in range(per_day):
            data = dict(base[(d * per_day + i) % len(base)])
            data["number"] = 300_000 + d * per_day + i
            data["merged_at"] = f"{day.isoformat()}T{(i % 20) + 1:02d}:{i % 60:02d}:00Z"
            yield parse_record(data)


def fill(url: str, days: int, per_day: int) -> None:
    from prdigest.store import open_store

    with open_store(url) as store:
        batch = []
        for record in records(days, per_day):
            batch.append(record)
            if len(batch) == 500:
                store.records.upsert(batch)
                batch.clear()
        store.records.upsert(batch)


def admin(server_url: str, statement: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server_url)
    params = {k: v for k, v in url.query.items() if isinstance(v, str)}
    with psycopg.connect(
        host=params.get("host", url.host or ""),
        port=int(params.get("port", url.port or 5432)),
        user=url.username,
        password=url.password,
        dbname="postgres",
        autocommit=True,
    ) as conn:
        conn.execute(statement)


def with_database(server_url: str, name: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def run(url: str, workers: int, days: int) -> dict[str, Any]:
    until = FIRST + timedelta(days=days)
    argv = [sys.executable, "-m", "prdigest", "backfill", "-q", "-r", REPO, "--tz", "UTC",
            "--since", FIRST.isoformat(), "--until", until.isoformat(), "--db", url]  # fmt: skip
    started = time.perf_counter()
    procs = [
        subprocess.Popen([*argv, "--worker", f"w{n}"], stdout=subprocess.PIPE, text=True)
        for n in range(1, workers + 1)
    ]
    outputs = [p.communicate()[0] for p in procs]
    wall = time.perf_counter() - started
    if any(p.returncode for p in procs):
        raise SystemExit(f"bench_backfill: a worker failed: {outputs}")
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            text("SELECT worker, attempts FROM backfill_days WHERE status = 'done'")
        ).all()
    engine.dispose()
    per_worker: dict[str, int] = {}
    for worker, _ in rows:
        per_worker[worker] = per_worker.get(worker, 0) + 1
    return {
        "wall": wall,
        "done": len(rows),
        "claimed_twice": sum(1 for _, attempts in rows if attempts > 1),
        "per_worker": per_worker,
        "reported": sum(int(o.split(", ")[1].split()[0]) for o in outputs if o.strip()),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--per-day", type=int, default=100)
    parser.add_argument("--workers", default="1,4")
    parser.add_argument("--pg", help="URL of a PostgreSQL database whose server may be used")
    args = parser.parse_args(argv)
    server = None
    if args.pg is None:
        from pg_support import start_server

        server = start_server()
        if isinstance(server, str):
            print(f"bench_backfill: skipped — {server} (give --pg URL)")
            return 0
        args.pg = server.url()
    try:
        template = f"bf_template_{int(time.time())}"
        admin(args.pg, f'CREATE DATABASE "{template}"')
        began = time.perf_counter()
        fill(with_database(args.pg, template), args.days, args.per_day)
        total = args.days * args.per_day
        print(
            f"{args.days} days × {args.per_day} PRs = {total:,} PRs stored in "
            f"{time.perf_counter() - began:.0f} s"
        )
        base: float | None = None
        for count in [int(x) for x in args.workers.split(",")]:
            name = f"{template}_w{count}"
            admin(args.pg, f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
            got = run(with_database(args.pg, name), count, args.days)
            base = base or got["wall"]
            duplicates = got["reported"] - got["done"]
            print(
                f"{count} worker(s): {got['wall']:7.1f} s wall, "
                f"{got['done'] / got['wall'] * 60:6.1f} days/min, "
                f"speed-up {base / got['wall']:.2f}×, "
                f"{got['done']}/{args.days} days done, duplicates: {duplicates} digested twice, "
                f"{got['claimed_twice']} claimed twice; per worker {json.dumps(got['per_worker'])}",
                flush=True,
            )
    finally:
        if server is not None and not isinstance(server, str):
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

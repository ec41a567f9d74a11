"""Shared fixtures: the fixture PR records, a temporary store, the vLLM preset, PostgreSQL."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from prdigest.analyze import analyze
from prdigest.core.models import Dossier
from prdigest.core.presets import Preset, load_preset
from prdigest.core.records import PullRequest, parse_record
from prdigest.store import Store, open_store

from pg_support import PgServer, start_server

FIXTURES = Path(__file__).parent / "fixtures"
PR_DIR = FIXTURES / "prs"
GOLDEN = Path(__file__).parent / "golden"
REPO = "vllm-project/vllm"
DAY_A = "2026-06-10"
DAY_B = "2026-06-11"


def load_fixture(number: int) -> PullRequest:
    return parse_record(json.loads((PR_DIR / f"{number}.json").read_text(encoding="utf-8")))


def all_fixtures() -> list[PullRequest]:
    return [
        load_fixture(int(p.stem)) for p in sorted(PR_DIR.glob("*.json"), key=lambda p: int(p.stem))
    ]


@pytest.fixture(scope="session")
def records() -> list[PullRequest]:
    return all_fixtures()


@pytest.fixture(scope="session")
def vllm_preset() -> Preset:
    return load_preset(REPO)


@pytest.fixture(scope="session")
def dossiers(records: list[PullRequest], vllm_preset: Preset) -> dict[int, Dossier]:
    return {r.number: analyze(r, vllm_preset) for r in records}


@pytest.fixture
def fixture_json() -> Callable[[int], dict[str, object]]:
    def load(number: int) -> dict[str, object]:
        data: dict[str, object] = json.loads(
            (PR_DIR / f"{number}.json").read_text(encoding="utf-8")
        )
        return data

    return load


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(tmp_path / "test.sqlite3") as opened:
        yield opened


@pytest.fixture
def loaded_store(store: Store, records: list[PullRequest]) -> Store:
    store.records.upsert(records)
    return store


def says(text: str, section: str, key: str, lang: str = "zh", **values: object) -> bool:
    """Whether ``text`` holds one of the phrasebook's variants of ``[template.section] key``:
    formatted with ``values`` when given (spaced as the writer spaces Chinese and Latin text),
    else with any text in its placeholders."""
    import re

    from prdigest.core.locale import locale
    from prdigest.write.template import space_cjk

    phrase = locale(lang).template[section][key]
    for variant in phrase if isinstance(phrase, list) else [phrase]:
        if values:
            if space_cjk(variant.format(**values)) in space_cjk(text):
                return True
            continue
        pattern = ".*?".join(re.escape(part) for part in re.split(r"\{\w+\}", variant))
        if re.search(pattern, text):
            return True
    return False


def make_pr(number: int = 1, **fields: object) -> PullRequest:
    """A minimal valid record for literal tests; ``fields`` override or add record fields."""
    data: dict[str, object] = {
        "schema": "prdigest.pr/v1",
        "repo": REPO,
        "number": number,
        "title": "[Bugfix] Fix something",
        "author": "alice",
        "merged_at": "2026-06-10T03:00:00Z",
        "source": "jsonl",
    }
    data.update(fields)
    return parse_record(data)


def one_file_dossier(path: str, patch: str) -> Dossier:
    """The full dossier of a PR that changes one modified file by ``patch`` (counts from it)."""
    lines = patch.splitlines()
    change = {
        "path": path,
        "status": "modified",
        "additions": sum(1 for x in lines if x.startswith("+")),
        "deletions": sum(1 for x in lines if x.startswith("-")),
        "patch": patch,
    }
    pr = make_pr(files=[change])
    return analyze(pr, load_preset(pr.repo))


def file_patch(
    path: str, added: list[str], removed: list[str] | None = None, status: str = "modified"
) -> dict[str, object]:
    """A file change whose patch is one hunk removing ``removed`` and adding ``added``."""
    removed = removed or []
    body = [f"-{line}" for line in removed] + [f"+{line}" for line in added]
    start = 0 if status == "added" else 1
    patch = f"@@ -{start},{len(removed)} +1,{len(added)} @@\n" + "\n".join(body)
    return {
        "path": path,
        "status": status,
        "additions": len(added),
        "deletions": len(removed),
        "patch": patch,
    }


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One throw-away PostgreSQL cluster for the session (see ``tests/pg_support.py``)."""
    server = start_server()
    if isinstance(server, str):
        if os.environ.get("PRDIGEST_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required here: {server}")
        pytest.skip(server)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A new, empty PostgreSQL database for one test, as a SQLAlchemy URL."""
    return pg_server.create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A new store on SQLite, then on PostgreSQL: the store tests run against both."""
    if request.param == "sqlite":
        target = str(tmp_path / "any.sqlite3")
    else:
        target = request.getfixturevalue("pg_url")
    with open_store(target) as opened:
        yield opened


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int) -> None:
    """After a full run in which every reliability scenario ran and passed, rewrite
    ``RELIABILITY.md`` from its figures (``tests/reliability_report.py``)."""
    import reliability_report

    if exitstatus == 0 and reliability_report.complete() and reliability_report.write():
        terminalreporter.write_line(f"{reliability_report.REPORT.name} rewritten: commit it")

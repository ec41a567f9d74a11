"""Start-up: a command loads only what it needs, and the LLM writer's client is optional.

Each check runs the CLI in a fresh interpreter and lists the modules it imported; timings are
the benchmark's business (``bench/bench_startup.py``), these tests only say what is loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DAY_A, REPO

pytestmark = pytest.mark.slow  # each check starts fresh interpreters

RUNNER = """
import json, sys
for name in {blocked!r}:
    sys.modules[name] = None  # as if the package were not installed
from prdigest.cli import main
code = 0
try:
    main({args!r})
except SystemExit as exc:
    code = exc.code or 0
with open({report!r}, "w") as handle:
    json.dump({{"code": code, "modules": sorted(sys.modules)}}, handle)
"""
HEAVY = {"openai", "jinja2", "feedgen", "alembic"}


def run_cli(tmp_path: Path, *args: str, blocked: tuple[str, ...] = ()) -> tuple[int, set[str], str]:
    report = tmp_path / "report.json"
    code = RUNNER.format(args=list(args), report=str(report), blocked=blocked)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    data = json.loads(report.read_text(encoding="utf-8"))
    roots = {name.partition(".")[0] for name in data["modules"]}
    return int(data["code"]), roots, done.stderr


@pytest.fixture
def store_with_a_day(tmp_path: Path) -> str:
    db = str(tmp_path / "day.sqlite3")
    code, _, _ = run_cli(tmp_path, "demo", "--db", db)
    assert code == 0
    return db


def test_version_loads_neither_pydantic_nor_sqlalchemy(tmp_path: Path) -> None:
    code, loaded, _ = run_cli(tmp_path, "--version")
    assert code == 0
    assert loaded.isdisjoint(HEAVY | {"pydantic", "sqlalchemy", "httpx", "rich"})


def test_a_digest_loads_no_model_client_templates_feeds_or_migrations(
    tmp_path: Path, store_with_a_day: str
) -> None:
    code, loaded, _ = run_cli(
        tmp_path, "digest", "--repo", REPO, "--date", DAY_A, "--db", store_with_a_day
    )
    assert code == 0
    assert "sqlalchemy" in loaded  # the check would pass vacuously if nothing ran
    assert loaded.isdisjoint(HEAVY)


def test_the_template_writer_works_without_openai(tmp_path: Path, store_with_a_day: str) -> None:
    code, _, _ = run_cli(
        tmp_path,
        "digest",
        "--repo",
        REPO,
        "--date",
        DAY_A,
        "--db",
        store_with_a_day,
        blocked=("openai",),
    )
    assert code == 0


def test_the_llm_writer_without_openai_says_which_extra_to_install(
    tmp_path: Path, store_with_a_day: str
) -> None:
    args = ("digest", "--repo", REPO, "--date", DAY_A, "--db", store_with_a_day, "--writer", "llm")
    code, _, err = run_cli(tmp_path, *args, blocked=("openai",))
    assert code == 2
    assert err == (
        "Error: --writer: the LLM writer needs the openai package: pip install 'prdigest[llm]'\n"
    )


def test_llm_check_without_openai_says_which_extra_to_install(tmp_path: Path) -> None:
    code, _, err = run_cli(tmp_path, "llm-check", blocked=("openai",))
    assert code == 2
    assert "pip install 'prdigest[llm]'" in err


def test_every_command_is_in_the_table_of_command_modules() -> None:
    from prdigest.cli import cli, load_all_commands
    from prdigest.cli.group import COMMANDS

    load_all_commands()
    for name, command in cli.commands.items():
        module = command.callback.__module__ if command.callback else ""
        assert module == f"prdigest.cli.{COMMANDS[name][0]}", name

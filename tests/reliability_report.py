"""``RELIABILITY.md``: each reliability scenario with how often it was tried and survived.

Reliability tests call :func:`record` with their figures; at the end of a test session that ran
every scenario in :data:`SCENARIOS` (the full suite, as CI runs it), ``tests/conftest.py`` calls
:func:`write` and the file is rewritten from what this run measured, so it cannot drift from the
tests. A partial run (``-k``, one file) leaves the file alone.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parent.parent
REPORT = ROOT / "RELIABILITY.md"
SCENARIOS = {
    "run-all SIGKILLed after a schema statement, then run again": "tests/test_reliability_kill.py",
    "run-all SIGKILLed before a commit (sync, digest, delivery log), then run again": "tests/test_reliability_kill.py",
    "run-all SIGKILLed after an HTTP answer (GitHub, the model, the webhook), then run again": "tests/test_reliability_kill.py",
    "run-all SIGKILLed before a site file's rename, then run again": "tests/test_reliability_kill.py",
    "run-all SIGKILLed after the SMTP server took the mail, then run again": "tests/test_reliability_kill.py",
    "import killed after each schema statement (SQLite)": "tests/test_store_crash.py",
    "import killed after each schema statement (PostgreSQL)": "tests/test_store_crash.py",
    "site killed before each file rename": "tests/test_site_crash.py",
    "concurrent runs on one store (SQLite)": "tests/test_concurrency.py",
    "concurrent runs on one store (PostgreSQL)": "tests/test_concurrency.py",
    "hostile PR through run-all: each output checked (renderings, payloads, e-mail, site in Chromium)": "tests/test_hostile_run.py",
    "fake secrets: each searched for in each output, log, payload, prompt, database and site file (secret × place)": "tests/test_hostile_run.py",
    "fuzz (hypothesis): JSONL importer, examples": "tests/test_fuzz.py",
    "fuzz (hypothesis): hunk parser and symbol extractor, examples": "tests/test_fuzz.py",
    "fuzz (hypothesis): GitHub diff splitter, examples": "tests/test_fuzz.py",
    "fuzz (hypothesis): git log parser, examples": "tests/test_fuzz.py",
    "fuzz (hypothesis): reference-digest parser, examples": "tests/test_fuzz.py",
}
_results: dict[str, tuple[int, int]] = {}


def record(scenario: str, tried: int, survived: int) -> None:
    assert scenario in SCENARIOS, scenario
    old_tried, old_survived = _results.get(scenario, (0, 0))
    _results[scenario] = (old_tried + tried, old_survived + survived)


def complete() -> bool:
    return set(_results) == set(SCENARIOS)


def write() -> bool:
    """Rewrite the report from this run's figures; whether its text changed."""
    lines = [
        "# Reliability",
        "",
        "Written by the test suite (`tests/reliability_report.py`) at the end of a full run in",
        "which every test passed; do not edit by hand. Each scenario: how many times it was tried",
        "and how many of those ended as the rules in [docs/reliability.md](docs/reliability.md)",
        "say. A try that does not survive fails its test, and a failing run leaves this file as",
        "it was, so every figure here comes from a run that held.",
        "",
        "| scenario | tried | survived | test |",
        "|---|---:|---:|---|",
    ]
    for scenario, test in SCENARIOS.items():
        tried, survived = _results[scenario]
        lines.append(f"| {scenario} | {tried} | {survived} | `{test}` |")
    text = "\n".join(lines) + "\n"
    if REPORT.is_file() and REPORT.read_text(encoding="utf-8") == text:
        return False
    REPORT.write_text(text, encoding="utf-8")
    return True

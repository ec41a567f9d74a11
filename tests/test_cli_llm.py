"""``prdigest digest --writer llm``, ``llm-check`` and ``eval`` through the CLI entry point."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from prdigest.cli import main
from prdigest.cli.llm import llm_settings
from prdigest.core.errors import ConfigError
from prdigest.store import HEAD_REVISION, open_store
from test_llm_writer import SECRET, good

from fakellm import Call, FakeLLM, Reply, Scripted
from llm_support import FIXTURES, REPO, fixture_prs

EVAL = Path(__file__).parent / "fixtures" / "eval"


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY", "PRDIGEST_LLM_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRDIGEST_LLM_MODEL", "fake-model")
    monkeypatch.setenv("PRDIGEST_LLM_API_KEY", SECRET)
    monkeypatch.setenv("PRDIGEST_LLM_PACK", "1")  # one request per entry, as these tests script


def _import(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonl = tmp_path / "prs.jsonl"
    jsonl.write_text(
        "\n".join(json.dumps(p.to_json_dict(), ensure_ascii=False) for p in fixture_prs()) + "\n",
        encoding="utf-8",
    )
    code, _, _ = cli(["import", str(jsonl), "--db", str(db)], capsys)
    assert code == 0


def test_digest_with_llm_end_to_end_and_rerun(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    llm_env: None,
) -> None:
    db = tmp_path / "e2e.sqlite3"
    _import(db, tmp_path, capsys)
    argv = ["digest", "--repo", REPO, "--date", "2026-06-10", "--db", str(db), "--writer", "llm"]
    with FakeLLM(Scripted(good)) as fake:
        monkeypatch.setenv("PRDIGEST_LLM_BASE_URL", fake.url)
        code, out, err = cli([*argv, "--format", "json"], capsys)
        assert code == 0, err
        calls = len(fake.calls)
        code, text, err2 = cli(argv, capsys)
        assert code == 0 and len(fake.calls) == calls  # the re-run made no call
    data = json.loads(out)
    assert all(p["entry"]["writer"] == "llm:fake-model" for p in data["prs"])
    assert (
        "llm: 9 request(s) in 9 call(s), 9,000 prompt + 1,800 completion tokens; "
        "paragraphs: 8 from the model, 0 repaired, 0 fixed by prdigest, 0 from the template; "
        "titles: 9 of 9 from the model"
    ) in err
    assert "llm:" not in err2  # nothing was written, nothing to report
    assert text.startswith("vllm-project/vllm\n\n改动要点")
    with open_store(db) as store:
        totals = store.usage.totals(REPO)
    assert totals == {"prompt_tokens": 9000, "completion_tokens": 1800, "calls": 9, "runs": 1}
    for blob in (out, text, err, err2, db.read_bytes().decode("utf-8", "replace")):
        assert SECRET not in blob


def test_digest_with_style_and_cost_budget(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    llm_env: None,
) -> None:
    db = tmp_path / "budget.sqlite3"
    _import(db, tmp_path, capsys)
    seen: list[Call] = []

    def spy(call: Call) -> Reply:
        seen.append(call)
        return good(call)

    with FakeLLM(spy) as fake:
        monkeypatch.setenv("PRDIGEST_LLM_BASE_URL", fake.url)
        code, out, err = cli(
            [
                "digest", "--repo", REPO, "--date", "2026-06-10", "--db", str(db),
                "--writer", "llm", "--style", str(EVAL / "reference.txt"),
                "--max-cost-tokens", "6000", "--format", "markdown",
            ],
            capsys,
        )  # fmt: skip
    assert code == 0, err
    assert "note: cost budget of 6000 tokens reached" in err
    assert "template fallback" in out
    assert (
        "test_preempt_frees_once" in next(c for c in seen if not c.is_titles).system
    )  # the --style examples went in


def test_missing_model_is_a_config_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("PRDIGEST_LLM_MODEL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    argv = ["digest", "--repo", REPO, "--date", "2026-06-10", "--db", str(tmp_path / "x.db")]
    code, _, err = cli([*argv, "--writer", "llm"], capsys)
    assert code == 2 and "Error: llm.model: no model: set PRDIGEST_LLM_MODEL" in err


def test_settings_fall_back_to_openai_variables() -> None:
    env = {"OPENAI_API_KEY": SECRET, "OPENAI_MODEL": "gpt-x", "PRDIGEST_LLM_CONCURRENCY": "3"}
    settings = llm_settings(env)
    assert settings.base_url == "https://api.openai.com/v1" and settings.model == "gpt-x"
    assert settings.concurrency == 3 and settings.api_key.get_secret_value() == SECRET
    assert SECRET not in repr(settings)
    with pytest.raises(ConfigError, match=r"llm\.concurrency"):
        llm_settings({**env, "PRDIGEST_LLM_CONCURRENCY": "lots"})


@pytest.mark.slow
def test_llm_check(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, llm_env: None
) -> None:
    slow = Reply('{"ok": true}', delay=1.5, usage={"prompt_tokens": 6000, "completion_tokens": 10})
    with FakeLLM(lambda call: slow, slots=1, props=True) as fake:
        monkeypatch.setenv("PRDIGEST_LLM_BASE_URL", fake.url)
        code, out, _ = cli(["llm-check", "--top", "2"], capsys)
        probe = fake.calls[0]
    assert code == 0 and "JSON mode:   yes" in out and "reply:       ok" in out
    assert "slots:       1 (server)" in out
    assert "PR：#" in probe.first_user and "<<<PR-DATA-" in probe.first_user  # a real prompt
    assert "--top 2:" in out and "prompt " in out.split("speed:")[1]
    monkeypatch.setenv("PRDIGEST_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("PRDIGEST_LLM_TIMEOUT", "5")  # the port refuses at once: no waiting
    code, _, err = cli(["llm-check"], capsys)
    assert code == 9 and SECRET not in err
    assert err.splitlines()[-1].startswith("Error: connection failed")  # after retry warnings


def test_eval_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.json"
    argv = [
        "eval",
        "--reference", str(EVAL / "reference.txt"),
        "--map", str(EVAL / "map.json"),
        "--generated", str(EVAL / "generated.json"),
        "--json-out", str(report),
    ]  # fmt: skip
    code, out, _ = cli(argv, capsys)
    assert code == 0
    assert "verdict agreement 75%" in out and "names recall 71% precision 83%" in out
    assert json.loads(report.read_text())["summary"]["figure_recall"] == 0.25
    code, out, _ = cli([*argv, "--format", "json"], capsys)
    assert json.loads(out)["summary"]["people_recall"] == 1.0  # no participants without --db


def test_usage_table_is_migrated(tmp_path: Path) -> None:
    open_store(tmp_path / "m.sqlite3").close()
    with sqlite3.connect(tmp_path / "m.sqlite3") as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        version = conn.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    assert "llm_usage" in tables and version == HEAD_REVISION


def test_fixtures_dir_is_where_tests_expect() -> None:
    assert any(FIXTURES.glob("*.json"))


def test_dry_run_sends_nothing_and_explain_shows_why_an_entry_fell_back(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    llm_env: None,
) -> None:
    db = tmp_path / "dry.sqlite3"
    _import(db, tmp_path, capsys)
    argv = ["digest", "--repo", REPO, "--date", "2026-06-10", "--db", str(db), "--writer", "llm"]
    english = Reply(
        '{"title": "An English title", "paragraph": "Worth a close read.", "cites": []}'
    )

    def respond(call: Call) -> Reply:
        return english if call.pr_number == 56104 else good(call)

    with FakeLLM(respond) as fake:
        monkeypatch.setenv("PRDIGEST_LLM_BASE_URL", fake.url)
        code, out, err = cli([*argv, "--dry-run"], capsys)
        assert code == 0, err
        assert not fake.calls
        assert "dry run: 9 request(s)" in out and "paragraph of #56104" in out
        code, _, err = cli(argv, capsys)
        assert code == 0 and "1 from the template" in err
    code, out, _ = cli(["explain", f"{REPO}#56104", "--db", str(db)], capsys)
    assert code == 0 and "stored entries:" in out and "template fallback" in out
    assert "finding: 标题: 必须用中文书写" in out
    code, out, _ = cli(["explain", f"{REPO}#56104", "--db", str(db), "--format", "json"], capsys)
    assert json.loads(out)["entries"][0]["findings"]


def test_every_setting_comes_from_the_file_then_the_environment_then_options() -> None:
    from prdigest.pipeline.config import parse_config

    config = parse_config(
        """
[llm]
base_url = "http://127.0.0.1:8080/v1"
model = "qwen-local"
timeout = 300
context = 12288
max_output_tokens = 900
temperature = 0.1
retries = 1
repairs = 2
concurrency = 1

[[repos]]
name = "vllm-project/vllm"
path = "prs.jsonl"
writer = "llm"
"""
    )
    table = config.llm.settings()
    settings = llm_settings({}, table)
    assert (settings.base_url, settings.model, settings.timeout_s) == (
        "http://127.0.0.1:8080/v1",
        "qwen-local",
        300,
    )
    assert (settings.context_tokens, settings.max_output_tokens, settings.temperature) == (
        12288,
        900,
        0.1,
    )
    assert (settings.max_retries, settings.repairs, settings.concurrency) == (1, 2, 1)
    assert settings.prompt_room == 8000  # the budget fits 12288 − 900 − 64
    env = {"PRDIGEST_LLM_TIMEOUT": "45", "PRDIGEST_LLM_CONTEXT": "4096", "PRDIGEST_LLM_MODEL": "m2"}
    over = llm_settings(env, table, max_cost_tokens=5000)
    assert (over.timeout_s, over.context_tokens, over.model, over.max_cost_tokens) == (
        45,
        4096,
        "m2",
        5000,
    )
    assert over.prompt_room == 4096 - 900 - 64

"""No traceback for any input: each case gives one ``Error:`` line and the right exit code.

Reproduces issue 14: ``digest --since 0001-01-01 --until 9999-12-31`` (``OverflowError``),
``explain …#999999999999999999999999`` (SQLite ``OverflowError``), a non-ASCII character in
``GITHUB_TOKEN`` (``UnicodeEncodeError``), a token with a line break (retried 5 times and
reported as a GitHub failure, exit 6 instead of 7) and a ``200`` LLM reply with a PNG body
(``UnicodeDecodeError``, exit 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.core.errors import LLMResponseError
from test_llm_client import KEY, Waits, complete, sequence

from cli_support import run_args as run
from fakellm import FakeLLM, Reply
from publish_support import REPO, fixture_record_data, write_jsonl

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\xff\xfe\xfd" * 20


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "db.sqlite3"
    write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    assert run(["import", str(tmp_path / "prs.jsonl"), "--db", str(path)], capsys)[0] == 0
    return str(path)


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (
            ["digest", "--repo", REPO, "--since", "0001-01-01", "--until", "9999-12-31"],
            2,
            "--since: 0001-01-01 is out of range",
        ),
        (
            ["digest", "--repo", REPO, "--since", "2026-01-01", "--until", "9999-12-31"],
            2,
            "--until: 9999-12-31 is out of range",
        ),
        (["digest", "--repo", REPO, "--date", "0001-01-01"], 2, "--date: 0001-01-01 is out"),
        (["explain", f"{REPO}#999999999999999999999999"], 5, "is not in the store"),
        (["explain", f"{REPO}#٣"], 2, "expected OWNER/NAME#N"),
    ],
)
def test_odd_options_give_one_line(
    args: list[str], code: int, needle: str, db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    got, _, err = run([*args, "--db", db], capsys)
    assert got == code, err
    assert "Traceback" not in err and needle in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("token", ["ghp_abc\u00e9def", "ghp_abc\ndef", "ghp abc", "ghp_\x07x"])
def test_odd_bytes_in_a_token_are_a_credential_error(
    token: str, db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", token)
    got, _, err = run(["sync", "--repo", REPO, "--date", "2026-06-10", "--db", db], capsys)
    assert got == 7, err
    assert err.startswith("Error: GITHUB_TOKEN is not a usable token")
    assert token not in err and "Traceback" not in err


@pytest.mark.parametrize("content_type", ["application/json", "image/png"])
def test_a_binary_model_reply_is_an_unusable_reply(content_type: str) -> None:
    needle = "not JSON text"
    reply = Reply(raw_bytes=PNG, raw_type=content_type)
    with FakeLLM(sequence(reply)) as fake:  # type: ignore[arg-type]
        result, client = complete(fake.url, Waits())
    assert isinstance(result, LLMResponseError), result
    assert needle in str(result) and KEY not in str(result)
    assert client.calls == 1


def test_a_binary_model_reply_never_stops_a_digest(
    db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLM(lambda call: Reply(raw_bytes=PNG, raw_type="application/json")) as fake:
        monkeypatch.setenv("PRDIGEST_LLM_BASE_URL", fake.url)
        monkeypatch.setenv("PRDIGEST_LLM_MODEL", "m")
        monkeypatch.setenv("PRDIGEST_LLM_API_KEY", KEY)
        got, out, err = run(
            ["digest", "--repo", REPO, "--date", "2026-06-10", "--writer", "llm", "--db", db],
            capsys,
        )
    assert got == 0, err
    assert "Traceback" not in err and out.startswith(REPO)

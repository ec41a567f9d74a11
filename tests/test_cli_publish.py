"""The publish commands end to end: config check, site, run-all, publish, serve."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cli_support import run_args as run
from publish_support import REPO, Received, fixture_record_data, receiver, write_jsonl

TOKEN = "SUPERSECRETTOKEN"
SIGNING = "SECsigning-value-42"
PASSWORD = "smtp-pass-77"


def write_config(tmp_path: Path, channels: str = "", extra: str = "") -> Path:
    write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    path = tmp_path / "prdigest.toml"
    path.write_text(
        f"""
db = "state.sqlite3"
[site]
dir = "public"
base_url = "https://digests.example.org/"

[[repos]]
name = "{REPO}"
path = "prs.jsonl"
{extra}
{channels}
""",
        encoding="utf-8",
    )
    return path


CHANNELS = """
[channels.team]
type = "feishu"
webhook_env = "PRD_TEST_FEISHU_URL"
secret_env = "PRD_TEST_FEISHU_SECRET"

[channels.mail]
type = "email"
host = "127.0.0.1"
port = 1
security = "none"
username = "bot"
password_env = "PRD_TEST_SMTP_PASSWORD"
from = "bot@example.org"
to = ["team@example.org"]
"""


def test_config_check_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path)
    code, out, err = run(["config", "check", "--config", str(path)], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == f"{path}: OK"
    assert f"repo {REPO}: jsonl → template writer, day in Asia/Shanghai" in out


def test_config_check_names_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PRD_TEST_FEISHU_SECRET", raising=False)
    monkeypatch.delenv("PRD_TEST_SMTP_PASSWORD", raising=False)
    monkeypatch.setenv("PRD_TEST_FEISHU_URL", "https://open.feishu.cn/x/" + TOKEN)
    path = write_config(tmp_path, CHANNELS, extra='writer = "llm"\nmodel = "m"')
    code, out, err = run(["config", "check", "--config", str(path)], capsys)
    assert code == 2
    assert f"Error: {path}: 2 problems" in err
    assert (
        "  channels.team.secret_env: environment variable PRD_TEST_FEISHU_SECRET is not set" in err
    )
    assert (
        "  channels.mail.password_env: environment variable PRD_TEST_SMTP_PASSWORD is not set"
        in err
    )
    assert "writer" not in err  # the CLI wires the llm writer in (credentials are read at run time)
    assert TOKEN not in out + err


def test_config_check_invalid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text('[[repos]]\nname = "a/b"\npath = "x"\ntimezone = "Nowhere/Land"\n')
    code, _, err = run(["config", "check", "--config", str(path)], capsys)
    assert code == 2
    assert err == (
        f"Error: {path}: 2 problems\n"
        "  repos[0].timezone (a/b): unknown time zone 'Nowhere/Land'\n"
        f"  repos[0].path (a/b): no such file: {tmp_path / 'x'}\n"
    )


def test_site_command_builds_a_digest_and_the_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db.sqlite3"
    write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    assert run(["import", str(tmp_path / "prs.jsonl"), "--db", str(db)], capsys)[0] == 0
    out_dir = tmp_path / "site"
    args = ["site", "--out", str(out_dir), "--db", str(db), "--repo", REPO, "--date", "2026-06-10"]
    code, out, err = run(args, capsys)
    assert code == 0, err
    assert out == f"site: 1 digest(s), 5 file(s) written, 0 unchanged → {out_dir}\n"
    assert (out_dir / REPO / "2026-06-10.html").is_file()
    code, out, _ = run(["site", "--out", str(out_dir), "--db", str(db)], capsys)
    assert out == f"site: 1 digest(s), 0 file(s) written, 5 unchanged → {out_dir}\n"


def test_site_without_out_or_config_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PRDIGEST_CONFIG", raising=False)
    code, _, err = run(["site", "--db", str(tmp_path / "db.sqlite3")], capsys)
    assert code == 2 and "give --out DIR" in err


def test_run_all_posts_once_and_keeps_secrets_out(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    path = write_config(tmp_path, CHANNELS)
    monkeypatch.setenv("PRD_TEST_FEISHU_SECRET", SIGNING)
    monkeypatch.setenv("PRD_TEST_SMTP_PASSWORD", PASSWORD)
    failing = {"on": True}

    def respond(request: Received) -> tuple[int, dict[str, str], bytes]:
        if failing["on"]:  # a service that echoes the URL it was called on
            return 500, {}, f"bad request to {request.path}".encode()
        return 200, {}, b'{"code":0}'

    with receiver(responder=respond) as service:
        monkeypatch.setenv("PRD_TEST_FEISHU_URL", f"{service.url}/hook/{TOKEN}")
        args = ["run-all", "--config", str(path), "--date", "2026-06-10"]
        code1, out1, err1 = run(args, capsys)
        failing["on"] = False
        code2, out2, err2 = run(args, capsys)
        code3, out3, err3 = run(args, capsys)
    assert code1 == 10
    assert "  FAILED        team: vllm-project/vllm 2026-06-10: channel 'team': HTTP 500: " in out1
    assert "[secure]" in out1  # the echoed URL was masked
    assert "  FAILED        mail: " in out1  # nobody listens on port 1
    assert "Error: 2 problem(s) in this run (see above)" in err1
    assert "  sent          team: vllm-project/vllm 2026-06-10 (after 1 failed attempt(s))" in out2
    assert code2 == 10  # mail still fails, and says so
    assert "already sent  team" in out3 and code3 == 10
    assert len(service.requests) == 2  # one failure, one success, then nothing
    everything = out1 + err1 + out2 + err2 + out3 + err3 + caplog.text
    stored = (tmp_path / "state.sqlite3").read_bytes()
    site_files = b"".join(p.read_bytes() for p in (tmp_path / "public").rglob("*") if p.is_file())
    for secret in (TOKEN, SIGNING, PASSWORD):
        assert secret not in everything
        assert secret.encode() not in stored and secret.encode() not in site_files


def test_publish_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_config(tmp_path, CHANNELS)
    monkeypatch.setenv("PRD_TEST_FEISHU_SECRET", SIGNING)
    assert (
        run(["run-all", "--config", str(path), "--date", "2026-06-10", "--no-publish"], capsys)[0]
        == 0
    )
    with receiver() as service:
        monkeypatch.setenv("PRD_TEST_FEISHU_URL", f"{service.url}/hook")
        code, out, err = run(["publish", "--to", "team", "--config", str(path)], capsys)
        assert (code, out) == (0, "  sent          team: vllm-project/vllm 2026-06-10\n"), err
        code, out, _ = run(["publish", "--to", "team", "--config", str(path)], capsys)
        assert out == "  already sent  team: vllm-project/vllm 2026-06-10\n"
        code, out, _ = run(["publish", "--to", "team", "--force", "--config", str(path)], capsys)
        assert code == 0 and "sent" in out
        code, _, err = run(["publish", "--to", "nope", "--config", str(path)], capsys)
        assert code == 2 and "--to: no channel named 'nope' (configured: mail, team)" in err
        code, _, err = run(
            ["publish", "--to", "team", "--date", "2026-01-01", "--config", str(path)], capsys
        )
        assert code == 5
        assert err == (
            "Error: no stored digest of vllm-project/vllm (zh) for 2026-01-01 in the store "
            f"{tmp_path / 'state.sqlite3'} (make one with `prdigest run-all`, `prdigest run` "
            "or `prdigest digest`)\n"
        )
    assert len(service.requests) == 2


@pytest.mark.slow
def test_serve_smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "db.sqlite3"
    write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    run(["import", str(tmp_path / "prs.jsonl"), "--db", str(db)], capsys)
    args = [
        "site",
        "--out",
        str(tmp_path / "site"),
        "--db",
        str(db),
        "--repo",
        REPO,
        "--date",
        "2026-06-11",
    ]
    assert run(args, capsys)[0] == 0
    process = subprocess.Popen(
        [sys.executable, "-m", "prdigest", "serve", "--dir", str(tmp_path / "site"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        assert match, line
        index = httpx.get(match.group(1), timeout=60)
        assert index.status_code == 200 and REPO in index.text
        page = httpx.get(match.group(1) + f"{REPO}/2026-06-11.html", timeout=60)
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert page.headers["x-content-type-options"] == "nosniff"
        assert httpx.get(match.group(1) + "missing.html", timeout=60).status_code == 404
    finally:
        process.send_signal(
            signal.SIGTERM
        )  # SIGINT is ignored where the suite runs in the background
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:  # never leave a server behind for later tests
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    assert process.returncode == 0


def test_serve_without_a_site_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["serve", "--dir", str(tmp_path), "--port", "0"], capsys)
    assert code == 2
    assert err == (
        f"Error: --dir: no site in {tmp_path} (build one with `prdigest site --out {tmp_path}`)\n"
    )


def test_html_and_atom_formats_of_the_digest_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db.sqlite3"
    write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    run(["import", str(tmp_path / "prs.jsonl"), "--db", str(db)], capsys)
    base = ["digest", "--repo", REPO, "--date", "2026-06-10", "--db", str(db)]
    code, out, _ = run([*base, "--format", "html"], capsys)
    assert code == 0 and out.startswith("<!doctype html>")
    code, out, _ = run([*base, "--format", "atom"], capsys)
    assert code == 0 and out.startswith("<?xml version='1.0' encoding='UTF-8'?>")


def test_run_all_reads_a_git_clone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``source = "git"`` in the config goes through the git source the CLI wires in."""
    from git_helpers import ScriptedRepo

    clone = ScriptedRepo(tmp_path / "widgets")
    clone.write("src/app.py", "def parse(x):\n    return x\n")
    clone.commit("Initial commit", "2026-06-09T12:00:00+00:00")
    clone.write("src/app.py", "def parse(x):\n    return x.strip()\n")
    clone.commit(
        "[Bugfix] Strip input in parse (#7)\n\nFixes whitespace.", "2026-06-10T03:00:00+00:00"
    )
    path = tmp_path / "prdigest.toml"
    path.write_text(
        f'db = "state.sqlite3"\n[site]\ndir = "public"\n\n[[repos]]\nname = "acme/widgets"\n'
        f'source = "git"\npath = "{clone.path}"\n',
        encoding="utf-8",
    )
    code, _, err = run(["run-all", "--config", str(path), "--date", "2026-06-10"], capsys)
    assert code == 0, err
    pages = list((tmp_path / "public").rglob("*.html"))
    assert any("Strip input in parse" in page.read_text(encoding="utf-8") for page in pages)

"""`prdigest init` writes a starter config that `config check` accepts; `publish --dry-run`
prints the exact payload; `publish --test` sends a short hello."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_support import run
from publish_support import REPO, fixture_record_data, receiver, write_jsonl


def test_init_writes_a_config_that_config_check_accepts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "prdigest.toml"
    code, out, err = run(capsys, "init", "-c", str(path))
    assert (code, out) == (0, "")
    assert (
        err == f"wrote {path}; next: `prdigest config check -c {path}`, then `prdigest run-all`\n"
    )
    text = path.read_text(encoding="utf-8")
    assert 'name = "vllm-project/vllm"' in text and 'source = "github"' in text
    assert "# [channels.team]" in text and "webhook_env" in text
    code, out, err = run(capsys, "config", "check", "-c", str(path))
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"{path}: OK"


def test_init_never_overwrites_without_force(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text("# mine\n", encoding="utf-8")
    code, _, err = run(capsys, "init", "-c", str(path))
    assert (code, err) == (2, f"Error: {path}: already exists; give --force to overwrite it\n")
    assert path.read_text(encoding="utf-8") == "# mine\n"
    code, _, _ = run(capsys, "init", "-c", str(path), "--force")
    assert code == 0 and "[[repos]]" in path.read_text(encoding="utf-8")


def test_init_for_a_clone_and_its_channel_once_uncommented(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "ascend")], check=True)
    path = tmp_path / "prdigest.toml"
    run(capsys, "init", "-c", str(path), "-r", "vllm-project/vllm-ascend", "--git", "ascend")
    text = path.read_text(encoding="utf-8")
    assert 'source = "git"' in text.splitlines()[text.splitlines().index('path = "ascend"') - 1]
    code, out, _ = run(capsys, "config", "check", "-c", str(path))
    assert code == 0 and "repo vllm-project/vllm-ascend: git" in out
    lines = text.splitlines()
    start = lines.index("# [channels.team]")
    for n in range(start, start + 3):  # the table, its type and its webhook variable
        lines[n] = lines[n].removeprefix("# ")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.delenv("PRDIGEST_FEISHU_WEBHOOK", raising=False)
    code, _, err = run(capsys, "config", "check", "-c", str(path))
    assert code == 2
    assert "channels.team.webhook_env: environment variable PRDIGEST_FEISHU_WEBHOOK" in err
    monkeypatch.setenv("PRDIGEST_FEISHU_WEBHOOK", "https://open.feishu.cn/hook/x")
    code, out, _ = run(capsys, "config", "check", "-c", str(path))
    assert code == 0 and "channel team: feishu" in out


CONFIG = """
db = "state.sqlite3"
[site]
dir = "public"
base_url = "https://digests.example.org/"

[[repos]]
name = "{repo}"
path = "prs.jsonl"

[channels.team]
type = "feishu"
webhook_env = "PRD_TEST_FEISHU_URL"
secret_env = "PRD_TEST_FEISHU_SECRET"

[channels.mail]
type = "email"
host = "127.0.0.1"
port = 1
security = "none"
from = "bot@example.org"
to = ["team@example.org"]
"""


@pytest.fixture
def config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    path = tmp_path / "prdigest.toml"
    path.write_text(CONFIG.format(repo=REPO), encoding="utf-8")
    code, _, err = run(capsys, "run-all", "-c", str(path), "-d", "2026-06-10", "--no-publish")
    assert code == 0, err
    return path


def test_dry_run_prints_exactly_what_publish_sends(
    capsys: pytest.CaptureFixture[str], config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PRD_TEST_FEISHU_URL", raising=False)  # a dry run needs no secret
    code, out, err = run(capsys, "publish", "--to", "team", "-c", str(config), "--dry-run")
    assert (code, err) == (0, "")
    header, payload = out.split("\n", 1)
    assert header == f"--- team (feishu, signed when sent): {REPO} 2026-06-10"
    printed = json.loads(payload)
    monkeypatch.setenv("PRD_TEST_FEISHU_SECRET", "SECsign")
    with receiver() as service:
        monkeypatch.setenv("PRD_TEST_FEISHU_URL", service.url + "/hook")
        code, out, _ = run(capsys, "publish", "--to", "team", "-c", str(config))
        assert code == 0
    sent = service.requests[0].json()
    assert set(sent) - set(printed) == {"timestamp", "sign"}
    assert {k: v for k, v in sent.items() if k not in ("timestamp", "sign")} == printed
    code, out, _ = run(capsys, "publish", "--to", "team", "-c", str(config), "--dry-run")
    assert out.split("\n", 1)[0].endswith("[already sent: publish skips it unless --force]")


def test_dry_run_of_e_mail_prints_the_message(
    capsys: pytest.CaptureFixture[str], config: Path
) -> None:
    code, out, _ = run(capsys, "publish", "--to", "mail", "-c", str(config), "--dry-run")
    assert code == 0
    assert out.startswith(f"--- mail (email): {REPO} 2026-06-10\n")
    assert "\nTo: team@example.org\n" in out and "multipart/alternative" in out


def test_test_sends_a_short_hello_and_logs_nothing(
    capsys: pytest.CaptureFixture[str], config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRD_TEST_FEISHU_SECRET", "SECsign")
    with receiver() as service:
        monkeypatch.setenv("PRD_TEST_FEISHU_URL", service.url + "/hook")
        code, out, err = run(capsys, "publish", "--to", "team", "-c", str(config), "--test")
        assert (code, out, err) == (0, "  sent test     team\n", "")
        card = service.requests[0].json()["card"]
        assert card["header"]["title"]["content"] == "prdigest 测试消息"
        body = json.dumps(card["elements"], ensure_ascii=False)
        assert f"频道 team 已接通：{REPO} 的 PR 阅读摘要会发到这里。" in body
        assert "没有合并" not in body  # a hello, not an empty digest
        code, out, _ = run(capsys, "publish", "--to", "team", "-c", str(config))
        assert out == f"  sent          team: {REPO} 2026-06-10\n"  # the hello was not logged
    assert len(service.requests) == 2


def test_a_failed_test_message_is_exit_10(
    capsys: pytest.CaptureFixture[str], config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRD_TEST_FEISHU_SECRET", "SECsign")
    with receiver(answer=b'{"code":19021,"msg":"sign match fail"}') as service:
        monkeypatch.setenv("PRD_TEST_FEISHU_URL", service.url + "/hook")
        code, out, err = run(capsys, "publish", "--to", "team", "-c", str(config), "--test")
    assert code == 10
    assert (
        out == "  FAILED        team: channel 'team': feishu answered code 19021: sign match fail\n"
    )
    assert err.endswith("Error: 1 test message(s) failed\n")

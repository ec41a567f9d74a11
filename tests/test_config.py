"""prdigest.toml: validation messages name the key, secrets stay out, every key is documented."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from prdigest.core import errors
from prdigest.core.errors import ConfigError, PrdigestError
from prdigest.core.secrets import Secret
from prdigest.pipeline.config import (
    ConfigFileError,
    config_keys,
    load_config,
    missing_env,
    parse_config,
)
from prdigest.publish.channels.email import EmailConfig

DOCS = Path(__file__).resolve().parent.parent / "docs" / "publish.md"
EXAMPLE = """
db = "state/prdigest.sqlite3"

[site]
dir = "public"
base_url = "https://team.example.io/digests"

[[repos]]
name = "vllm-project/vllm"
path = "data/vllm.jsonl"
top = 6

[channels.team]
type = "feishu"
webhook_env = "FEISHU_WEBHOOK"
secret_env = "FEISHU_SECRET"

[channels.mail]
type = "email"
host = "smtp.example.org"
username = "bot"
password_env = "SMTP_PASSWORD"
from = "prdigest <bot@example.org>"
to = ["team@example.org"]
"""


def problems(text: str) -> dict[str, str]:
    with pytest.raises(ConfigFileError) as caught:
        parse_config(text)
    return dict(caught.value.problems)


def test_example_parses_and_resolves_paths(tmp_path: Path) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text(EXAMPLE, encoding="utf-8")
    config = load_config(path)
    assert config.db == str(tmp_path / "state/prdigest.sqlite3")
    assert config.site.dir == tmp_path / "public"
    assert config.site.base_url == "https://team.example.io/digests/"
    repo = config.repos[0]
    assert repo.path == tmp_path / "data/vllm.jsonl"
    assert (repo.timezone, repo.window, repo.writer, repo.source, repo.top) == (
        "Asia/Shanghai",
        "day",
        "template",
        "jsonl",
        6,
    )
    assert config.channels_for(repo) == ["team", "mail"]
    mail = config.channels["mail"]
    assert isinstance(mail, EmailConfig) and mail.effective_port == 587


@pytest.mark.parametrize(
    ("snippet", "key", "message"),
    [
        ('[[repos]]\nname = "x"\npath = "a"', "repos[0].name (x)", "must be owner/name"),
        (
            '[[repos]]\nname = "a/b"\npath = "a"\ntimezone = "Mars/Base"',
            "repos[0].timezone (a/b)",
            "unknown time zone 'Mars/Base'",
        ),
        ('[[repos]]\nname = "a/b"', "repos[0].path (a/b)", "source 'jsonl' needs 'path'"),
        (
            '[[repos]]\nname = "a/b"\npath = "a"\ntop = -1',
            "repos[0].top (a/b)",
            "must be at least 0",
        ),
        (
            '[[repos]]\nname = "a/b"\npath = "a"\nwriter = "llm"',
            "repos[0].model (a/b)",
            "needs 'model'",
        ),
        ('[[repos]]\nname = "a/b"\npath = "a"\ncolour = 1', "repos[0].colour (a/b)", "unknown key"),
        ("", "repos", "required key is missing"),
        (
            '[[repos]]\nname = "a/b"\npath = "a"\nchannels = ["nope"]',
            "repos[0].channels (a/b)",
            "no channel named 'nope'",
        ),
        (
            '[[repos]]\nname = "a/b"\npath = "a"\n[site]\nbase_url = "ftp://x"',
            "site.base_url",
            "must be an http(s) URL",
        ),
    ],
)
def test_problems_name_their_key(snippet: str, key: str, message: str) -> None:
    found = problems(snippet)
    assert key in found, found
    assert message in found[key]


REPO = '[[repos]]\nname = "a/b"\npath = "a"\n'


@pytest.mark.parametrize(
    ("channel", "key", "message"),
    [
        (
            'type = "feishu"\nwebhook = "https://open.feishu.cn/x"',
            "channels.t.webhook",
            "webhook_env",
        ),
        (
            'type = "dingtalk"\nwebhook_env = "X"\nsecret = "SEC1"',
            "channels.t.secret",
            "secret_env",
        ),
        (
            'type = "email"\nhost = "h"\nfrom = "a@b.c"\nto = ["d@e.f"]\npassword = "pw"',
            "channels.t.password",
            "password_env",
        ),
        ('type = "slack"\nwebhook_env = "not a name"', "channels.t.webhook_env", "NAME of an"),
        ('type = "wecom"', "channels.t.webhook_env", "required key is missing"),
        ('type = "teams"\nwebhook_env = "X"', "channels.t", "unknown channel type"),
        ('webhook_env = "X"', "channels.t", "'type' is missing"),
        (
            'type = "email"\nhost = "h"\nfrom = "nobody"\nto = ["d@e.f"]',
            "channels.t.from",
            "not an e-mail",
        ),
        (
            'type = "email"\nhost = "h"\nfrom = "a@b.c"\nto = ["d@e.f"]\npassword_env = "P"',
            "channels.t.username",
            "needs 'username'",
        ),
        ('type = "email"\nhost = "h"\nfrom = "a@b.c"\nto = []', "channels.t.to", "at least 1"),
    ],
)
def test_channel_problems_name_their_key(channel: str, key: str, message: str) -> None:
    found = problems(REPO + "[channels.t]\n" + channel)
    assert key in found, found
    assert message in found[key]


def test_secret_values_never_appear_in_problems() -> None:
    found = problems(
        REPO + '[channels.t]\ntype = "slack"\nwebhook = "https://hooks.slack.com/T/SEKRIT"'
    )
    assert "SEKRIT" not in str(found)


def test_all_problems_are_reported_at_once() -> None:
    with pytest.raises(ConfigFileError) as caught:
        parse_config('[[repos]]\nname = "x"\ntimezone = "Nowhere"\n[site]\nlang = "fr"')
    assert caught.value.problems == [
        ("site.lang", "unknown language 'fr' (known: zh, en)"),
        (
            "repos[0].name (x)",
            "must be owner/name, got 'x' (the owner: letters, digits, '-'; the name: also "
            "'.', '_', but not '.' or '..')",
        ),
        ("repos[0].timezone (x)", "unknown time zone 'Nowhere'"),
        ("repos[0].path (x)", "source 'jsonl' needs 'path' (a JSONL file)"),  # a later round
    ]
    assert str(caught.value).startswith("prdigest.toml: 4 problems\n  site.lang: ")


def test_bad_toml_is_a_config_error() -> None:
    assert "not valid TOML" in problems("[[repos]\n")["(file)"]


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.toml")


def test_missing_env_lists_unset_variables() -> None:
    config = parse_config(EXAMPLE)
    environ = {"FEISHU_WEBHOOK": "https://x", "FEISHU_SECRET": ""}
    assert missing_env(config, environ) == [
        ("channels.team.secret_env", "FEISHU_SECRET"),
        ("channels.mail.password_env", "SMTP_PASSWORD"),
    ]


def test_secret_is_masked() -> None:
    secret = Secret("hunter2")
    assert "hunter2" not in repr(secret) and "hunter2" not in str(secret)
    assert "hunter2" not in f"{secret} {[secret]} {secret!r}"
    assert secret.reveal() == "hunter2" and secret == Secret("hunter2")


def test_report_window_is_yesterday_in_the_repos_zone() -> None:
    config = parse_config(REPO + 'timezone = "Asia/Shanghai"\n')
    now = datetime(2026, 6, 11, 0, 30, tzinfo=UTC)  # 08:30 in Shanghai
    window = config.repos[0].window_for(None, now)
    assert window.label == "2026-06-10"
    assert window.since == datetime(2026, 6, 9, 16, tzinfo=UTC)
    assert config.repos[0].window_for(date(2026, 6, 1), now).label == "2026-06-01"
    weekly = parse_config(REPO + 'window = "week"\n').repos[0]
    week = weekly.window_for(date(2026, 6, 10), now)
    assert week.label == "2026-06-04..2026-06-10"
    assert (week.until - week.since).days == 7


def test_every_config_key_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    documented = set(re.findall(r"`([a-z_.*\[\]]+)`", text))
    missing = [key for key in config_keys() if key not in documented]
    assert missing == [], f"document these keys in docs/publish.md: {missing}"


def test_every_error_class_is_in_the_hierarchy_docstring() -> None:
    classes = [
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type) and issubclass(obj, PrdigestError)
    ]
    doc = errors.__doc__ or ""
    assert all(cls.__name__ in doc for cls in classes if cls.__module__ == errors.__name__)

"""`config check` reports every problem of a file at once, in plain words, each with its key
path and repository, with did-you-mean for unknown keys, and checks paths, URLs and variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.pipeline.config import parse_config
from prdigest.pipeline.configcheck import check_file, collect
from prdigest.store import open_store

from cli_support import run

# Problems in every layer pydantic would report in a separate round: types, values, keys, a
# check across keys of a table, references between tables.
EVERYTHING_WRONG = """
sitee = 1

[site]
feed_entries = "many"

[[repos]]
name = "vllm-project/vllm"
sourse = "github"
channels = "team"
top = 500

[[repos]]
name = "vllm-project/vllm-ascend"
source = "git"
timezone = "Mars/Olympus"
channels = ["team", "tema"]

[channels.team]
type = "slack"
webhok_env = "PRD_SLACK"
"""


def test_every_problem_at_once_with_keys_repositories_and_suggestions() -> None:
    import tomllib

    checked = collect(tomllib.loads(EVERYTHING_WRONG))
    assert checked.problems == [
        ("site.feed_entries", "must be a whole number"),
        ("repos[0].top (vllm-project/vllm)", "must be at most 200"),
        ("repos[0].channels (vllm-project/vllm)", 'must be a list, e.g. ["a", "b"]'),
        ("repos[0].sourse (vllm-project/vllm)", "unknown key; did you mean 'source'?"),
        ("repos[1].timezone (vllm-project/vllm-ascend)", "unknown time zone 'Mars/Olympus'"),
        ("channels.team.webhok_env", "unknown key; did you mean 'webhook_env'?"),
        ("sitee", "unknown key; did you mean 'site'?"),
        # found in later rounds, once the keys above are set aside or read as meant
        ("repos[1].path (vllm-project/vllm-ascend)", "source 'git' needs 'path' (a local clone)"),
        ("repos[1].channels (vllm-project/vllm-ascend)", "no channel named 'tema' (known: team)"),
    ]


def test_references_are_checked_even_when_the_tables_have_problems() -> None:
    import tomllib

    text = EVERYTHING_WRONG.replace('source = "git"', 'source = "git"\npath = "c"')
    problems = collect(tomllib.loads(text)).problems
    assert (
        "repos[1].channels (vllm-project/vllm-ascend)",
        "no channel named 'tema' (known: team)",
    ) in problems
    assert not any("stand-in" in key + message for key, message in problems)


def test_run_all_reads_the_same_problems() -> None:
    from prdigest.core.errors import ConfigFileError

    with pytest.raises(ConfigFileError) as caught:
        parse_config(EVERYTHING_WRONG)
    assert len(caught.value.problems) == 9


def test_unknown_keys_without_a_close_name_list_the_known_ones() -> None:
    import tomllib

    problems = collect(tomllib.loads('[site]\nflavour = 1\n[[repos]]\nname = "a/b"')).problems
    assert problems[0] == (
        "site.flavour",
        "unknown key (known: dir, base_url, title, lang, feed_entries)",
    )


def test_check_file_looks_at_paths_urls_and_variables(tmp_path: Path) -> None:
    (tmp_path / "not-a-clone").mkdir()
    (tmp_path / "public").write_text("a file where the site should go", encoding="utf-8")
    path = tmp_path / "prdigest.toml"
    path.write_text(
        """
[site]
dir = "public"

[[repos]]
name = "acme/one"
path = "missing.jsonl"

[[repos]]
name = "acme/two"
source = "git"
path = "not-a-clone"
preset = "nope.toml"

[channels.team]
type = "feishu"
webhook_env = "PRD_FEISHU"
secret_env = "PRD_FEISHU_SECRET"

[channels.chat]
type = "slack"
webhook_env = "PRD_SLACK"
""",
        encoding="utf-8",
    )
    env = {"PRD_FEISHU": "open.feishu.cn/hook/SECRETPART", "PRD_SLACK": "https://hooks.x/y"}
    found = check_file(path, env)
    assert found.config is None
    assert found.problems == [
        (
            "channels.team.webhook_env",
            "environment variable PRD_FEISHU does not hold an http(s) URL",
        ),
        ("channels.team.secret_env", "environment variable PRD_FEISHU_SECRET is not set"),
        ("repos[0].path (acme/one)", f"no such file: {tmp_path / 'missing.jsonl'}"),
        ("repos[1].path (acme/two)", f"{tmp_path / 'not-a-clone'}: not a git repository"),
        ("repos[1].preset (acme/two)", f"no such file: {tmp_path / 'nope.toml'}"),
        ("site.dir", f"{tmp_path / 'public'} exists and is not a directory"),
    ]
    assert "SECRETPART" not in str(found.problems)
    assert found.warnings == [
        "site.base_url: not set; messages cannot link to the full digest page"
    ]


def test_config_check_ok_shows_the_store(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "prs.jsonl").write_text("", encoding="utf-8")
    path = tmp_path / "prdigest.toml"
    path.write_text('db = "state.sqlite3"\n[[repos]]\nname = "a/b"\npath = "prs.jsonl"\n', "utf-8")
    code, out, err = run(capsys, "config", "check", "-c", str(path))
    assert (code, err) == (0, "")
    assert out == (
        f"{path}: OK\n"
        "  repo a/b: jsonl → template writer, day in Asia/Shanghai, top 8, zh → no channels\n"
        f"  site: {tmp_path / 'site'} (no base_url)\n"
        f"  store: {tmp_path / 'state.sqlite3'} (the config's db; --db takes precedence)\n"
    )
    assert not (tmp_path / "state.sqlite3").exists()  # checking opens no store
    path.write_text('[[repos]]\nname = "a/b"\npath = "prs.jsonl"\n', encoding="utf-8")
    monkeypatch.setenv("PRDIGEST_DB", str(tmp_path / "env.sqlite3"))
    _, out, _ = run(capsys, "config", "check", "-c", str(path))
    assert out.endswith(
        f"  store: {tmp_path / 'env.sqlite3'} (from $PRDIGEST_DB; --db takes precedence)\n"
    )


def test_config_check_reports_all_problems_in_one_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text(EVERYTHING_WRONG, encoding="utf-8")
    code, out, err = run(capsys, "config", "check", "-c", str(path))
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == f"Error: {path}: 9 problems"
    assert lines[4] == "  repos[0].sourse (vllm-project/vllm): unknown key; did you mean 'source'?"


def test_run_all_names_the_config_key_of_a_missing_clone(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "prdigest.toml"
    path.write_text(
        '[[repos]]\nname = "acme/widgets"\nsource = "git"\npath = "gone"\n', encoding="utf-8"
    )
    with open_store(tmp_path / "db.sqlite3"):
        pass
    code, out, _ = run(
        capsys,
        "run-all",
        "-c",
        str(path),
        "-d",
        "2026-06-10",
        "--db",
        str(tmp_path / "db.sqlite3"),
        "--no-publish",
    )
    assert code == 10
    assert out.splitlines()[0] == (
        f"acme/widgets 2026-06-10: FAILED: repos[0].path (acme/widgets): {tmp_path / 'gone'} is not a directory"
    )
    assert "--git" not in out

"""run-all: sync → digest → site → publish, idempotent per day, failures retried and reported."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from prdigest.core.errors import ConfigError, ConfigFileError
from prdigest.core.secrets import Secret
from prdigest.pipeline import registry
from prdigest.pipeline.config import Config, parse_config
from prdigest.pipeline.registry import SourceEntry, WriterSpec, make_writer
from prdigest.pipeline.run_all import publish_stored, run_all
from prdigest.publish.channels import Channel, make_channel
from prdigest.sources.base import Details, Item, NoDetails
from prdigest.store import Store, open_store
from prdigest.write.llm import LLMWriter
from prdigest.write.template import TemplateWriter

from publish_support import REPO, Received, fixture_record_data, receiver, write_jsonl

NOW = datetime(2026, 6, 11, 0, 30, tzinfo=UTC)  # 08:30 in Shanghai: yesterday is 2026-06-10


def make_config(tmp_path: Path, extra: str = "", channels: str = "") -> Config:
    write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    text = f"""
[site]
dir = "public"
base_url = "https://digests.example.org/"

[[repos]]
name = "{REPO}"
path = "prs.jsonl"
{extra}
{channels}
"""
    return parse_config(text, base=tmp_path)


FEISHU = """
[channels.team]
type = "feishu"
webhook_env = "FEISHU_URL"
secret_env = "FEISHU_SECRET"
"""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(tmp_path / "db.sqlite3") as opened:
        yield opened


def channels_for(config: Config, url: str, client: httpx.Client) -> dict[str, Channel]:
    secrets = {"webhook_env": Secret(url + "/hook"), "secret_env": Secret("SECx")}
    return {
        name: make_channel(name, channel, secrets, client=client)
        for name, channel in config.channels.items()
    }


def test_run_all_twice_posts_once(tmp_path: Path, store: Store) -> None:
    config = make_config(tmp_path, channels=FEISHU)
    with receiver() as service, httpx.Client() as client:
        channels = channels_for(config, service.url, client)
        first = run_all(store, config, channels=channels, now=NOW)
        second = run_all(store, config, channels=channels, now=NOW)
    assert first.ok and second.ok
    assert len(service.requests) == 1  # posted once
    [run1], [run2] = first.repos, second.repos
    assert run1.label == "2026-06-10" and run1.digest is not None and run1.digest.changed
    assert run1.sync is not None and run1.sync.stored.new == 35
    assert [d.status for d in run1.deliveries] == ["sent"]
    assert run2.sync is not None and run2.sync.stored.unchanged == 35
    assert run2.digest is not None and not run2.digest.changed
    assert [d.status for d in run2.deliveries] == ["already_sent"]
    assert first.site is not None and len(first.site.written) == 5
    assert second.site is not None and second.site.written == []
    card = service.requests[0].json()["card"]
    assert card["header"]["title"]["content"] == f"{REPO} · 2026-06-10 PR 阅读摘要"


def test_failed_delivery_is_reported_and_retried_next_run(tmp_path: Path, store: Store) -> None:
    config = make_config(tmp_path, channels=FEISHU)
    status = {"code": 500}

    def respond(request: Received) -> tuple[int, dict[str, str], bytes]:
        ok = status["code"] == 200
        return status["code"], {}, b'{"code":0}' if ok else b"internal error"

    with receiver(responder=respond) as service, httpx.Client() as client:
        channels = channels_for(config, service.url, client)
        first = run_all(store, config, channels=channels, now=NOW)
        status["code"] = 200
        second = run_all(store, config, channels=channels, now=NOW)
        third = run_all(store, config, channels=channels, now=NOW)
    [failed] = first.repos[0].deliveries
    assert not first.ok
    assert (failed.status, failed.attempts) == ("failed", 1)
    assert failed.error == "channel 'team': HTTP 500: internal error"
    [retried] = second.repos[0].deliveries
    assert second.ok
    assert (retried.status, retried.attempts, retried.retry) == ("sent", 2, True)
    assert [d.status for d in third.repos[0].deliveries] == ["already_sent"]
    assert len(service.requests) == 2
    [logged] = store.deliveries.query()
    assert (logged.status, logged.attempts, logged.last_error) == ("sent", 2, None)


def test_every_failure_is_retried_until_it_goes_through(tmp_path: Path, store: Store) -> None:
    config = make_config(tmp_path, channels=FEISHU)
    status = {"code": 500}

    def respond(request: Received) -> tuple[int, dict[str, str], bytes]:
        return status["code"], {}, b'{"code":0}'

    with receiver(responder=respond) as service, httpx.Client() as client:
        channels = channels_for(config, service.url, client)
        run_all(store, config, channels=channels, now=NOW)
        run_all(store, config, channels=channels, now=NOW.replace(day=12))
        assert {r.status for r in store.deliveries.query()} == {"failed"}
        status["code"] = 200
        report = run_all(store, config, channels=channels, now=NOW.replace(day=12))
        assert report.ok
        assert {(r.label, r.status) for r in store.deliveries.query()} == {
            ("2026-06-10", "sent"),
            ("2026-06-11", "sent"),
        }
        assert [d.label for d in report.retried] == ["2026-06-10"]
        quiet = run_all(store, config, channels=channels, now=NOW.replace(day=12))
    assert quiet.ok and quiet.retried == []
    assert len(service.requests) == 5  # day 1 fails; day 2 and the retry fail; both go through


def test_missing_secret_fails_the_delivery_visibly(tmp_path: Path, store: Store) -> None:
    config = make_config(tmp_path, channels=FEISHU)
    with httpx.Client() as client:
        channels = {"team": make_channel("team", config.channels["team"], {}, client=client)}
        report = run_all(store, config, channels=channels, now=NOW)
    [outcome] = report.repos[0].deliveries
    assert outcome.status == "failed"
    assert outcome.error == (
        "channel 'team': environment variable not set: webhook_env (FEISHU_URL), "
        "secret_env (FEISHU_SECRET)"
    )


def test_bad_lines_are_reported_and_good_ones_used(tmp_path: Path, store: Store) -> None:
    config = make_config(tmp_path)
    with (tmp_path / "prs.jsonl").open("a", encoding="utf-8") as out:
        out.write("{not json\n")
    report = run_all(store, config, channels={}, now=NOW)
    [run] = report.repos
    assert run.sync is not None and run.sync.stored.new == 35
    assert len(run.sync.problems) == 1 and "prs.jsonl:36: not valid JSON" in run.sync.problems[0]
    assert run.digest is not None and run.digest.total > 0
    assert not report.ok  # reported, so a scheduled run does not look clean


def test_a_source_without_credentials_fails_its_repository_only(
    tmp_path: Path, store: Store
) -> None:
    config = make_config(
        tmp_path,
        extra='\n[[repos]]\nname = "other/repo"\nsource = "github"\n',
    )
    report = run_all(store, config, channels={}, env={}, now=NOW)
    first, second = report.repos
    assert first.digest is not None and first.error is None
    assert second.error is not None and second.error.startswith("no GitHub token")
    assert report.site is not None and report.site.digests == 1


def test_an_unknown_source_or_writer_is_a_config_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="unknown source 'svn'"):
        make_config(tmp_path, extra='source = "svn"')
    with pytest.raises(ConfigFileError, match="unknown writer 'gpt'"):
        make_config(tmp_path, extra='writer = "gpt"')


def test_writers_come_from_the_registry_with_the_given_environment() -> None:
    assert isinstance(make_writer(WriterSpec("template"), {}), TemplateWriter)
    env = {"PRDIGEST_LLM_BASE_URL": "http://127.0.0.1:9/v1", "PRDIGEST_LLM_API_KEY": "k-1"}
    writer = make_writer(WriterSpec("llm", model="qwen-max"), env)
    assert isinstance(writer, LLMWriter)
    assert writer.settings.base_url == "http://127.0.0.1:9/v1"
    assert writer.settings.model == "qwen-max"
    assert writer.settings.api_key.get_secret_value() == "k-1"


class _NoPRs:
    name: ClassVar[str] = "git"
    flush_every = 200
    yields_to_others = True

    def __init__(self, repo: str) -> None:
        self.repo = repo

    def read(self, window: object) -> Iterator[Item]:
        return iter(())

    def details(self) -> Details:
        return NoDetails()

    def close(self) -> None:
        return None


def test_the_registry_is_the_integration_point(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(
        tmp_path, extra='\n[[repos]]\nname = "other/repo"\nsource = "git"\npath = "."\n'
    )
    calls: list[Any] = []

    @contextmanager
    def fake_git(spec: Any, env: Any, store: Any, progress: Any) -> Iterator[_NoPRs]:
        calls.append(spec)
        yield _NoPRs(spec.repo)

    sources = {**registry.SOURCES, "git": SourceEntry(fake_git, path="a local clone")}
    monkeypatch.setattr(registry, "SOURCES", sources)
    report = run_all(store, config, channels={}, now=NOW, only="other/repo")
    assert [c.repo for c in calls] == ["other/repo"] and report.repos[0].error is None
    assert report.repos[0].digest is not None and report.repos[0].digest.total == 0


def test_only_an_unknown_repo_is_a_config_error(tmp_path: Path, store: Store) -> None:
    config = make_config(tmp_path)
    with pytest.raises(ConfigError, match="'nope/x' is not configured"):
        run_all(store, config, channels={}, now=NOW, only="nope/x")


def test_publish_stored_uses_the_log_and_force(tmp_path: Path, store: Store) -> None:
    config = make_config(tmp_path, channels=FEISHU)
    run_all(store, config, channels={}, now=NOW, publish=False)
    with receiver() as service, httpx.Client() as client:
        channels = channels_for(config, service.url, client)
        assert [o.status for o in publish_stored(store, config, channels, ["team"])] == ["sent"]
        assert [o.status for o in publish_stored(store, config, channels, ["team"])] == [
            "already_sent"
        ]
        forced = publish_stored(store, config, channels, ["team"], force=True)
        assert [o.status for o in forced] == ["sent"]
        with pytest.raises(ConfigError, match="no channel named 'x'"):
            publish_stored(store, config, channels, ["x"])
    assert len(service.requests) == 2


def test_day_option_overrides_yesterday(tmp_path: Path, store: Store) -> None:
    config = make_config(tmp_path)
    report = run_all(store, config, channels={}, now=NOW, day=date(2026, 6, 11))
    assert report.repos[0].label == "2026-06-11"

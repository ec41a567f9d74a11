"""The batch LLM engine end to end: export the requests, answer them as a batch endpoint would
(from the fake model's replies), import the results, and get what a live run gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prdigest.store import open_store
from prdigest.write.llm.batch import request_id
from test_cli_llm import _import, cli, llm_env
from test_llm_writer import good

from fakellm import Call, FakeLLM, Reply, Scripted, completion_body, entry_json
from llm_support import REPO

__all__ = ["llm_env"]  # the fixture, imported for its use below

DAY = ["-r", REPO, "--date", "2026-06-10"]


def _answer(lines: list[dict[str, Any]], responder: Any) -> list[dict[str, Any]]:
    """What a batch endpoint writes for an input file: the responder's reply per request."""
    out = []
    for line in lines:
        reply: Reply = responder(Call(line["body"], {}))
        body = completion_body(reply, line["body"]["model"])
        out.append(
            {
                "id": f"batch_req_{len(out)}",
                "custom_id": line["custom_id"],
                "response": {"status_code": reply.status, "request_id": "r", "body": body},
                "error": None,
            }
        )
    return out


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return path


def _digest(db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    argv = ["digest", *DAY, "--db", str(db), "--writer", "llm", "--format", "json", "--no-store"]
    return cli(argv, capsys)


def test_export_import_gives_what_a_live_run_gives(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    llm_env: None,
) -> None:
    live_db, batch_db = tmp_path / "live.sqlite3", tmp_path / "batch.sqlite3"
    _import(live_db, tmp_path, capsys)
    _import(batch_db, tmp_path, capsys)
    with FakeLLM(Scripted(good)) as fake:
        monkeypatch.setenv("PRDIGEST_LLM_BASE_URL", fake.url)
        code, live, err = _digest(live_db, capsys)
        assert code == 0, err
        live_calls = len(fake.calls)

        out = tmp_path / "batch.jsonl"
        code, said, err = cli(
            ["llm", "batch", "export", *DAY, "--db", str(batch_db), "-o", str(out)], capsys
        )
        assert code == 0, err
        lines = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
        assert len(fake.calls) == live_calls  # exporting calls no model
        assert len(lines) == live_calls  # the first requests of the live run, no more
        assert f"exported {len(lines)} request(s)" in said
        for line in lines:
            assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
            assert line["body"]["model"] == "fake-model" and "stream" not in line["body"]
            assert line["custom_id"] == request_id(line["body"])

        results = _write(tmp_path / "results.jsonl", _answer(lines, Scripted(good)))
        code, said, err = cli(
            ["llm", "batch", "import", str(results), *DAY, "--db", str(batch_db)], capsys
        )
        assert code == 0, err
        assert f"imported {len(lines)} of {len(lines)} result(s)" in said

        code, batched, err = _digest(batch_db, capsys)  # now every entry is cached
        assert code == 0, err
        assert len(fake.calls) == live_calls  # the digest after the import made no call

    def entries(raw: str) -> list[Any]:
        return sorted(json.dumps(p["entry"], sort_keys=True) for p in json.loads(raw)["prs"])

    assert entries(batched) == entries(live)  # same entries, same cache keys


def test_a_failing_reply_is_repaired_in_a_second_round(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    llm_env: None,
) -> None:
    db = tmp_path / "b.sqlite3"
    _import(db, tmp_path, capsys)
    out = tmp_path / "batch.jsonl"
    code, _, err = cli(["llm", "batch", "export", *DAY, "--db", str(db), "-o", str(out)], capsys)
    assert code == 0, err
    lines = [json.loads(x) for x in out.read_text("utf-8").splitlines()]

    def first_round(call: Call) -> Reply:
        reply = good(call)
        if call.pr_number is not None and not call.is_titles:
            # a title naming a function the PR does not have fails verification
            return Reply(
                entry_json(
                    "修复 `no_such_function` 的问题", json.loads(reply.content or "{}")["paragraph"]
                )
            )
        return reply

    round1 = _write(tmp_path / "r1.jsonl", _answer(lines, first_round))
    repairs = tmp_path / "repairs.jsonl"
    code, said, err = cli(
        [
            "llm",
            "batch",
            "import",
            str(round1),
            *DAY,
            "--db",
            str(db),
            "--next-round",
            str(repairs),
        ],
        capsys,
    )
    assert code == 0, err
    asked = [json.loads(x) for x in repairs.read_text("utf-8").splitlines()]
    first_ids = {line["custom_id"] for line in lines}
    assert asked and not {a["custom_id"] for a in asked} & first_ids  # new requests: repairs
    with open_store(db) as store:
        cached_before = store.usage.totals(REPO)["calls"]
    round2 = _write(tmp_path / "r2.jsonl", _answer(asked, Scripted(good)))
    code, said, err = cli(
        [
            "llm",
            "batch",
            "import",
            str(round1),
            str(round2),
            *DAY,
            "--db",
            str(db),
            "--next-round",
            str(repairs),
        ],
        capsys,
    )
    assert code == 0, err
    assert "repaired" in said and "not answered" not in err
    with FakeLLM(Scripted(good)) as fake:
        monkeypatch.setenv("PRDIGEST_LLM_BASE_URL", fake.url)
        code, raw, err = _digest(db, capsys)
        assert code == 0, err
        assert fake.calls == []  # every entry came from the two rounds
    assert cached_before > 0
    titles = [p["entry"]["title"] for p in json.loads(raw)["prs"]]
    assert not any("no_such_function" in t for t in titles)


def test_a_bad_result_line_names_its_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], llm_env: None
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"custom_id": "x", "response": {"status_code": 200, "body": {}}}\nnot json\n')
    code, _, err = cli(
        ["llm", "batch", "import", str(bad), *DAY, "--db", str(tmp_path / "x.db")], capsys
    )
    assert code == 3 and f"{bad}:2: not a batch result line" in err

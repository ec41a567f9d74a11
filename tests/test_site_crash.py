"""A kill during ``site`` leaves no half file under a final name, and its temp files go away.

Reproduces issue 14: a kill during ``site`` left ``.tmp-*`` files in 6 of 11 tries and a rebuild
never removed them, so they were deployed. Temp files are now ``.prdigest-tmp-*`` beside their
target, and every build starts by removing those an earlier build left.
"""

from __future__ import annotations

import signal
from pathlib import Path

from prdigest.publish.site.builder import MANIFEST, TEMP_PREFIX

from kill_support import kill_server
from publish_support import REPO, fixture_record_data, write_jsonl
from reliability_report import record


def site_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_kill_at_every_site_file_replace(tmp_path: Path) -> None:
    records = write_jsonl(tmp_path / "prs.jsonl", fixture_record_data())
    db = tmp_path / "db.sqlite3"
    day_args = ["--repo", REPO, "--date", "2026-06-10"]
    with kill_server(tmp_path / "jobs") as server:
        assert (
            server.run(
                "count:" + str(tmp_path / "c0.json"), ["import", str(records), "--db", str(db)]
            ).status
            == 0
        )
        reference = tmp_path / "reference"
        done, counts = server.counts(["site", "--out", str(reference), "--db", str(db), *day_args])
        assert done.status == 0, done.stderr
        expected = site_files(reference)
        assert counts["replace"] == len(expected) >= 5
        tried = 0
        for point in range(1, counts["replace"] + 1):
            out = tmp_path / f"site{point}"
            killed = server.run(
                f"replace:{point}", ["site", "--out", str(out), "--db", str(db), *day_args]
            )
            assert killed.status == -signal.SIGKILL
            leftovers = [p for p in out.rglob(TEMP_PREFIX + "*")]
            assert len(leftovers) == 1  # the file being written, under its temp name only
            for name, data in site_files(out).items():  # every final name holds a whole file
                if not Path(name).name.startswith(TEMP_PREFIX):
                    assert data == expected[name], name
            again, _ = server.counts(["site", "--out", str(out), "--db", str(db)])
            assert again.status == 0, again.stderr
            assert "1 leftover temp file(s) removed" in again.stdout
            assert site_files(out) == expected
            assert MANIFEST in expected
            tried += 1
    record("site killed before each file rename", tried, tried)

"""Patch parsing: hunks with line numbers; broken and huge patches."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from unidiff import PatchSet

from prdigest.analyze.patches import parse_patch

PATCH = """@@ -10,4 +10,5 @@ def get_transfer_results(self):
     done = set()
-    for handle in handles:
+    for handle, req in handles:
+        self._release(handle)
         done.add(req)
     return done"""


def test_lines_carry_old_and_new_numbers() -> None:
    parsed = parse_patch("a.py", PATCH)
    assert parsed.error is None
    hunk = parsed.hunks[0]
    assert hunk.header == "def get_transfer_results(self):"
    added = [(line.new_no, line.text) for line in parsed.added()]
    assert added == [(11, "    for handle, req in handles:"), (12, "        self._release(handle)")]
    assert [(line.old_no, line.text) for line in parsed.removed()] == [
        (11, "    for handle in handles:")
    ]


def test_inconsistent_hunk_is_an_error_not_a_guess() -> None:
    parsed = parse_patch("a.py", "@@ -1,5 +1,5 @@\n-a\n+b\n")
    assert parsed.hunks == ()
    assert parsed.error


def test_text_that_is_not_a_patch_is_an_error() -> None:
    assert (
        parse_patch("a.py", "Binary files differ").error == "does not start with a hunk header '@@'"
    )


def test_no_newline_marker_is_ignored() -> None:
    parsed = parse_patch(
        "a.txt", "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file"
    )
    assert [line.text for line in parsed.added()] == ["b"]


def test_thirty_thousand_line_patch_parses() -> None:
    lines = [f"+value_{i} = {i}" for i in range(30_000)]
    parsed = parse_patch("big.py", "@@ -0,0 +1,30000 @@\n" + "\n".join(lines))
    assert parsed.error is None
    assert sum(1 for _ in parsed.added()) == 30_000


@given(st.lists(st.sampled_from(["+", "-", " "]), min_size=1, max_size=40))
def test_counts_match_hunk_header(kinds: list[str]) -> None:
    body = [f"{kind}line {i}" for i, kind in enumerate(kinds)]
    old = sum(1 for k in kinds if k in "- ")
    new = sum(1 for k in kinds if k in "+ ")
    parsed = parse_patch("f.txt", f"@@ -1,{old} +1,{new} @@\n" + "\n".join(body))
    assert parsed.error is None
    assert sum(1 for _ in parsed.added()) == kinds.count("+")
    assert sum(1 for _ in parsed.removed()) == kinds.count("-")


def _unidiff_lines(path: str, patch: str) -> list[tuple[str, str, int | None, int | None, str]]:
    """The same patch read by unidiff, the reference implementation of the hunk grammar."""
    found = []
    for patched in PatchSet(f"--- a/{path}\n+++ b/{path}\n{patch}\n"):
        for hunk in patched:
            for line in hunk:
                if line.line_type in "+- ":
                    found.append(
                        (
                            line.line_type,
                            line.value.rstrip("\n"),
                            line.source_line_no,
                            line.target_line_no,
                            (hunk.section_header or "").strip(),
                        )
                    )
    return found


hunk_bodies = st.lists(
    st.tuples(st.sampled_from(["+", "-", " "]), st.text("abc (){}:=_", max_size=12)),
    min_size=1,
    max_size=12,
)


@given(st.lists(hunk_bodies, min_size=1, max_size=4), st.sampled_from(["", "def f(x):"]))
def test_agrees_with_unidiff(hunks: list[list[tuple[str, str]]], header: str) -> None:
    text, old_start, new_start = [], 1, 1
    for body in hunks:
        old = sum(1 for kind, _ in body if kind in "- ")
        new = sum(1 for kind, _ in body if kind in "+ ")
        text.append(f"@@ -{old_start},{old} +{new_start},{new} @@ {header}".rstrip())
        text += [kind + value for kind, value in body]
        old_start, new_start = old_start + old + 3, new_start + new + 3
    patch = "\n".join(text)
    parsed = parse_patch("f.py", patch)
    assert parsed.error is None
    ours = [
        (line.kind, line.text, line.old_no, line.new_no, hunk.header)
        for hunk in parsed.hunks
        for line in hunk.lines
    ]
    assert ours == _unidiff_lines("f.py", patch)


def test_hunk_longer_than_its_header_is_an_error() -> None:
    parsed = parse_patch("a.py", "@@ -1,1 +1,1 @@\n-a\n+b\n+c")
    assert parsed.error is not None and "expected a hunk header" in parsed.error


def test_a_line_ending_conversion_leaves_only_the_lines_that_changed() -> None:
    # CRLF to LF: every line is removed and added again; read alike, only `b` changed
    patch = "@@ -1,3 +1,3 @@\n-a = 1\r\n-b = 2\r\n-c = 3\r\n+a = 1\n+b = 20\n+c = 3"
    parsed = parse_patch("pkg/sfa_cp.py", patch)
    assert parsed.error is None
    kinds = [(line.kind, line.text, line.old_no, line.new_no) for line in parsed.hunks[0].lines]
    assert kinds == [
        (" ", "a = 1", 1, 1),
        ("-", "b = 2", 2, None),
        ("+", "b = 20", None, 2),
        (" ", "c = 3", 3, 3),
    ]
    assert parsed.relaid == 2  # `a` and `c`: counted by git, changed in no way a reader sees
    plain = parse_patch("pkg/x.py", "@@ -1,2 +1,2 @@\n-a = 1\n-b = 2\n+b = 2\n+a = 1")
    assert [x.kind for x in plain.hunks[0].lines] == ["-", "-", "+", "+"]  # git's own diff kept
    assert plain.relaid == 0


def test_lines_only_converted_to_crlf_are_no_source_lines_changed() -> None:
    from prdigest.analyze import analyze
    from prdigest.core.presets import load_preset

    from conftest import make_pr

    old = [f"x{i} = {i}" for i in range(40)]
    new = [*old[:20], "x20 = 21", *old[21:]]
    body = [f"-{line}" for line in old] + [f"+{line}\r" for line in new]
    patch = "@@ -1,40 +1,40 @@\n" + "\n".join(body)
    pr = make_pr(files=[{"path": "pkg/dsa.py", "status": "modified", "additions": 40,
                         "deletions": 40, "patch": patch}])  # fmt: skip
    d = analyze(pr, load_preset(pr.repo))
    assert d.files[0].relaid == 39
    assert d.source_lines_changed() == 2  # git's 80, less 39 lines laid out again twice
    from prdigest.core.models import Assessment, Level
    from prdigest.write.template.paragraph import paragraph_for

    skim = Assessment(pr.repo, pr.number, Level.SKIM, 1.0, (), None, None)
    text, _cited = paragraph_for(d, skim, "zh", None)
    assert "39 行只" in text and "换行符" in text  # the figure says what it leaves out
    # nor do they make the Python side carry the change beside a kernel
    kernel = {"path": "csrc/dsa/kernel.cpp", "status": "modified", "additions": 30,
              "deletions": 0, "patch": "@@ -1,0 +1,30 @@\n" + "\n".join(["+int k = 0;"] * 30)}  # fmt: skip
    both = analyze(make_pr(files=[pr.files[0].model_dump(), kernel]), load_preset(pr.repo))
    assert not both.python_carries()  # 2 Python lines beside 30 kernel lines

"""Renames and moves of definitions and files (analyze.moves) and what they change in facts."""

from __future__ import annotations

from prdigest.analyze.code import parametrize_cases
from prdigest.analyze.moves import detect, similarity
from prdigest.analyze.patches import parse_patch
from prdigest.core.models import FileFact, Provenance, Role


def _fact(path: str, status: str = "modified", language: str | None = "python") -> FileFact:
    return FileFact(
        id="f1",
        provenance=Provenance(kind="file", ref=path),
        path=path,
        status=status,
        role=Role.SOURCE,
        language=language,
    )


def _whole(sign: str, lines: list[str]) -> str:
    count = len(lines)
    head = f"@@ -1,{count} +0,0 @@" if sign == "-" else f"@@ -0,0 +1,{count} @@"
    return head + "\n" + "\n".join(sign + x for x in lines)


BODY = [
    "def load(path):",
    "    with open(path) as handle:",
    "        data = handle.read()",
    "    return parse(data)",
]


def test_similarity_is_the_dice_coefficient_of_line_multisets() -> None:
    assert similarity(["a", "b"], ["b", "a"]) == 1.0
    assert similarity(["a", "b"], ["a", "c"]) == 0.5
    assert similarity(["a"], []) == 0.0


def test_a_function_moved_to_another_file_is_a_move() -> None:
    old = parse_patch("a.py", _whole("-", BODY))
    new = parse_patch("b.py", _whole("+", BODY))
    moves = detect([(_fact("a.py", "removed"), old), (_fact("b.py", "added"), new)])
    origin = moves.origin("b.py", None, "load")
    assert origin is not None and (origin.path, origin.name) == ("a.py", "load")
    assert moves.replaced("a.py", "load")
    assert moves.files == {"b.py": "a.py"}  # the whole text moved too


def test_a_renamed_function_with_the_same_body_is_a_rename() -> None:
    patch = "@@ -1,4 +1,4 @@\n-def load(path):\n+def load_config(path):\n" + "\n".join(
        " " + x for x in BODY[1:]
    )
    moves = detect([(_fact("a.py"), parse_patch("a.py", patch))])
    origin = moves.origin("a.py", None, "load_config")
    assert origin is not None and origin.name == "load"


def test_another_body_under_another_name_is_no_rename() -> None:
    other = [
        "def store(path, data):",
        "    with open(path, 'w') as handle:",
        "        handle.write(data)",
    ]
    old = parse_patch("a.py", _whole("-", BODY))
    new = parse_patch("b.py", _whole("+", other))
    moves = detect([(_fact("a.py", "removed"), old), (_fact("b.py", "added"), new)])
    assert not moves.added and not moves.files


def test_other_languages_move_by_name() -> None:
    moves = detect(
        [],
        [
            ("csrc/a.h", "Init", "function", None, "removed"),
            ("csrc/b.h", "Init", "function", None, "added"),
        ],
    )
    assert moves.origin("csrc/b.h", None, "Init") is not None


def test_parametrize_cases_are_counted_and_stacked() -> None:
    lines = [
        '@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])',
        '@pytest.mark.parametrize("n", [1, 2, 3])',
        "def test_a(dtype, n):",
        "    pass",
        '@pytest.mark.parametrize("x", [1])',
        "def test_b(x):",
        "    pass",
    ]
    assert parametrize_cases(lines) == 6
    assert parametrize_cases(lines[4:]) == 1
    assert parametrize_cases(['@pytest.mark.parametrize("x", CASES)', "def test(x): ..."]) is None

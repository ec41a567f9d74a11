"""The analyzer's cheap pre-checks never rule out text that the real pattern would match.

Each gate (literal words beside a regex, a search over a whole file before the per-line scan)
only skips work: these tests hold that on the fixture PRs' lines and on text built from the
patterns' own vocabulary, where a careless edit of a regex without its words would show.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prdigest.analyze import analyze, body, design, signals
from prdigest.analyze.code import _ANY_TECHNIQUE, TECHNIQUES, worded_lines
from prdigest.analyze.patches import ADDED, DiffLine
from prdigest.core.presets import Preset
from prdigest.core.records import PullRequest

from conftest import file_patch, make_pr

DESIGN_LINES = [
    "    with self._state_lock:",
    "lock = threading.RLock()",
    "done = threading.Event()",
    "    torch.npu.Event(enable_timing=True)",
    "stream.wait_stream(other)",
    "with torch.npu.stream(s):",
    "pool = ThreadPoolExecutor(max_workers=2)",
    "q = queue.SimpleQueue()",
    "async def step(self):",
    "    await asyncio.sleep(0)",
    "class Mode(enum.IntEnum)",
    "class Mode(Enum):",
    "class Backend(ABC):",
    "class Thing(Base, CacheMixin):",
    "    @abstractmethod",
    '    raise NotImplementedError("x")',
    "if vllm_version_is('0.9.1'):",
    "if __version__ >= '1.0':",
    "  if [ -f x ]; then",
    "build() {",
    "x = y.item()",
    "torch.npu.synchronize()",
    "    continue-on-error: true",
    "concurrency:",
    "  cancel-in-progress: true",
    "      KEY: ${{ secrets.OBS_KEY }}",
]

SENTENCES = [
    "The root cause is a stale pointer in the allocator.",
    "This crashes because the cache is freed twice.",
    "Decoding hangs when the queue is empty for a while.",
    "This leads to wrong results on long prompts.",
    "We use a lock instead of a queue, which avoids the copy.",
    "The kernel overflowed on 64k inputs, so accuracy dropped.",
    "In order to support the new scheduler we add a hook.",
    "This PR adds a test for the fallback path of the loader.",
    "OOM on 8 cards when the batch is full and the graph is captured.",
    "Output was garbled for some requests in the second batch.",
]


def _lines_of(records: list[PullRequest]) -> list[str]:
    lines: list[str] = []
    for record in records:
        for change in record.files or ():
            for raw in (change.patch or "").split("\n"):
                if raw[:1] in ("+", "-", " "):
                    lines.append(raw[1:])
    return lines


def _sentences_of(records: list[PullRequest]) -> list[str]:
    found: list[str] = []
    for record in records:
        for paragraph in body._prose(record.body):
            found += [s.strip() for s in body._SENTENCE_END.split(paragraph.text) if s.strip()]
    return found


def test_design_words_cover_every_match(records: list[PullRequest]) -> None:
    matched = 0
    for line in [*DESIGN_LINES, *_lines_of(records)]:
        for pattern in design.PATTERNS:
            if pattern.regex.search(line):
                matched += 1
                assert any(w in line for w in pattern.words), (pattern.id, line)
    assert matched >= len(DESIGN_LINES)  # every crafted line matches some pattern


_DESIGN_VOCABULARY = [
    word
    for pattern in design.PATTERNS
    for word in re.findall(r"[A-Za-z_]{3,}", pattern.regex.pattern)
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*_DESIGN_VOCABULARY, " ", ".", "(", ")", "()", ", ", ":", "\t"]),
        max_size=8,
    )
)
def test_design_words_cover_generated_lines(parts: list[str]) -> None:
    line = "".join(parts)
    for pattern in design.PATTERNS:
        if pattern.regex.search(line):
            assert any(w in line for w in pattern.words), (pattern.id, line)


def test_rationale_gate_agrees_with_the_patterns(records: list[PullRequest]) -> None:
    def by_regex(sentence: str) -> str | None:
        if body._ROOT_CAUSE.search(sentence):
            return "root_cause"
        if body._SYMPTOM.search(sentence):
            return "symptom"
        return "motivation" if body._MOTIVATION.search(sentence) else None

    found = 0
    for sentence in [*SENTENCES, *_sentences_of(records)]:
        assert body._rationale_kind(sentence) == by_regex(sentence), sentence
        found += by_regex(sentence) is not None
    assert found >= len(SENTENCES)


SIGNAL_LINES = [
    "MAX_BATCH = 512",
    "    if n > 4096:",
    "# TODO(alice): remove after the next release",
    'os.environ.get("VLLM_FAST_PATH")',
    "except Exception: pass",
    "x = min(i, len(items) - 1)",
    'parser.add_argument("--fast-path")',
]


def _scanned(record: PullRequest, vllm: Preset) -> list[tuple[str, str]]:
    return [(s.kind.value, s.detail) for s in analyze(record, vllm).signals]


def test_signal_file_gate_changes_no_signal(
    records: list[PullRequest], vllm_preset: Preset, monkeypatch: pytest.MonkeyPatch
) -> None:
    crafted = make_pr(
        9, files=[file_patch("vllm/x.py", [*SIGNAL_LINES, "y = 1"], ["MAX_BATCH = 256"])]
    )
    cases = [crafted, *records]
    gated = [_scanned(r, vllm_preset) for r in cases]
    assert gated[0]  # the crafted lines do raise signals
    monkeypatch.setattr(signals, "_file_may_signal", lambda text, words: True)
    assert [_scanned(r, vllm_preset) for r in cases] == gated


def test_technique_file_gate_keeps_every_technique(records: list[PullRequest]) -> None:
    for line in _lines_of(records):
        if any(pattern.search(line) for _, pattern in TECHNIQUES):
            assert _ANY_TECHNIQUE.search(f"a\n{line}\nb"), line


_WORDED_PARTS = ["TODO", "skip", "min(", "envs.", "VLLM_", "Mock", "patch", "x", " ", "\t", "é"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_WORDED_PARTS), max_size=6), max_size=6))
def test_worded_lines_are_the_lines_a_search_finds(lines: list[list[str]]) -> None:
    texts = ["".join(parts) for parts in lines]
    diff = [DiffLine(ADDED, text, None, n) for n, text in enumerate(texts, start=1)]
    for words in (signals._trigger_words(("VLLM_",)), _ANY_TECHNIQUE):
        expected = {i for i, text in enumerate(texts) if words.search(text)}
        assert worded_lines(words, diff, "\n".join(texts)) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["load_weights_v2", "~KernelArgs", "_init_cache", "gone"]), max_size=3
    ),
    st.lists(st.sampled_from(["load_weights_v2", "~KernelArgs", "_init_cache", "x", "(", " "])),
)
def test_gone_names_test_is_the_whole_word_pattern(names: list[str], parts: list[str]) -> None:
    text = "".join(parts)
    found = signals._names_test(names)
    long = sorted(n for n in names if len(n) >= 8)
    if not long:
        assert found is None
        return
    pattern = re.compile(rf"\b(?:{'|'.join(map(re.escape, long))})\b")
    assert found is not None and found(text) == (pattern.search(text) is not None)

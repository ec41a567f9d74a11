"""The why of an entry: which body sentence is quoted, and how."""

from __future__ import annotations

from prdigest.analyze import analyze
from prdigest.core.presets import load_preset
from prdigest.write.template.phrases import Cited
from prdigest.write.template.why import QUOTE_LIMIT, QUOTE_WHOLE, _clip, best_rationale, body_quote

from conftest import file_patch, make_pr

BODY = """### What this PR does / why we need it?

The root cause is that padded slots cross the rank boundary because graph mode keeps fixed slots.
Because of this the negative length was passed to `KvQuantSparseAttnSharedKV` as `seqused_kv`.

### How was this patch tested?
CI.
"""


def _dossier(body: str = BODY):  # type: ignore[no-untyped-def]
    added = ["x = clamp(a, 0)", "out = KvQuantSparseAttnSharedKV(seqused_kv=x)", "c = FooCache()"]
    removed = ["x = a", "out = KvQuantSparseAttnSharedKV(seqused_kv=a)"]
    pr = make_pr(body=body, files=[file_patch("vllm/attn.py", added, removed)])
    return analyze(pr, load_preset(pr.repo))


def test_the_sentence_that_names_code_is_quoted_before_one_that_does_not() -> None:
    d = _dossier()
    causes = [r for r in d.rationale if r.kind == "root_cause"]
    assert len(causes) == 2 and "`" not in causes[0].claim  # both qualify, the first names no code
    chosen = best_rationale(d)
    assert chosen is not None and "`KvQuantSparseAttnSharedKV`" in chosen.claim


def test_a_change_said_of_code_the_diff_does_not_show_is_not_quoted() -> None:
    # a root cause may live outside the diff; a change the body claims must be in it
    cause = BODY.replace("KvQuantSparseAttnSharedKV", "SparseAttnKernelV2").replace(
        "seqused_kv", "kv_lens"
    )
    d = _dossier(cause)
    assert [r.code_unseen for r in d.rationale if r.kind == "root_cause"] == [False, True]
    stale = (
        "### What this PR does / why we need it?\n\n"
        "This PR overrides `apply_top_k_top_p` to use the ascendc operator on NPU.\n"
        "This PR introduces `FooCache` for the draft KV blocks.\n"
    )
    chosen = best_rationale(_dossier(stale))
    assert chosen is not None and chosen.claim.startswith("introduces `FooCache`")


def test_a_quote_keeps_the_bodys_code_spans_that_are_names_and_no_other() -> None:
    d = _dossier()
    text = (
        "Passed to `KvQuantSparseAttnSharedKV` as `seqused_kv` over `[60, 70)` by `pip install x`"
    )
    quoted = body_quote(text, d, Cited())
    assert "`KvQuantSparseAttnSharedKV`" in quoted and "`seqused_kv`" in quoted
    assert "`[60, 70)`" not in quoted and "[60, 70)" in quoted  # not a code name
    assert "`pip install x`" not in quoted


def test_a_quote_a_few_words_longer_than_the_limit_is_kept_whole() -> None:
    whole = "w " * ((QUOTE_LIMIT + QUOTE_WHOLE) // 4)
    assert QUOTE_LIMIT < len(whole.strip()) <= QUOTE_WHOLE
    assert _clip(whole.strip(), QUOTE_LIMIT) == whole.strip()
    longer = "word " * (QUOTE_WHOLE // 4)
    cut = _clip(longer.strip(), QUOTE_LIMIT)
    assert cut.endswith("…") and len(cut) <= QUOTE_LIMIT + 1


def test_the_prs_own_purpose_sentence_is_its_motivation() -> None:
    body = "### What this PR does / why we need it?\n\nThis PR introduces `FooCache` for the draft KV blocks.\n"
    chosen = best_rationale(_dossier(body))
    assert chosen is not None and chosen.kind == "motivation"
    assert chosen.claim.startswith("introduces `FooCache`")
    # "This pull request …" is the PR itself, not a pointer back
    plain = best_rationale(_dossier(body.replace("This PR", "This pull request")))
    assert plain is not None and plain.kind == "motivation"


def test_a_purpose_fragment_is_not_quoted() -> None:
    for sentence in (
        "This PR fixes that ownership split between the two managers.",  # points back
        "This PR fixes the deterministic algorithms in PyTorch by calling",  # wants more
        "This PR adds a platform patch for the scheduler that",
    ):
        body = f"### What this PR does / why we need it?\n\n{sentence}\n"
        assert best_rationale(_dossier(body)) is None, sentence


def test_a_purpose_that_only_relays_another_pr_is_not_quoted() -> None:
    for sentence in (
        "This PR syncs the same changes to `main` for the layerwise KV pool.",
        "This PR is a cherry-pick of the scheduler fix to the release branch.",
    ):
        body = f"### What this PR does / why we need it?\n\n{sentence}\n"
        assert best_rationale(_dossier(body)) is None, sentence
    # "the same" about the change's own content is a purpose
    body = "### What this PR does / why we need it?\n\nThis PR makes both caches share the same block layout.\n"
    assert best_rationale(_dossier(body)) is not None


def test_more_verbs_of_the_prs_own_purpose_sentence_and_not_an_also() -> None:
    for sentence, claim in (
        ("This PR ports the store hit coordination from the upstream connector.", "ports the"),
        ("This PR only adds the Triton kernels for the gated delta rule.", "only adds the"),
        ("This PR backports the streaming parser fix from upstream vLLM.", "backports the"),
    ):
        chosen = best_rationale(
            _dossier(f"### What this PR does / why we need it?\n\n{sentence}\n")
        )
        assert chosen is not None and chosen.kind == "motivation", sentence
        assert chosen.claim.startswith(claim), chosen.claim
    # a side note ("This PR also …") is not the PR's purpose
    side = "This PR also updates the profiling guide to match the current tool."
    assert best_rationale(_dossier(f"### What this PR does / why we need it?\n\n{side}\n")) is None


def test_a_cut_keeps_the_code_name_it_falls_in_or_before_when_it_ends_soon() -> None:
    text = (
        "replaces the custom implementation of `npu_moe_init_routing_custom` with the official "
        "`torch_npu.npu_moe_init_routing_v2` and drops the old kernel sources"
    )
    assert _clip(text, QUOTE_LIMIT).endswith("`torch_npu.npu_moe_init_routing_v2`…")
    far = "a few words here and then " + "`" + "x" * 150 + "` and more words after it"
    assert _clip(far, QUOTE_LIMIT) == "a few words here and then…"


def test_two_durations_measured_in_the_test_section_are_said_as_the_time_taken() -> None:
    from prdigest.write.template.phrases import Phrases
    from prdigest.write.template.why import why_parts

    body = (
        "### What this PR does / why we need it?\nSplits the FIA call per phase.\n"
        "### How was this patch tested?\ncost:\n**4360us --> 3949us( ↑ 9.4%)**\n"
    )
    d = _dossier(body)
    said = " ".join(why_parts(d, Phrases("zh", d.number, 0), Cited()))
    assert "耗时" in said and "4360us" in said and "3949us" in said
    english = " ".join(why_parts(d, Phrases("en", d.number, 0), Cited()))
    assert "time" in english and "4360us" in english

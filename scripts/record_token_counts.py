"""Record true token counts of prompts built from the fixture PRs, for the estimator's test.

The counts come from a model's own tokenizer through llama-cpp-python (``vocab_only``: no
weights are loaded, nothing is downloaded). Run it with a Python that has llama-cpp-python and
point it at a GGUF file, e.g. Qwen2.5-Coder-1.5B-Instruct Q4_K_M (see docs/llm.md):

    /path/to/venv/bin/python scripts/record_token_counts.py --gguf qwen.gguf \
        --out tests/fixtures/tokens/qwen2.5.json

The texts are prdigest's own prompts over the project's fixture PRs (no third-party text).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def prompts() -> list[dict[str, str]]:
    """System and user messages of every fixture PR's entry prompt and of the titles batch
    (built by the project's own Python, which has prdigest installed)."""
    code = r"""
import json, sys
sys.path[:0] = ["src", "tests"]
from prdigest.core.models import Level
from prdigest.write.llm.prompt import entry_prompt, level_budget, titles_messages
from prdigest.write.llm.style import default_reference, format_examples, pick_examples
from llm_support import analyzed, fixture_prs
style = format_examples(pick_examples(default_reference()))
out = []
for pr in fixture_prs():
    _, d, a = analyzed(pr.number)
    if a.level is Level.LIST_ONLY:
        continue
    budget = level_budget(8000, a.level)
    built = entry_prompt(pr, d, a, lang="zh", style=style, budget_tokens=budget)
    for m in built.messages:
        out.append({"id": f"{pr.number}:{m['role']}", "text": m["content"]})
items = [(p, analyzed(p.number)[1]) for p in fixture_prs()]
for m in titles_messages("vllm-project/vllm", items, "zh"):
    out.append({"id": f"titles:{m['role']}", "text": m["content"]})
print(json.dumps(out, ensure_ascii=False))
"""
    run = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "-c", code],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return list(json.loads(run.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    from llama_cpp import Llama  # the recording Python's own package

    model = Llama(str(args.gguf), vocab_only=True, verbose=False)
    rows = []
    for item in prompts():
        tokens = model.tokenize(item["text"].encode(), add_bos=False, special=False)
        rows.append({**item, "tokens": len(tokens)})
    meta = {"tokenizer": str(model.metadata.get("general.name", args.gguf.name))}
    payload = {"meta": meta, "prompts": rows}
    args.out.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"recorded {len(rows)} prompts to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Bundled sample records (``vllm-sample.jsonl``) for ``prdigest demo``.

Generated from ``tests/fixtures/prs/*.json`` by ``scripts/build_samples.py``; a test keeps the
two equal.
"""

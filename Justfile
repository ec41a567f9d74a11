# Developer recipes. `just` runs tests and lint.
default: test lint

# Run the test suite.
test *options:
    python -m pytest -q {{options}}

# Ruff (lint + format check) and mypy (strict).
lint:
    ruff check src tests bench scripts
    ruff format --check src tests bench scripts
    mypy

# Benchmarks print their figures; see bench/README.md.
bench:
    python bench/bench_analyze.py
    python bench/bench_github.py
    python bench/bench_startup.py

# The git source over a real clone's whole history (skips without a path).
bench-git path="":
    python bench/bench_git.py {{path}}

# Regenerate the bundled sample from tests/fixtures/prs.
samples:
    python scripts/build_samples.py

# Regenerate golden outputs after a reviewed change of the writer or renderers.
golden:
    python scripts/build_golden.py

# Regenerate docs/images/digest-page.png (headless Chromium; needs chromium and fonts-noto-cjk).
screenshot:
    python scripts/screenshot.py

# Site build figures: a year of digests, a no-op rebuild and a one-day rebuild.
bench-site days="365":
    python bench/bench_site.py --days {{days}}

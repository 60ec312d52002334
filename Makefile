# Two entry points: `make run` starts the dashboard, `make test` runs every check.
# Both create .venv with the system python3 (3.11 or newer) and install what they need.

PYTHON ?= python3
# Python keeps each module it compiles (__pycache__, ignored by git), so the next process that imports it reads it
# instead of compiling it again; an environment that turns this off (PYTHONDONTWRITEBYTECODE, set in some container
# images) made every test process, server and trainer compile Streamlit, plotly, pandas and the app anew (1.4 CPU-s
# more per process that imports them, measured). The commands below keep Python's default.
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
ADDRESS ?= 127.0.0.1
PORT ?= 8501
CHROMIUM ?= /usr/bin/chromium

.PHONY: run room dev test test-fast docs bench load serve-class chromium clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed (PYTHON=python3.11 make ...)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The project installs itself (editable): the explorer package, its pinned dependencies and the
# explorer-train / explorer-export commands; the test extra adds the test-only pins. The build backend (hatchling)
# writes nothing into the checkout. --no-compile: pip would byte-compile every file of every package (torch, plotly:
# about 40 s of CPU here); Python compiles the modules a run imports, once, as it first imports them.
$(VENV)/.run-deps: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --no-compile -e .
	@touch $@

$(VENV)/.dev-deps: requirements-dev.txt $(VENV)/.run-deps
	$(BIN)/pip install -q --no-compile -e ".[test]"
	@touch $@

# The dashboard as people use it: no file watcher (.streamlit/config.toml), so nothing but the viewers costs time.
run: $(VENV)/.run-deps
	@echo "Attention Explorer will be at http://$(ADDRESS):$(PORT)  (Ctrl+C stops it)"
	$(BIN)/streamlit run app.py --server.address $(ADDRESS) --server.port $(PORT)

# The lecture room: listen on every interface and put this machine's network address in the poll's link and QR
# code, so phones on the room's network reach it (make run stays on 127.0.0.1, which only this machine reaches).
room: $(VENV)/.run-deps
	@URL="http://$$($(BIN)/python -c 'from explorer.serving import lan_address; print(lan_address())'):$(PORT)"; \
	echo "Attention Explorer for the room at $$URL  (phones on this network; Ctrl+C stops it)"; \
	EXPLORER_PUBLIC_URL="$$URL" $(BIN)/streamlit run app.py --server.address 0.0.0.0 --server.port $(PORT)

# For someone editing the pages: the same, plus Streamlit's file watcher, rerunning a page when its file is saved.
dev: $(VENV)/.run-deps
	$(BIN)/streamlit run app.py --server.address $(ADDRESS) --server.port $(PORT) \
	  --server.fileWatcherType auto --server.runOnSave true

# The browser tests and PNG/SVG export drive Debian's chromium; a CJK font lets it draw the 中文 UI; the
# replica tests put HAProxy in front of the app; the class polls' shared store is redis-server. Install them when
# missing and we may (root + apt-get).
chromium:
	@if [ ! -x "$(CHROMIUM)" ] || ! fc-list :lang=zh 2>/dev/null | grep -q . || ! command -v haproxy >/dev/null \
	    || ! command -v redis-server >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "Installing chromium, a CJK font, haproxy and redis-server for the browser, replica and poll tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-wqy-microhei \
	      haproxy redis-server >/dev/null; \
	  else \
	    echo "The tests need Chromium at $(CHROMIUM), haproxy and redis-server: install them (apt-get install chromium fonts-wqy-microhei haproxy redis-server) or set CHROMIUM=/path/to/chrome"; exit 1; \
	  fi; \
	fi

# The suite runs on WORKERS pytest-xdist processes, a test file to a worker (a file's browser tests share one server,
# the induction tests one set of trained models); each worker computes on one thread (tests/conftest.py).
WORKERS ?= 2
# The files are handed out in tests/conftest.py's order (the longest first), not xdist's (the most tests first).
# Every run takes the tests in a new random order (pytest-randomly; the seed is printed at the top of the run):
# PYTEST_ARGS=--randomly-seed=N repeats one, PYTEST_ARGS="-p no:randomly" keeps the files' order.
PYTEST := $(BIN)/python -m pytest -n $(WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# Set-up first: the virtual environment (pip, on the CPU) and the system packages (apt, on the network and the
# disk) are installed side by side, so a fresh machine waits for the longer of the two, not for both in turn.
test:
	@$(MAKE) --no-print-directory -j2 -O $(VENV)/.dev-deps chromium
	$(BIN)/ruff check .
	CHROMIUM=$(CHROMIUM) REQUIRE_BROWSER=1 REQUIRE_REDIS=1 $(PYTEST) --nbmake --durations=25

# The edit loop: no browser (neither the app in Chromium nor PNG/SVG export through it) and no training to
# convergence; every claim still swept, every page still run.
test-fast: $(VENV)/.dev-deps
	$(BIN)/ruff check .
	$(PYTEST) -m "not e2e and not slow and not browser"

clean:
	rm -rf $(VENV) tests/artifacts .pytest_cache .ruff_cache site

# The documentation site (mkdocs.yml, docs/): built into site/ offline; --strict turns a broken link, a missing page
# or an API reference that cannot be resolved into a failure (make test builds it too: tests/unit/test_docs.py).
docs: $(VENV)/.dev-deps
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	@echo "The site is in site/: open site/index.html"

# Benchmarks: one table, every ratio measured in the same run (needs statsmodels, from requirements-dev).
bench: $(VENV)/.dev-deps chromium
	CHROMIUM=$(CHROMIUM) $(BIN)/python -m bench.run

# A classroom against real servers over Streamlit's websocket protocol (bench/load.py): sessions held at
# p95 <= 300 ms with nobody and a quarter training, memory per session, 50 sessions coming and going.
# LOAD="--sessions 8 --trainers 2 --seconds 20" runs one short profile instead.
load: $(VENV)/.dev-deps
	$(BIN)/python -m bench.load $(if $(LOAD),$(LOAD),--ramp)

# A lecture hall on one machine: REPLICAS app servers behind HAProxy with sticky sessions (deploy/).
REPLICAS ?= 3
serve-class: $(VENV)/.run-deps chromium
	$(BIN)/python deploy/serve_class.py --replicas $(REPLICAS) --port $(PORT) --address $(ADDRESS) \
	  $(if $(PUBLIC_URL),--public-url $(PUBLIC_URL))

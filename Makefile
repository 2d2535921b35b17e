# The two commands a new machine needs (both do all set-up themselves):
#   make demo   an example put + get + search + status on a throwaway store, and its git log
#   make test   lint, type-check and the whole test suite (what .ci/run runs)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: setup demo check git-binary chromium-binary sshd-binary test bench clean helptext

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" sh examples/demo.sh
	@echo "xbrain is installed at $(CURDIR)/$(BIN)/xbrain; run '. $(BIN)/activate' to put it on PATH."

check: setup
	$(BIN)/ruff format --check xbrain tests bench examples hooks
	$(BIN)/ruff check xbrain tests bench examples hooks
	$(BIN)/mypy
	$(BIN)/lint-imports

# The interoperability tests need the real git binary: install it when we can (CI runs
# as root on Debian), otherwise those tests skip with a reason.
git-binary:
	@command -v git >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	  apt-get update -qq && apt-get install -y -qq git >/dev/null; } || \
	  echo "note: git is not installed; the compat tests will be skipped"

# The viewer's browser tests drive Debian's chromium (Playwright with that executable;
# never a browser it downloads), with a font for Chinese: install them when we can (CI
# runs as root on Debian), otherwise those tests skip with a reason.
chromium-binary:
	@[ -x /usr/bin/chromium ] || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
	  fonts-wqy-microhei >/dev/null; } || \
	  echo "note: chromium is not installed; the viewer's browser tests will be skipped"

# The team-memory ssh test starts its own unprivileged sshd on 127.0.0.1 (its own host
# key, config and authorized_keys in a temporary folder; never the system's service):
# install OpenSSH's server when we can (CI runs as root on Debian), otherwise that test
# skips with a reason.
sshd-binary:
	@[ -x /usr/sbin/sshd ] || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	  openssh-server openssh-client >/dev/null; } || \
	  echo "note: sshd is not installed; the team ssh transport test will be skipped"

# Two workers: CI has two cores, and most tests wait on the subprocesses they start. A
# single test runs serially as usual: python -m pytest tests/cli/test_x.py -k name.
# xbrain's byte code is written first: where PYTHONDONTWRITEBYTECODE is set, every
# xbrain process the tests start would otherwise compile it again (~80 ms each)
test: check git-binary chromium-binary sshd-binary
	$(BIN)/python -m compileall -q xbrain
	$(BIN)/python -m pytest -n 2

# The retrieval benchmark reads installed manual pages; Chinese ones come from Debian's
# manpages-zh, installed here when we can (root + apt), else the zh rows shrink. Its
# third corpus is apt's package descriptions, fetched in Chinese too when we can.
bench: setup
	@[ -d /usr/share/man/zh_CN/man1 ] && [ "$$(ls /usr/share/man/zh_CN/man1 | wc -l)" -gt 100 ] || \
	  { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq manpages-zh >/dev/null; } || \
	  echo "note: manpages-zh not installed; the Chinese corpus is what the machine has"
	@ls /var/lib/apt/lists/*i18n_Translation-zh* >/dev/null 2>&1 || \
	  { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && \
	    apt-get update -qq -o Acquire::Languages=en,zh_CN; } || \
	  echo "note: no Chinese package descriptions from apt; the suite leaves the package rows out"
	$(BIN)/python -m compileall -q xbrain
	$(BIN)/python bench/run.py --skip-large
	$(BIN)/python bench/run.py --large
	$(BIN)/python bench/semantic_build.py --time-only
	$(BIN)/python bench/aging.py
	$(BIN)/python bench/small_stores.py
	$(BIN)/python bench/criterion.py
	$(BIN)/python bench/recall_quality.py
	$(BIN)/python bench/semantic_quality.py
	$(BIN)/python bench/ui.py
	@$(BIN)/python -c 'import chitchat_dataset' 2>/dev/null || \
	  $(BIN)/python -m pip install --quiet 'chitchat-dataset==0.9.0' || \
	  echo "note: chitchat-dataset not installed; the suite leaves its public-dialogue rows out"
	$(BIN)/python bench/suite_modes.py
	$(BIN)/python bench/team_layers.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

# ``xbrain --help`` is printed from xbrain/helptext.py without loading click; rewrite it
# after changing a command's help (a test fails until then).
helptext: setup
	$(BIN)/python -m xbrain.cli.helptext > xbrain/helptext.py

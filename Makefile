# The two set-up commands of the README.
.PHONY: run test lint install install-dev install-sdk

run: install          ## install, then the control run: the reference solves every task
	.venv/bin/sb run --model reference

test: install-dev     ## install with the test tools, then every check CI runs
	bash tools/test.sh

lint:                 ## ruff and mypy as tools/test.sh runs them (needs make install-dev once)
	.venv/bin/ruff check
	.venv/bin/mypy

install:
	bash tools/install.sh

install-dev:
	bash tools/install.sh --dev

install-sdk:          ## the laptop install plus the official SDKs, from the lock: to grade a hosted or served model
	bash tools/install.sh --sdk

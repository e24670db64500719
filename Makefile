# The two set-up commands of the README.
.PHONY: run test install install-dev

run: install          ## install, then the control run: the reference solves every task
	.venv/bin/sb run --model reference

test: install-dev     ## install with the test tools, then every check CI runs
	bash tools/test.sh

install:
	bash tools/install.sh

install-dev:
	bash tools/install.sh --dev

# Shortcuts; the README's two commands are scripts/main.sh and scripts/test.sh.
.PHONY: install main test bench lint vendor

install:  # the extras scripts/main.sh and scripts/test.sh install (install.sh's default)
	bash scripts/install.sh

main:
	bash scripts/main.sh

test:
	bash scripts/test.sh

bench: install
	.venv/bin/python benchmarks/render_bench.py

lint: install
	.venv/bin/ruff check src tests benchmarks scripts

vendor:
	python3 scripts/vendor_js.py

# The two commands: `make run` (install what is needed, start the app) and `make test` (install, run
# every check and the whole test suite). Both create the locked environment in .venv with uv.
UV := ./scripts/uv.sh
# uv bootstrapped by scripts/uv.sh lives in .tools/bin; tests that build a wheel look for it on PATH.
export PATH := $(CURDIR)/.tools/bin:$(PATH)
# llama-cpp-python builds from source here (~9 min once; uv caches the built wheel).
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

.PHONY: run test sync lint bench

sync:
	$(UV) sync --locked

# Bytecode is compiled once at install (site-packages by uv, our package by compileall), so a start
# reads .pyc files even where PYTHONDONTWRITEBYTECODE is set: first paint 0.64 s instead of 1.2 s.
run:
	$(UV) sync --locked --compile-bytecode
	.venv/bin/python -m compileall -q neotask_tui
	.venv/bin/neotask

lint: sync
	.venv/bin/ruff check neotask_tui tests bench
	.venv/bin/mypy

test: lint
	.venv/bin/pytest -q -p no:cacheprovider

bench: sync
	.venv/bin/python bench/transcripts.py

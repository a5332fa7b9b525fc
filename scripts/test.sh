#!/usr/bin/env bash
# The README's test command: set everything up, then lint, type-check and run the whole suite
# (unit tests with the scripted LLM, LanceDB/OCR integration, the notebook, and the
# end-to-end questions on the real local model).
#   scripts/test.sh          everything: setup, lint, types, the layer contract, all three tiers
#   scripts/test.sh --fast   the unit tier only (tests/unit: no servers, no models)
# Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
FAST=0
ARGS=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then FAST=1; else ARGS+=("$arg"); fi
done
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
if [ "$FAST" = 1 ]; then
  [ -x .venv/bin/lint-imports ] || bash scripts/setup.sh
  exec .venv/bin/python -m pytest -p no:cacheprovider tests/unit ${ARGS[@]+"${ARGS[@]}"}
fi
bash scripts/setup.sh
# A real PostgreSQL server for the SQL-spec tests (Debian package; the tests start a throwaway
# cluster on 127.0.0.1 and stop it at the end).
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  echo "[test] installing postgresql"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
# llama.cpp's own OpenAI-compatible server for the server-path tests, built once from the
# llama.cpp sources llama-cpp-python vendors (about 10 min the first time, then cached).
bash scripts/llama_server.sh >/dev/null
.venv/bin/ruff check src tests benchmarks scripts
.venv/bin/ruff format --check src tests benchmarks scripts
.venv/bin/mypy
.venv/bin/lint-imports  # the layer contract in pyproject.toml (docs/architecture.md)
.venv/bin/python -m pytest -p no:cacheprovider tests/unit tests/integration tests/e2e ${ARGS[@]+"${ARGS[@]}"}

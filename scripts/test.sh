#!/usr/bin/env bash
# The README's test command: set everything up, then lint, type-check and run the whole suite
# (unit tests with the scripted LLM, LanceDB/OCR integration, the notebook, and the
# end-to-end questions on the real local model).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/ruff check src tests benchmarks scripts
.venv/bin/ruff format --check src tests benchmarks scripts
.venv/bin/mypy
.venv/bin/python -m pytest -p no:cacheprovider "$@"

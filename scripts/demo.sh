#!/usr/bin/env bash
# The README's main command: set everything up, index the sample domain, and answer sample
# questions with the agent (router, then ReActAgent) on the local model, offline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/toolrag demo "$@"

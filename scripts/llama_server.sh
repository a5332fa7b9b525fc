#!/usr/bin/env bash
# Builds llama.cpp's own OpenAI-compatible server, `llama-server`, from the llama.cpp sources
# that the installed llama-cpp-python vendors (its sdist, from PyPI), and prints its path.
# The tests run the openai_like path against it as well as against llama-cpp-python's server:
# it reports the prompt tokens it read from its cache, and takes tools natively (--jinja).
# Built with the flags of scripts/llama_build.sh (this CPU's instructions, no AMX) and cached per
# llama-cpp-python version and flags; a second run only prints the path (about 10 min on two
# cores the first time).
#   scripts/llama_server.sh             # builds if needed, prints the binary's path
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
VERSION=$($PY -c "import llama_cpp; print(llama_cpp.__version__)")
CACHE=${TOOLRAG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolrag}
TAG=$(bash scripts/llama_build.sh tag)
DEST="$CACHE/llama-server/$VERSION-$TAG"
if [ -x "$DEST/llama-server" ]; then
  echo "$DEST/llama-server"
  exit 0
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "[llama-server] building llama.cpp's server from llama-cpp-python $VERSION's sources" >&2
$PY -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$WORK" >&2
tar xzf "$WORK"/llama_cpp_python-"$VERSION".tar.gz -C "$WORK"
SRC="$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp"
cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
  $(bash scripts/llama_build.sh flags) \
  >"$WORK/cmake.log" 2>&1 || { tail -30 "$WORK/cmake.log" >&2; exit 1; }
cmake --build "$WORK/build" --target llama-server -j "$(nproc)" >"$WORK/build.log" 2>&1 \
  || { tail -30 "$WORK/build.log" >&2; exit 1; }
mkdir -p "$DEST"
cp "$WORK/build/bin/llama-server" "$DEST/llama-server.tmp"
mv "$DEST/llama-server.tmp" "$DEST/llama-server"
echo "$DEST/llama-server"

#!/usr/bin/env bash
# llama.cpp's build flags for this machine, and llama-cpp-python built with them, cached.
#
# Why not pip's own build: llama.cpp builds for the build machine's CPU (-march=native) by
# default. A wheel built on one machine then lands, through pip's cache, on another with other
# instructions; and on Intel CPUs with AMX (Sapphire Rapids and later) the AMX kernels segfault
# on the first Q4_K evaluation in virtual machines (llama.cpp issue 20824). On x86_64 we build
# for the instructions this CPU has, named one by one (AVX2, FMA, F16C, BMI2, and AVX-512 with
# VNNI, VBMI and BF16 where present: they read a prompt much faster), never AMX; elsewhere
# natively. pip's wheel cache cannot tell builds of other flags apart, so the wheel is kept in
# toolrag's cache under the flags' tag: another CPU gets its own build.
#   scripts/llama_build.sh flags    # the cmake flags
#   scripts/llama_build.sh tag      # a name for them (the cache folder)
#   scripts/llama_build.sh wheel    # builds llama-cpp-python if needed, prints the wheel's path
set -euo pipefail
cd "$(dirname "$0")/.."

has() { grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | grep -qw "$1"; }
if [ "$(uname -m)" = "x86_64" ] && has avx2 && has fma && has f16c && has bmi2; then
  FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
  FLAGS="$FLAGS -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  TAG=x86-64-v3
  if has avx_vnni; then FLAGS="$FLAGS -DGGML_AVX_VNNI=ON"; TAG="$TAG-avxvnni"; fi
  if has avx512f && has avx512cd && has avx512vl && has avx512dq && has avx512bw; then
    FLAGS="$FLAGS -DGGML_AVX512=ON"; TAG="$TAG-avx512"
    if has avx512_vnni; then FLAGS="$FLAGS -DGGML_AVX512_VNNI=ON"; TAG="$TAG-vnni"; fi
    if has avx512vbmi; then FLAGS="$FLAGS -DGGML_AVX512_VBMI=ON"; TAG="$TAG-vbmi"; fi
    if has avx512_bf16; then FLAGS="$FLAGS -DGGML_AVX512_BF16=ON"; TAG="$TAG-bf16"; fi
  fi
else  # no AVX2 (and so no AMX), or not x86
  FLAGS="-DGGML_NATIVE=ON"
  TAG="native-$(uname -m)"
fi

case "${1:-wheel}" in
  flags) echo "$FLAGS"; exit 0 ;;
  tag) echo "$TAG"; exit 0 ;;
  wheel) ;;
  *) echo "usage: $0 [flags|tag|wheel]" >&2; exit 2 ;;
esac

PY=${PYTHON:-.venv/bin/python}
CACHE=${TOOLRAG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/toolrag}
DEST="$CACHE/wheels/$TAG"
# the version range the project asks for (pyproject.toml), e.g. "llama-cpp-python[server]>=0.3.8,<0.4"
SPEC=$($PY - <<'PY'
import tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["local"]
print(next(d.split("#")[0].strip() for d in deps if d.startswith("llama-cpp-python")).replace("[server]", ""))
PY
)
found=$($PY - "$DEST" "$SPEC" <<'PY'
import pathlib, sys
from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import parse_wheel_filename
dest, req = pathlib.Path(sys.argv[1]), Requirement(sys.argv[2])
wheels = sorted(
    (parse_wheel_filename(w.name)[1], w) for w in dest.glob("llama_cpp_python-*.whl")
    if parse_wheel_filename(w.name)[1] in req.specifier
)
print(wheels[-1][1] if wheels else "")
PY
)
if [ -n "$found" ]; then
  echo "$found"
  exit 0
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "[llama-build] building llama-cpp-python ($SPEC) for $TAG (6-12 min on two cores)" >&2
CMAKE_ARGS="$FLAGS" $PY -m pip wheel -q --no-deps --no-cache-dir --no-binary llama-cpp-python \
  "$SPEC" -w "$WORK" >&2
mkdir -p "$DEST"
for w in "$WORK"/llama_cpp_python-*.whl; do
  cp "$w" "$DEST/$(basename "$w").tmp" && mv "$DEST/$(basename "$w").tmp" "$DEST/$(basename "$w")"
  echo "$DEST/$(basename "$w")"
done

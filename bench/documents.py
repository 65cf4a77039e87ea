"""Documents benchmark: recall@5 over the project's own docs/ pages, with questions written before measuring.

    python -m bench.documents            (also: python -m bench documents)

Every page of docs/*.md is added through ``hermes_docs_add`` (a file under ``docs.roots``) to a hub on
a real SQLite file with the default embedder, and embedded before measuring. The questions
(bench/data/docs_questions.json, committed before this benchmark first ran; two are in Chinese)
each name the page and a phrase the answer holds. A question is answered at 5 when one of the first
five hits comes from that page and holds the phrase. Printed side by side, in one run: word search
only (BM25), stage 1 alone (BM25 and vectors fused by reciprocal rank), and the two stages (fusion,
then the finer rescoring of the best few that ``hermes_memory_recall`` uses), with p50 latency.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = Path(__file__).resolve().parent / "data" / "docs_questions.json"


def relevant(hit: Any, doc_ids: dict[str, str], want: dict[str, str]) -> bool:
    return hit.chunk.document_id == doc_ids[want["doc"]] and want["answer"].lower() in hit.chunk.text.lower()


async def measure(quick: bool = False) -> dict[str, Any]:

    from hermes_hub import Hub
    from hermes_hub.infra.config import parse_config
    from hermes_hub.services.memory.retrieval import RERANK, retrieve

    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    pages = sorted((ROOT / "docs").glob("*.md"))
    with tempfile.TemporaryDirectory() as tmp:
        config = parse_config({"mcpServers": {}, "storage": {"url": f"sqlite:///{tmp}/hub.db"},
                               "docs": {"roots": [str(ROOT / "docs")]}})
        async with Hub(config) as hub, hub.client() as host:
            doc_ids: dict[str, str] = {}
            chunks = 0
            t0 = time.perf_counter()
            for page in pages:
                r = await host.call_tool("hermes_docs_add", {"path": str(page)})
                assert not r.is_error, r.content[0].text
                doc_ids[page.name] = r.structured_content["document_id"]
                chunks += r.structured_content["chunks"]
            added = time.perf_counter() - t0
            docs = hub.services.documents
            assert docs is not None
            with anyio.fail_after(1800):
                await docs.wait_idle()
            embedded = time.perf_counter() - t0
            user = hub.local.user_id
            variants = {"words only (BM25)": (None, 0), "stage 1: fusion": (docs.embedder, 0),
                        "two stages": (docs.embedder, RERANK)}
            out: dict[str, Any] = {"pages": len(pages), "chunks": chunks, "questions": len(questions),
                                   "add_s": round(added, 2), "embedded_s": round(embedded, 2), "variants": {}}
            for name, (embedder, rerank) in variants.items():
                found, times, misses = 0, [], []
                for q in questions:
                    t = time.perf_counter()
                    hits = await retrieve(docs.store, embedder, docs.vectors, user, q["q"], 5, rerank=rerank)
                    times.append((time.perf_counter() - t) * 1000)
                    if any(relevant(h, doc_ids, q) for h in hits):
                        found += 1
                    else:
                        misses.append(q["q"])
                out["variants"][name] = {"recall@5": round(found / len(questions), 3),
                                         "p50_ms": round(statistics.median(times), 2), "missed": misses}
            r = await host.call_tool("hermes_memory_recall", {"query": questions[0]["q"], "sources": ["documents"],
                                                              "limit": 5})  # the same path, through MCP
            out["through_mcp_ok"] = not r.is_error and bool(r.structured_content["items"])
    return out


def report(out: dict[str, Any]) -> None:
    print(f"{out['pages']} pages of docs/, {out['chunks']} chunks; added in {out['add_s']} s, embedded after "
          f"{out['embedded_s']} s; {out['questions']} questions")
    base = out["variants"]["words only (BM25)"]["recall@5"] or 1.0
    for name, v in out["variants"].items():
        print(f"  {name:20} recall@5 {v['recall@5']:.3f}  (x{v['recall@5'] / base:.2f} of words only)  "
              f"p50 {v['p50_ms']:.1f} ms")
    for q in out["variants"]["two stages"]["missed"]:
        print(f"    missed by two stages: {q}")


async def run(quick: bool = False) -> None:
    print("== documents: recall@5 over docs/*.md (hermes_docs_add, hermes_memory_recall sources=documents)")
    out = await measure(quick)
    report(out)
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    (results / "documents.json").write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")


def main() -> None:
    anyio.run(run, False)


if __name__ == "__main__":
    sys.exit(main())

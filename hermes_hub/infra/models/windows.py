"""The context windows of the usual models, in tokens, so a request leaves room for its answer.

    window("anthropic", "claude-sonnet-4-5")   # 200000
    window("openai", "llama3.2")               # None: a local model; its server decides, set agent.context_window

A name matches the first pattern it starts with (after any ``vendor/`` prefix, as OpenRouter writes
them). Figures are the vendors' published input+output windows; a local server (Ollama's ``num_ctx``,
vLLM's ``--max-model-len``) often runs a model with less than it can take, so for those set
``agent.context_window``. The scripted and sampling providers have no window (the host decides).
"""

from __future__ import annotations

KNOWN: tuple[tuple[str, int], ...] = (
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000), ("o3", 200_000), ("o4-mini", 200_000),
    ("gpt-3.5-turbo", 16_385),
    ("deepseek-chat", 128_000), ("deepseek-reasoner", 128_000),
    ("qwen-max", 32_768), ("qwen-plus", 131_072), ("qwen-turbo", 1_000_000),
    ("mistral-large", 128_000), ("mistral-small", 128_000),
    ("gemini-2", 1_048_576),
)


def window(provider: str | None, model: str | None) -> int | None:
    """The window of ``model`` as ``provider`` serves it, or None when it is not known here."""
    if provider not in ("anthropic", "openai") or not model:
        return None
    name = model.lower().rsplit("/", 1)[-1]
    return next((size for prefix, size in KNOWN if name.startswith(prefix)), None)

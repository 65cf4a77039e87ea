"""Model providers behind one interface (``base.py``), one module per vendor.

    provider = make_provider(config.agent)      # None when no model is configured
    reply = await provider.complete([Message("user", "hi")])

Vendor modules import their SDK only when chosen, so the command line stays quick to start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_hub.infra.models.base import (
    Message,
    Provider,
    ProviderError,
    Reply,
    ToolCall,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from hermes_hub.infra.config import AgentSection

__all__ = ["Message", "Provider", "ProviderError", "Reply", "ToolCall", "ToolSpec", "Usage", "make_provider"]


def make_provider(cfg: AgentSection) -> Provider:
    """The provider ``cfg`` (hub.json's ``agent``) describes. Raises ConfigError for a bad script file and
    ProviderError when ``cfg.provider`` is None (check ``cfg.provider`` first: no model means features that
    need one are off)."""
    if problems := cfg.problems():  # a section built in code skipped parse_config's check
        from hermes_hub.infra.errors import ConfigError

        raise ConfigError(problems)
    if cfg.provider == "anthropic":
        from hermes_hub.infra.models.anthropic import AnthropicProvider

        return AnthropicProvider(cfg)
    if cfg.provider == "openai":
        from hermes_hub.infra.models.openai import OpenAIProvider

        return OpenAIProvider(cfg)
    if cfg.provider == "sampling":  # bound to each call's host by the agent loop (``for_host``)
        from hermes_hub.infra.call import NO_HOST
        from hermes_hub.infra.models.sampling import SamplingProvider

        return SamplingProvider(NO_HOST, model_hint=cfg.model)
    if cfg.provider == "scripted":
        from hermes_hub.infra.models.scripted import ScriptedProvider

        return ScriptedProvider(cfg.script_path, cfg.script)  # type: ignore[arg-type]  # problems() saw a script
    raise ProviderError("no model is configured; set agent.provider in hub.json (anthropic, openai, sampling or scripted)")

"""A model request with the profile's settings, and an answer the length limit cut, never passed off as whole.

    reply = await ask(model, messages, system, specs, profile)
    text, cut = await finish(model, messages, system, profile, reply, note)   # continued once if it was cut

A reply that stopped at ``max_tokens`` without tool calls is continued once: the cut text goes back as
the model's turn and the model is asked to go on from where it stopped. If the continuation is cut too,
the answer says so and the run's stop reason is ``length``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from hermes_hub.core.agent.profiles import Profile
from hermes_hub.infra.models import Message, Provider, ProviderError, Reply, ToolSpec

CONTINUE = ("Your answer was cut off by the length limit. Continue exactly where it stopped, without repeating "
            "anything and without any preamble.")


def settings(profile: Profile) -> dict[str, Any]:
    """What each request of a run asks of the model, as ``Provider.complete`` takes it (and the trace shows)."""
    return {"max_tokens": profile.max_tokens, "temperature": profile.temperature, "top_p": profile.top_p}


async def ask(model: Provider, messages: list[Message], system: str, tools: Sequence[ToolSpec],
              profile: Profile) -> Reply:
    return await model.complete(messages, system=system, tools=tools, **settings(profile))


def cut_notice(profile: Profile) -> str:
    return (f"\n\n[This answer was cut at the length limit ({profile.max_tokens} tokens) and is incomplete; "
            f"ask for the rest, or raise max_tokens.]")


async def finish(model: Provider, messages: list[Message], system: str, profile: Profile, reply: Reply,
                 note: Callable[..., None]) -> tuple[str, bool, Reply | None]:
    """(answer, cut, the continuation's reply or None) for a reply without tool calls. ``note(**fields)``
    records the continuation request in the trace."""
    if reply.stop_reason != "max_tokens":
        return reply.text, False, None
    asked = time.perf_counter()
    more = [*messages, Message("assistant", reply.text), Message("user", CONTINUE)]
    try:
        rest = await model.complete(more, system=system, tools=(), **settings(profile))
    except ProviderError as e:
        note(continuation=True, error=str(e)[:300], seconds=round(time.perf_counter() - asked, 4))
        return reply.text + cut_notice(profile), True, None
    note(continuation=True, input_tokens=rest.usage.input_tokens, output_tokens=rest.usage.output_tokens,
         finish=rest.stop_reason, seconds=round(time.perf_counter() - asked, 4))
    text = reply.text + rest.text
    if rest.stop_reason == "max_tokens" or rest.tool_calls:
        return text + cut_notice(profile), True, rest
    return text, False, rest

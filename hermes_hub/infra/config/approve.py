"""``guards.approve``: which tool calls need a person's yes before they run (``hermes_hub.core.pipeline.approval``)."""

from __future__ import annotations

from pydantic import Field

from hermes_hub.infra.config.servers import _Strict


class ApproveSection(_Strict):
    """Present: every call of a tool matching ``tools`` (public-name globs), and of every tool annotated
    ``destructiveHint: true`` unless ``approve_destructive`` is false, waits for a yes from the caller."""

    tools: list[str] = Field(default_factory=list, max_length=200)  # globs over public tool names
    approve_destructive: bool = True
    timeout: float = Field(300.0, ge=1.0, le=86_400.0)  # seconds a call waits for the answer, then it is refused

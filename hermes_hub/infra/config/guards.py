"""``guards``: the steps of the call pipeline that hub.json configures (``hermes_hub.core.pipeline``)."""

from __future__ import annotations

from pydantic import Field

from hermes_hub.infra.config.approve import ApproveSection
from hermes_hub.infra.config.guard_rules import LimitRule, MaskSection
from hermes_hub.infra.config.servers import _Strict


class GuardsSection(_Strict):
    """What every tool call passes, whoever calls it (a host's model, the agent loop)."""

    approve: ApproveSection | None = None  # calls that need a person's yes (absent: none do)
    mask: MaskSection | None = None  # masking at the exit (None: off)
    limits: list[LimitRule] = Field(default_factory=list)  # every rule that covers a call applies

"""``guards``: the steps of the call pipeline that hub.json configures (``hermes_hub.pipeline``)."""

from __future__ import annotations

from hermes_hub.config.approve import ApproveSection
from hermes_hub.config.servers import _Strict


class GuardsSection(_Strict):
    """What every tool call passes, whoever calls it (a host's model, the agent loop)."""

    approve: ApproveSection | None = None  # calls that need a person's yes (absent: none do)

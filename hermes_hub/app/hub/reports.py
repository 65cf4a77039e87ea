"""What a running hub reports about itself: its servers' states, what its tool lists cost in tokens, and
(once started) memory, artifacts, agent runs and summaries, each cut to what the viewer may see.

``Reports`` is the part of ``Hub`` that only reads: ``hermes_hub_status``, the status page and
``hermes-hub servers`` ask it.
"""

from __future__ import annotations

from typing import Any

import anyio

from hermes_hub.app.hub import status
from hermes_hub.core.agent.gate import RunGate
from hermes_hub.core.agent.summaries import Summarizer
from hermes_hub.core.aggregation.catalog import Catalog
from hermes_hub.infra.call import Identity
from hermes_hub.infra.config import HubConfig
from hermes_hub.downstream import Pool
from hermes_hub.services.memory import Memories
from hermes_hub.infra.storage import Store
from hermes_hub.core.toolsets.tokens import token_report
from hermes_hub.protocol.upstream.endpoint import Endpoint


class Reports:
    """The hub's reports; ``Hub`` supplies the parts they read."""

    config: HubConfig
    pool: Pool
    catalog: Catalog
    endpoints: dict[str | None, Endpoint]
    run_gate: RunGate
    started: bool
    store: Store
    memories: Memories
    summaries: Summarizer | None

    def status(self, viewer: Identity) -> dict[str, Any]:
        """The servers ``viewer`` may use and their states (``hub.local``: everything; see ``hermes_hub.app.hub.status``)."""
        return status.hub_status(self.config, self.pool, self.catalog, viewer,
                                 self.endpoints[None].view.list_tools(viewer))

    def token_report(self, viewer: Identity) -> dict[str, Any]:
        """What each endpoint's tool list costs ``viewer`` in tokens, and what lazy saves."""
        return token_report(self.endpoints.values(), viewer)

    async def report(self, viewer: Identity) -> dict[str, Any]:
        """``status(viewer)`` with what its tools cost in tokens and the memory subsystem: an admin sees
        the hub's counts, queues and errors; anyone else the counts of their own memories."""
        out = self.status(viewer)
        out["tool_tokens"] = await anyio.to_thread.run_sync(self.token_report, viewer)
        if not self.started:  # no store yet: the servers' part only
            return out
        await status.add_accounts(self.pool, out["servers"], viewer)  # per_user servers: is the viewer's connected
        memory = await self.memories.status(None if viewer.is_admin else viewer.user_id)
        if not viewer.is_admin:  # queue depths count everyone's rows; errors may quote a key or an url
            memory = {k: status.hidden(v, viewer) if k.endswith("_error") else v for k, v in memory.items()
                      if k not in ("pending", "extraction_jobs")}
        out["memory"] = memory
        out["artifacts"] = await self.store.artifact_counts(None if viewer.is_admin else viewer.user_id)
        if viewer.is_admin:
            out["agent_runs"] = self.run_gate.counts()  # running and waiting (agent.max_concurrent)
        if self.summaries is not None:
            out["summaries"] = {"error": status.hidden(self.summaries.error, viewer)}
            if viewer.is_admin:
                out["summaries"]["queue"] = await self.summaries.store.summary_counts()
        return out

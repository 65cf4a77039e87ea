"""After a run: the background model folds what was said into the session's working memory
(``memory.working``), when ``memory.working_judge`` is on. Help for later runs, never a reason to fail this one."""

from __future__ import annotations

import logging
from typing import Any

import anyio

from hermes_hub.core.agent.summaries import Summarizer
from hermes_hub.services.memory import Memories
from hermes_hub.services.memory.working import WorkingMemory
from hermes_hub.infra.models import ProviderError

log = logging.getLogger("hermes_hub.core.agent")
TIMEOUT = 60.0  # seconds the fold may take before the run returns without it


async def remember_working(memories: Memories | None, summaries: Summarizer | None, user_id: str, session_id: str,
                           transcript: list[dict[str, Any]]) -> None:
    if memories is None or summaries is None or not memories.cfg.working_judge:
        return
    try:
        with anyio.move_on_after(TIMEOUT):
            await WorkingMemory(memories.store).update(summaries.provider, user_id, session_id, transcript)
    except (ProviderError, ValueError) as e:
        log.warning("the working memory of session %s was not updated: %s", session_id, e)
    except Exception:  # noqa: BLE001
        log.exception("the working memory of session %s was not updated", session_id)

"""The masking step: sensitive values in a result are replaced before any host or model sees it.

    steps = masking_steps(config, vault=lambda: hub.vault)  # [MaskStep] when guards.mask is set
    # a result "call Ann at 138 1234 5678" leaves the catalog as "call Ann at [phone#1]"

It is the innermost step, so everything after it (the audit row's error text, a session's tool
message, an agent run's trace, the host) holds the masked result only. The same detectors mask what
the hub keeps of every call's arguments (``argument_detectors``: the hub's ``Masker``), while the tool
gets them as sent; this step finds them too, so the original arguments are sealed with the call.
The results it covers are those of the calls whose server and public tool name match
``guards.mask.servers`` and ``tools`` (globs). It masks the text blocks, the text of embedded
resources and every string of ``structuredContent`` with one placeholder per distinct value in the
call (``hermes_hub.core.pipeline.detectors``). When something was masked, the original result is sealed
in the vault under the call id (``originals``) and ``call.notes["masked"]`` counts what was found, by
kind (``"arguments_masked"``: in the arguments, sealed with the call whatever its server, since the
stored copies are masked for every call).

Detection is linear in the result's length, which ``hub.max_result_bytes`` already bounds; a result
past ``THREAD_CHARS`` is masked on a worker thread, so a big one never stalls the event loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from fnmatch import fnmatchcase
from typing import Any

import anyio
import mcp.types as types

from hermes_hub.infra.config import HubConfig
from hermes_hub.infra.config.guard_rules import MaskSection
from hermes_hub.infra.masking import Masker
from hermes_hub.core.pipeline import Call, Result, Send
from hermes_hub.core.pipeline import originals
from hermes_hub.core.pipeline.detectors import Found, Redactor
from hermes_hub.services.vault import Vault

log = logging.getLogger("hermes_hub.core.pipeline")
THREAD_CHARS = 32_000  # below this, masking costs less than the hop to a thread
PRUNE_EVERY = 3600.0  # seconds between sweeps of expired originals


class MaskStep:
    def __init__(self, config: MaskSection, vault: Callable[[], Vault | None], max_result_bytes: int) -> None:
        self.config = config
        self.redactor = Redactor(config.detectors, config.patterns)
        self.vault = vault
        self.seal_limit = 2 * max_result_bytes + 64 * 1024  # the JSON of a result the catalog has cut to size
        self._pruned = 0.0
        self._covered: dict[tuple[str, str], bool] = {}  # (server, tool) -> covered, the globs matched once

    def covers(self, call: Call) -> bool:
        key = (call.server, call.tool)
        if (known := self._covered.get(key)) is None:
            if len(self._covered) > 4096:  # bounded: a catalog's tools, and no more
                self._covered.clear()
            known = self._covered[key] = (any(fnmatchcase(call.server, g) for g in self.config.servers)
                                          and any(fnmatchcase(call.tool, g) for g in self.config.tools))
        return known

    async def __call__(self, call: Call, proceed: Send) -> Result:
        sent = await self._scan(call.arguments)  # what the hub keeps of the arguments is masked (masking.Masker)
        result = await proceed()
        masked, found = result, None
        if isinstance(result, types.CallToolResult) and self.covers(call):
            masked, found = await self._off_loop(_chars(result), self.mask, result)
            if found.originals:
                call.notes["masked"] = dict(found.counts)
            else:
                found = None
        if sent is not None:
            call.notes["arguments_masked"] = dict(sent.counts)
        if found is not None or sent is not None:
            await self._seal(call, result if found is not None else None, found, sent)
        return masked

    async def _scan(self, arguments: dict[str, Any]) -> Found | None:
        """The detectors over the call's argument strings: None when they find nothing (then nothing is sealed)."""
        found = self.redactor.session()

        def scan() -> Found:
            _walk(arguments, found)
            return found

        await self._off_loop(_value_chars(arguments), scan)
        return found if found.originals else None

    @staticmethod
    async def _off_loop(chars: int, work: Callable[..., Any], *args: Any) -> Any:
        if chars > THREAD_CHARS:
            return await anyio.to_thread.run_sync(work, *args)
        return work(*args)

    def mask(self, result: types.CallToolResult) -> tuple[types.CallToolResult, Found]:
        """``result`` with what the detectors find replaced; the placeholders of this one call."""
        found = self.redactor.session()
        content = [_block(b, found) for b in result.content]
        structured = None if result.structured_content is None else _walk(result.structured_content, found)
        if not found.originals:
            return result, found
        return result.model_copy(update={"content": content, "structured_content": structured}), found

    async def _seal(self, call: Call, result: types.CallToolResult | None, found: Found | None,
                    sent: Found | None) -> None:
        vault = self.vault()
        if vault is None:  # a catalog run without a store (unit tests): masked, nothing kept
            return
        counts = dict(found.counts if found is not None else {})
        for kind, n in (sent.counts if sent is not None else {}).items():
            counts[kind] = counts.get(kind, 0) + n
        try:
            await originals.seal(vault, call, result, counts, self.seal_limit,
                                 call.arguments if sent is not None else None)
            call.notes["sealed"] = True
            if time.monotonic() - self._pruned > PRUNE_EVERY:
                self._pruned = time.monotonic()
                await originals.prune(vault.store, keep_hours=self.config.keep_hours)
        except Exception:  # the masked result still goes out: losing the original never unmasks anything
            log.exception("could not keep the original of call %s (%s); it is masked and cannot be unmasked",
                          call.call_id, call.tool)


def masking_steps(config: HubConfig, vault: Callable[[], Vault | None]) -> list[MaskStep]:
    mask = config.guards.mask
    return [] if mask is None else [MaskStep(mask, vault, config.hub.max_result_bytes)]


def argument_detectors(config: HubConfig) -> Redactor | None:
    """``guards.mask``'s detectors, for the arguments the hub keeps (``Masker(detect=...)``): one setting masks
    results on their way out and the stored copies of arguments (audit, session history, traces)."""
    mask = config.guards.mask
    return None if mask is None else Redactor(mask.detectors, mask.patterns)


def stored_masker(config: HubConfig) -> Masker:
    """The masker of what a command keeps outside a running hub (the CLI's audit rows), as the hub's."""
    redactor = argument_detectors(config)
    return Masker(tuple(config.storage.audit_mask_patterns), detect=None if redactor is None else redactor.session)


def _block(block: Any, found: Found) -> Any:
    """``block`` with its text masked; the block itself when nothing in it was."""
    if isinstance(block, types.TextContent):
        text = found.text(block.text)
        return block if text is block.text else block.model_copy(update={"text": text})
    if isinstance(block, types.EmbeddedResource) and isinstance(block.resource, types.TextResourceContents):
        text = found.text(block.resource.text)
        return block if text is block.resource.text else block.model_copy(
            update={"resource": block.resource.model_copy(update={"text": text})})
    return block


def _walk(value: Any, found: Found, depth: int = 0) -> Any:
    if depth > 64:  # what is not scanned does not go out
        return "…(nested deeper than 64 levels; masked)"
    if isinstance(value, str):
        return found.text(value)
    if isinstance(value, dict):
        return {k: _walk(v, found, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, found, depth + 1) for v in value]
    return value


def _value_chars(value: Any, depth: int = 0) -> int:
    """About how many characters a JSON value's strings hold (what scanning it costs)."""
    if isinstance(value, str):
        return len(value)
    if depth > 64:
        return 0
    if isinstance(value, dict):
        return sum(len(str(k)) + _value_chars(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return sum(_value_chars(v, depth + 1) for v in value)
    return 8


def _chars(result: types.CallToolResult) -> int:
    n = sum(len(getattr(b, "text", "") or "") + len(getattr(getattr(b, "resource", None), "text", "") or "")
            for b in result.content)
    return n + (0 if result.structured_content is None else len(str(result.structured_content)))

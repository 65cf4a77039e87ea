"""The approval step (``guards.approve``): a call of a tool that needs a person's yes waits for it,
whoever makes the call (a host's model, the agent loop), and runs only with it.

    step = ApprovalStep(Rules.of(config.guards.approve), book)   # book: ``approvals.Approvals``

Which calls: public names matching ``tools``, and every tool annotated ``destructiveHint: true`` unless
``approve_destructive`` is false. How the caller answers, in this order:

1. a yes already given for exactly this call (caller, tool, argument digest), unexpired and unspent:
   the agent's own confirmation (asked once, not twice), or an out-of-band yes whose call was cut off;
2. a handshake-era host that can be asked: elicitation ("Allow ...?"), answered on the caller's own
   connection;
3. a 2026-07-28 host that answers elicitation rounds: an ``InputRequiredResult`` whose state names the
   approval; the retry must carry the same tool and arguments, from the same caller;
4. otherwise out of band: the call waits, parked, until the caller approves or denies it on the status
   page or with ``hermes-hub approve ID`` / ``deny ID`` (any replica), or the approval expires.

Whatever the path, the yes is spent in the store by a conditional update naming the caller, tool and
digest (``storage.approvals``), so it can never run other arguments, another tool or another user's
call. A downstream's own input rounds after the yes keep the approval in their state, so they are not
asked again. The person sees every argument the yes covers (``preview``); a call that cannot be shown
so is refused before anyone is asked, and the tool does not run. What happened goes in ``call.notes["approval"]``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

import anyio
import mcp.types as types

from hermes_hub.infra.call import InputRounds
from hermes_hub.infra.config.approve import ApproveSection
from hermes_hub.core.pipeline import Call, Pipeline, Result, Send
from hermes_hub.core.pipeline.approvals import Approvals, digest_of
from hermes_hub.core.pipeline.preview import Preview, Unshowable, refusal
from hermes_hub.infra.storage.approvals import APPROVED, DENIED, USED, ApprovalRecord
from hermes_hub.infra.storage.records import utcnow

log = logging.getLogger("hermes_hub.approvals")
STATE_PREFIX = "hermes-hub/approval/"
ASKED, CONTINUED = "q/", "c/"  # our question's round; a downstream's round after the yes
QUESTION_KEY = "hermes-approval"
ALLOW = {"type": "object", "properties": {"allow": {"type": "boolean", "title": "Allow"}}, "required": ["allow"]}


@dataclass(frozen=True)
class Rules:
    tools: tuple[str, ...] = ()
    destructive: bool = True
    timeout: float = 300.0

    @classmethod
    def of(cls, section: ApproveSection) -> Rules:
        return cls(tuple(section.tools), section.approve_destructive, section.timeout)

    def needs(self, tool: str, definition: types.Tool | None) -> bool:
        hints = definition.annotations if definition is not None else None
        if self.destructive and hints is not None and hints.destructive_hint is True:
            return True
        return any(fnmatchcase(tool, glob) for glob in self.tools)


def refused(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


class ApprovalStep:
    def __init__(self, rules: Rules, book: Approvals) -> None:
        self.rules, self.book = rules, book

    async def __call__(self, call: Call, proceed: Send) -> Result:
        if not self.rules.needs(call.tool, call.definition):
            return await proceed()
        rounds = call.ctx.rounds
        state = (rounds.request_state if rounds else None) or ""
        if state.startswith(STATE_PREFIX):
            return await self._resumed(call, proceed, state.removeprefix(STATE_PREFIX))
        digest = await digest_of(call.arguments)
        if (spent := await self.book.use(call.ctx.caller, call.tool, digest)) is not None:
            return await self._run(call, proceed, spent, "given before")
        try:
            record = await self.book.open(call.ctx.caller, call.tool, call.server, call.arguments,
                                          timeout=self.rules.timeout, digest=digest)
        except Unshowable as e:  # a yes to what the person cannot see is no yes: nobody is asked
            call.notes["approval"] = {"state": "unshowable"}
            log.warning("call of %s by %s refused: it cannot be shown for approval (%s)", call.tool, call.user_id, e)
            return refused(refusal(call.tool, e))
        call.notes["approval"] = {"id": record.id, "state": "pending"}
        host = call.ctx.host
        if host.elicit is not None and not (rounds is not None and host.in_rounds):
            answered = await self._elicit(call, record)
            if answered is not None:
                return await self._settled(call, proceed, answered)
        elif rounds is not None and "elicitation" in host.in_rounds:
            return types.InputRequiredResult(
                input_requests={QUESTION_KEY: types.ElicitRequest(params=self._question(record))},
                request_state=f"{STATE_PREFIX}{ASKED}{record.id}")
        return await self._settled(call, proceed, await self._parked(call, record))

    # -- the paths --------------------------------------------------------------------------

    async def _elicit(self, call: Call, record: ApprovalRecord) -> ApprovalRecord | None:
        """The caller's answer through their host, or None when the host failed to ask (then: out of band)."""
        assert call.ctx.host.elicit is not None
        left = (record.expires_at - utcnow()).total_seconds()
        try:
            with anyio.move_on_after(left):
                answer = await call.ctx.host.elicit(self._question(record))
                return await self.book.decide(record.id, call.ctx.caller, approve=_allowed(answer), via="elicitation")
        except Exception as e:  # noqa: BLE001 - a host that cannot ask after all: the person answers out of band
            log.info("approval %s: the host could not ask (%s); waiting out of band", record.id, e)
            return None
        return await self.book.expire(record)

    async def _parked(self, call: Call, record: ApprovalRecord) -> ApprovalRecord:
        how = (f"approve or deny it on the hub's status page or with `hermes-hub approve {record.id}` / "
               f"`hermes-hub deny {record.id}`")
        log.warning("call of %s by %s waits for approval %s (up to %gs): %s", call.tool, call.user_id, record.id,
                    self.rules.timeout, how)
        if call.ctx.progress is not None:
            try:
                await call.ctx.progress(0, None, f"waiting for approval {record.id}: {how}")
            except Exception:  # noqa: BLE001 - a host gone deaf to progress still gets its answer
                pass
        return await self.book.wait(record)

    async def _resumed(self, call: Call, proceed: Send, state: str) -> Result:
        """A 2026-07-28 host's retry: its answer to our question, or a downstream's round after the yes."""
        kind, _, rest = state.partition("/")
        approval_id, _, inner = rest.partition("/")
        record = await self.book.store.get_approval(approval_id)
        caller = call.ctx.caller
        if record is None or (record.user_id, record.role) != (caller.user_id, caller.role):
            return refused("Not approved: this approval is unknown, expired or already used; call the tool again "
                           "to ask the person again.")
        if record.tool != call.tool or record.digest != await digest_of(call.arguments):
            return refused(f"Not approved: approval {record.id} was given for {record.tool} with other arguments; "
                           f"an approval covers exactly the call it was asked for. Call the tool again to ask for "
                           f"this one.")
        call.notes["approval"] = {"id": record.id, "state": record.state}
        if f"{kind}/" == CONTINUED:
            if record.state != USED or record.expires_at <= utcnow():
                return refused(f"Not approved: approval {record.id} has expired; call the tool again.")
            return await self._forward(call, proceed, record, inner or None)
        answer = ((call.ctx.rounds.input_responses if call.ctx.rounds else None) or {}).get(QUESTION_KEY)
        if answer is None:
            return refused(f"Not approved: the retry carried no answer to approval {record.id}; call the tool again.")
        try:
            decided = await self.book.decide(record.id, caller, approve=_allowed(answer), via="input_required")
        except Exception:  # noqa: BLE001 - answered twice, or past its expiry
            return refused(f"Not approved: approval {record.id} was already answered or has expired; call the tool "
                           f"again to ask the person again.")
        return await self._settled(call, proceed, decided, fresh_rounds=True)

    # -- after the answer -------------------------------------------------------------------

    async def _settled(self, call: Call, proceed: Send, record: ApprovalRecord, fresh_rounds: bool = False) -> Result:
        call.notes["approval"] = {"id": record.id, "state": record.state, "via": record.decided_via}
        if record.state == DENIED:
            return refused(f"Not approved: the person declined the call to '{call.tool}' (approval {record.id}); "
                           f"do not retry it. Go on without it, or ask the user what to do instead.")
        if record.state != APPROVED:
            return refused(f"Not approved: nobody answered within {self.rules.timeout:g} s (approval {record.id} "
                           f"expired). Ask the user whether to go ahead; then call the tool again and they approve it "
                           f"in their host, on the hub's status page or with `hermes-hub approve ID`.")
        spent = await self.book.use(call.ctx.caller, call.tool, record.digest, record.id)
        if spent is None or spent.digest != await digest_of(call.arguments):
            return refused(f"Not approved: approval {record.id} was already used or has expired; call the tool again.")
        if fresh_rounds:  # our question's state must not reach the server: the call starts there afresh
            call.ctx = call.ctx.replace(rounds=InputRounds())
        return await self._run(call, proceed, spent, record.decided_via or "")

    async def _run(self, call: Call, proceed: Send, record: ApprovalRecord, via: str) -> Result:
        call.notes["approval"] = {"id": record.id, "state": "used", "via": via}
        return await self._forward(call, proceed, record, None, keep_rounds=True)

    async def _forward(self, call: Call, proceed: Send, record: ApprovalRecord, inner: str | None,
                       keep_rounds: bool = False) -> Result:
        if not keep_rounds:
            rounds = call.ctx.rounds
            call.ctx = call.ctx.replace(rounds=InputRounds(rounds.input_responses if rounds else None, inner))
        result = await proceed()
        if isinstance(result, types.InputRequiredResult):  # the server asks in turn: its rounds stay approved
            result = result.model_copy(update={
                "request_state": f"{STATE_PREFIX}{CONTINUED}{record.id}/{result.request_state or ''}"})
        return result

    def _question(self, record: ApprovalRecord) -> types.ElicitRequestFormParams:
        shown = "\n".join(f"  {line}" for line in Preview.of_json(record.preview).lines())
        return types.ElicitRequestFormParams(
            message=f"Allow {record.tool} with these arguments?\n{shown}\nThe whole call: `hermes-hub approvals show "
                    f"{record.id}` or /status/approvals/{record.id}. (approval {record.id}; unanswered, it is refused "
                    f"after {self.rules.timeout:g} s)", requested_schema=ALLOW)


def _allowed(answer: Any) -> bool:
    """True only for an explicit accept with ``allow: true``; anything else is a no."""
    if isinstance(answer, dict):
        action, content = answer.get("action"), answer.get("content")
    else:
        action, content = getattr(answer, "action", None), getattr(answer, "content", None)
    return action == "accept" and isinstance(content, dict) and content.get("allow") is True


def approval_of(pipeline: Pipeline) -> ApprovalStep | None:
    """The pipeline's approval step, if ``guards.approve`` is configured (the agent grants its own yes to it)."""
    return next((s for s in pipeline.steps if isinstance(s, ApprovalStep)), None)


def waiting(steps: Sequence[Any]) -> int:
    """How many calls wait out of band now (for telemetry: approvals waiting)."""
    return sum(len(s.book.parked) for s in steps if isinstance(s, ApprovalStep))

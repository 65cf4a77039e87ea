"""``hermes-hub eval FILE [--profile P] [--model M --base-url URL] [--json]``: run a set of cases against
the hub of ``--config`` (started in this process, reached through an MCP client) and print each case's
outcome and the pass rate; exit 1 when a case fails. ``hermes-hub eval --set mine`` reruns the cases
made from your runs rated down; ``hermes-hub eval add RUN_ID`` makes one from a run by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes_hub.app.cli.admin import _run
from hermes_hub.infra.errors import ConfigError, HubError

if TYPE_CHECKING:
    from hermes_hub.infra.config import HubConfig
    from hermes_hub.services.evaluation import Report


@click.command("eval")
@click.argument("args", nargs=-1, metavar="FILE | add RUN_ID")
@click.option("--config", default="hub.json", show_default=True, help="hub.json of the hub to evaluate")
@click.option("--set", "case_set", type=click.Choice(["mine"]), help="mine: the cases made from your runs rated down")
@click.option("--profile", help="run every case with this agent profile (default: each case's, else the set's)")
@click.option("--model", help="run on this model instead of agent.model (every profile)")
@click.option("--base-url", help="an OpenAI-compatible endpoint to run on (Ollama: http://localhost:11434/v1)")
@click.option("--user", help="whose cases and runs (default: the local user)")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def eval_cmd(args: tuple[str, ...], config: str, case_set: str | None, profile: str | None, model: str | None,
             base_url: str | None, user: str | None, as_json: bool) -> None:
    """Run evaluation cases (FILE, or --set mine) against the hub, or `eval add RUN_ID` to keep a run as a case."""
    if args[:1] == ("add",):
        if len(args) != 2:
            raise click.UsageError("give one run id: hermes-hub eval add RUN_ID")
        _run(_add, config, args[1], user, as_json)
        return
    if (len(args) == 1) == (case_set is not None):
        raise click.UsageError("give a case FILE or --set mine (one of the two)")
    report = _run(_evaluate, config, args[0] if args else None, profile, model, base_url, user)
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
    else:
        for line in report_lines(report):
            click.echo(line)
    if report.passed < report.total:
        raise SystemExit(1)


def report_lines(report: Report) -> list[str]:
    out = []
    for o in report.outcomes:
        how = f"{o.stop_reason or 'no run'}" + (f", intents {'+'.join(o.intents)}" if o.intents else "") + (
            f", tools {', '.join(o.tools)}" if o.tools else "")
        out.append(f"{'PASS' if o.passed else 'FAIL'}  {o.case.id}  ({how}; {o.seconds:.1f}s)")
        if o.case.note and not o.passed:
            out.append(f"      note: {o.case.note}")
        out += [f"      - {f}" for f in o.failures]
    out.append(f"passed {report.passed}/{report.total} ({report.rate:.1%})")
    return out


def overridden(cfg: HubConfig, model: str | None, base_url: str | None) -> HubConfig:
    """``cfg`` running every profile on ``model`` (at ``base_url``, OpenAI-compatible), to compare models."""
    from hermes_hub.infra.config import MODEL_KEYS

    if model is None and base_url is None:
        return cfg
    provider = "openai" if base_url else cfg.agent.provider
    if provider not in ("openai", "anthropic"):
        raise ConfigError([("--model", f"agent.provider is {cfg.agent.provider}; give --base-url with --model to run "
                                       "on an OpenAI-compatible endpoint (Ollama: http://localhost:11434/v1)")])
    if not (model or cfg.agent.model):
        raise ConfigError([("--model", "give --model with --base-url: the model the endpoint serves, e.g. qwen2.5")])
    changes: dict[str, Any] = {"provider": provider, "model": model or cfg.agent.model, "script": None}
    if base_url:
        changes["base_url"] = base_url
    agent = cfg.agent.model_copy(update=changes)
    agents = {name: p.model_copy(update={k: None for k in MODEL_KEYS}) for name, p in cfg.agents.items()}
    out = cfg.model_copy(update={"agent": agent, "agents": agents})
    if problems := agent.problems():
        raise ConfigError(problems)
    return out


async def _evaluate(config: str, path: str | None, profile: str | None, model: str | None, base_url: str | None,
                    user: str | None) -> Report:
    from hermes_hub.infra.call import Identity
    from hermes_hub.infra.config import load_config
    from hermes_hub.services.evaluation import CaseSet, Evaluator, load_cases
    from hermes_hub.services.evaluation.cases import parse_cases
    from hermes_hub.app.hub import Hub

    cases: CaseSet | None = load_cases(Path(path)) if path else None
    cfg = overridden(load_config(config), model, base_url)
    if cfg.agent.provider is None:
        raise HubError("evaluation runs the agent: set agent.provider in hub.json (or give --model and --base-url)")
    hub = Hub(cfg, config_path=config)
    if user:
        hub.local = Identity(user, hub.local.role)
    async with hub:
        longest = max((s.startup_timeout for s in cfg.enabled().values()), default=0)
        await hub.wait_settled(longest + 1)
        if cases is None:
            mine = [r.case for r in await hub.store.list_eval_cases(hub.local.user_id)]
            if not mine:
                raise HubError("your evaluation set is empty: rate a run down with hermes_feedback, or add one with "
                               "`hermes-hub eval add RUN_ID` (`hermes-hub traces` lists your runs)")
            cases = parse_cases({"description": "your runs rated down", "cases": mine}, "your evaluation set")
        evaluator = Evaluator(profile, prefix=f"{cfg.hub.prefix}{cfg.hub.separator}" if cfg.hub.prefix else "")
        async with hub.client(mode="legacy", elicitation_callback=evaluator.elicitation) as host:
            return await evaluator.run(host, cases)


async def _add(config: str, run_id: str, user: str | None, as_json: bool) -> None:
    from hermes_hub.infra.config import load_config
    from hermes_hub.services.evaluation.feedback import keep_case
    from hermes_hub.services.identity import local_user_name
    from hermes_hub.infra.storage import open_store

    cfg = load_config(config)
    who = user or cfg.auth.local_user or local_user_name()
    async with open_store(cfg.storage.url, base_dir=cfg.base_dir) as store:
        case = await keep_case(store, who, run_id)
    if as_json:
        click.echo(json.dumps(case, ensure_ascii=False, indent=2))
    else:
        click.echo(f"added case {case['id']} to your evaluation set; `hermes-hub eval --set mine` reruns it")

"""The layout is enforced, not hoped for: the package's imports, read from its source, point one way,
and the built wheel installs one top-level name, ``hermes_hub``, whose chat and demo servers run anywhere.

Every import counts: at module level, inside a function (a lazy import is still a dependency) and under
``TYPE_CHECKING`` (an annotation is one too; typing-only cycles are cycles). A failure names the file,
the line and the import.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hermes_hub"
MAX_LINES = 400

# The package is five strata and the programs that stand apart. Lowest first: a stratum may import
# itself and the strata below it, never one above. Inside a stratum its units keep their own order, lowest
# first, the same way. A new unit must be placed here; at most MAX_LOOSE modules sit loose at the top.
STRATA: dict[str, list[set[str]]] = {
    "infra": [
        {"errors"},
        {"masking", "sdk", "call", "config"},  # vocabulary every layer speaks
        {"bridge", "events", "telemetry"},  # a call that outlives the host's request; the event bus; spans and metrics
        {"storage", "throttle"},
        {"models"},  # model providers: for the agent, memory, summaries and `check`
    ],
    "services": [
        {"vault", "audit", "sessions", "identity", "evaluation"},  # domain services on the store
        {"memory"},
    ],
    "downstream": [set()],  # the hub as an MCP client of its servers (a stratum of its own modules)
    "core": [
        {"pipeline"},  # the steps around every tool call: guards, limits, approvals, telemetry
        {"aggregation"},
        {"toolsets"},
        {"agent"},
        {"schedules"},  # agent runs at a time: timing, the firing loop, the inbox (issue 24)
        {"builtins"},
    ],
    "protocol": [
        {"authorization"},  # the hub as an OAuth authorization server for hosts
        {"upstream"},  # what hosts talk to, short of a running hub
    ],
    "app": [
        {"hub"},  # the composition root
        {"web"},  # the status page reads a running hub
        {"serving"},  # the hub mounted over HTTP and stdio
        {"cli"},
    ],
}
# The bundled demo servers and `hermes-hub chat`'s program use the MCP SDK only: they import no stratum.
APART = {"demo", "chat"}
LOOSE = {"__main__", "hermes_hub"}  # `python -m hermes_hub`; the package's public names
MAX_LOOSE = 6
LAYERS: list[set[str]] = [{f"{s}.{u}" if u else s for u in layer} or {s}
                          for s, layers in STRATA.items() for layer in layers]
LAYERS = [set(APART)] + LAYERS + [LOOSE]  # the programs apart import nothing of the hub, so they sit lowest
LAYER = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}
LAYER.update({s: min(i for u, i in LAYER.items() if u.split(".")[0] == s) for s in STRATA})  # its __init__
MAX_FUNCTION_LINES = 80


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def unit(module: str) -> str:
    """``hermes_hub.core.toolsets.view`` -> ``core.toolsets``; a module of a stratum without units
    (``hermes_hub.downstream.pool``) -> ``downstream``; a stratum's own ``__init__`` -> the stratum;
    the package itself -> ``hermes_hub``."""
    parts = module.split(".")
    if len(parts) == 1:
        return parts[0]
    if parts[1] in STRATA and len(parts) > 2 and STRATA[parts[1]] != [set()]:
        return f"{parts[1]}.{parts[2]}"
    return parts[1]


def imports(module: str, path: Path | None = None) -> list[tuple[int, str]]:
    """(line, imported hermes_hub module) for every import in ``module``, wherever it sits."""
    path = path or MODULES[module]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, up level-1
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            # `from hermes_hub import audit` imports the module hermes_hub.services.audit, not the package's names
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.split(".")[0] == "hermes_hub" and n != module]
    return found


GRAPH = {m: imports(m) for m in MODULES}


def where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(PACKAGE.parent)}:{line}"


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_unit_of_the_package_has_a_place_in_the_layers():
    unplaced = sorted({unit(m) for m in MODULES} - set(LAYER))
    assert not unplaced, f"place these in LAYERS of tests/test_layout.py: {unplaced}"


def test_the_top_of_the_package_is_the_strata_the_programs_apart_and_a_few_loose_modules():
    tops = {p.name.removesuffix(".py") for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert tops == set(STRATA) | APART | {"__init__", "__main__"}, f"top of hermes_hub/: {sorted(tops)}"
    assert len(loose) <= MAX_LOOSE, f"loose modules at the top ({len(loose)} > {MAX_LOOSE}): {loose}"


def test_no_module_imports_from_a_layer_above_its_own():
    upward = [f"{where(m, line)}: {unit(m)} (layer {LAYER[unit(m)]}) imports {target} "
              f"({unit(target)}, layer {LAYER[unit(target)]})"
              for m, found in GRAPH.items() for line, target in found
              if LAYER.get(unit(target), -1) > LAYER.get(unit(m), len(LAYERS))]
    assert not upward, "imports that point upward:\n" + "\n".join(upward)


def test_no_two_packages_import_each_other():
    edges: dict[str, set[str]] = {}
    for m, found in GRAPH.items():
        edges.setdefault(unit(m), set()).update(unit(t) for _, t in found if unit(t) != unit(m))
    found = cycles(edges)
    assert not found, "packages that import each other: " + "; ".join(" <-> ".join(c) for c in found)


def test_no_two_modules_import_each_other():
    found = cycles({m: {t for _, t in targets if t in MODULES} for m, targets in GRAPH.items()})
    detail = [" <-> ".join(c) + "\n  " + "\n  ".join(
        f"{where(m, line)} imports {t}" for m in c for line, t in GRAPH[m] if t in c) for c in found]
    assert not found, "module cycles:\n" + "\n".join(detail)


def test_no_module_is_longer_than_the_cap():
    long = [f"{p.relative_to(PACKAGE.parent)}: {n} lines" for p in MODULES.values()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert not long, f"modules over {MAX_LINES} lines (split them by concept):\n" + "\n".join(long)


def test_no_function_is_longer_than_the_cap():
    long = []
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if (n := node.end_lineno - start + 1) > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}: {n} lines")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them by step):\n" + "\n".join(long)


def test_docs_architecture_lists_the_tree_as_it_is():
    from tests.layout_doc import DOC, block, current

    found = current(DOC.read_text(encoding="utf-8"))
    assert found is not None, f"{DOC.name} lost its layout table's markers"
    assert found == block(), f"{DOC.name}'s layout table is not the tree's: run `python -m tests.layout_doc`"


def test_the_reader_finds_lazy_typing_only_and_relative_imports(tmp_path):
    source = tmp_path / "probe.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from hermes_hub.app.hub import Hub\n"
                      "def f():\n    from hermes_hub.services import audit\n    from ..hub import parts\n")
    assert imports("hermes_hub.app.web.probe", source) == [
        (3, "hermes_hub.app.hub"), (5, "hermes_hub.services.audit"), (6, "hermes_hub.app.hub.parts")]


# -- the wheel: one top-level name, and what a checkout runs from servers/ and clients/ runs installed --


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the built wheel, a fresh venv with it installed). The venv borrows this one's dependencies
    through a .pth (no network); a .pth's own path gets no .pth processing, so the editable
    install of the checkout stays out of it."""
    root = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(PACKAGE.parent), "--no-deps", "-q", "-w", str(root)],
                   check=True, capture_output=True, timeout=120)
    wheel = next(root.glob("hermes_hub-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True, timeout=60)
    python = root / "venv" / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True, timeout=30).stdout.strip()
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, timeout=120)
    return wheel, root / "venv" / "bin"


@pytest.mark.slow
def test_the_wheel_installs_no_top_level_name_but_hermes_hub(installed):
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as z:
        tops = {n.split("/")[0] for n in z.namelist() if not n.split("/")[0].endswith(".dist-info")}
        top_level = [z.read(n).decode().split() for n in z.namelist() if n.endswith("top_level.txt")]
    assert tops == {"hermes_hub"} and top_level in ([], [["hermes_hub"]])


@pytest.mark.slow
def test_an_installed_hub_chats_with_its_demo_servers_outside_the_checkout(installed, tmp_path):
    _, bin_dir = installed
    shutil.copy(PACKAGE.parent / "clients" / "example" / "model.json", tmp_path)
    servers = {name: {"command": "python", "args": ["-m", f"hermes_hub.demo.{name}"], "env": {"HERMES_DEMO_DATA": "demo"}}
               for name in ("calendar", "reminders")}
    (tmp_path / "hub.json").write_text(json.dumps({
        "mcpServers": servers, "storage": {"url": "sqlite:///.data/hub.db"},
        "agent": {"provider": "scripted", "script": "model.json", "confirm": ["*_send*"]}}))
    # no PYTHONPATH, and a PATH without this venv: `python` in hub.json must still find the demo servers
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | {"PATH": "/usr/bin:/bin"}
    where = subprocess.run([bin_dir / "python", "-c", "import hermes_hub; print(hermes_hub.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=30)
    assert PACKAGE.parent not in Path(where.stdout.strip()).parents, where.stdout + where.stderr
    run = subprocess.run([bin_dir / "hermes-hub", "chat", "--config", "hub.json", "--once", "book lunch with Ana on Monday"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=90)
    assert run.returncode == 0 and "Booked: lunch with Ana" in run.stdout, run.stdout + run.stderr


@pytest.mark.anyio
@pytest.mark.slow
async def test_an_installed_hub_inits_a_starter_config_and_serves_its_demo_servers(installed, tmp_path):
    """`hermes-hub init` then `serve`, from the wheel, outside the checkout, with only the system folders on PATH."""
    import httpx2

    from tests.support import free_port, until

    _, bin_dir = installed
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")} | {"PATH": "/usr/bin:/bin"}
    made = subprocess.run([bin_dir / "hermes-hub", "init", "mine"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[-1].startswith("next: hermes-hub serve --config mine/hub.json")
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    with log, subprocess.Popen([bin_dir / "hermes-hub", "serve", "--config", "mine/hub.json", "--port", str(port)],
                               cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log) as proc:
        async def ready() -> dict | None:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                async with httpx2.AsyncClient(timeout=5) as http:
                    body = (await http.get(f"http://127.0.0.1:{port}/readyz")).json()
            except httpx2.HTTPError:
                return None
            return body if body["ready"] else None

        try:
            body = await until(ready, timeout=90)
        finally:
            proc.terminate()
            proc.wait(30)
    assert {s["name"]: s["state"] for s in body["servers"]} == {"calendar": "READY", "reminders": "READY",
                                                                "notes": "READY"}
    assert (tmp_path / "mine" / ".data" / "hub.db").is_file()  # its data stays in its folder

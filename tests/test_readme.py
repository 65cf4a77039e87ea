"""The README and the docs/ pages are the front door: their examples run, their configs parse, their links
resolve, and every hub.json key is documented in docs/configuration.md."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_hub.infra.config import (
    AgentProfile,
    AgentSection,
    AnnotationsOverride,
    AuthSection,
    HubSection,
    MemorySection,
    ServerAuth,
    ServerConfig,
    StorageSection,
    TokenEntry,
    ToolFilter,
    ToolOverride,
    ToolsetConfig,
    parse_config,
)
from hermes_hub.infra.config.approve import ApproveSection
from hermes_hub.infra.config.guards import GuardsSection
from hermes_hub.infra.config.sections import ArtifactsSection, HintsSection, InstructionParts
from hermes_hub.infra.config.guard_rules import LimitRule, MaskSection
from tests.support import PROJECT

PAGES = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
REFERENCE = PROJECT / "docs" / "configuration.md"


def name(page: Path) -> str:
    return page.relative_to(PROJECT).as_posix()


def blocks(page: Path, lang: str) -> list[tuple[int, str]]:
    """Each ```lang block of ``page`` with the line its fence opens on."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start()) + 1, m.group(1))
            for m in re.finditer(rf"^```{lang}\n(.*?)^```", text, flags=re.S | re.M)]


def test_every_hub_json_key_is_documented_in_the_reference_tables():
    sections = (ServerConfig, ServerAuth, ToolFilter, HubSection, StorageSection, AuthSection, TokenEntry, MemorySection,
                AgentSection, AgentProfile, ToolsetConfig, ToolOverride, AnnotationsOverride, ArtifactsSection,
                InstructionParts, GuardsSection, ApproveSection, MaskSection, LimitRule, HintsSection)
    keys = {key for section in sections for key in section.model_fields}
    reference = REFERENCE.read_text()
    missing = [k for k in sorted(keys) if f"| `{k}` |" not in reference]
    assert missing == [], f"add a row for each to the tables in {name(REFERENCE)}"


JSON_BLOCKS = [(page, line, block) for page in PAGES for line, block in blocks(page, "json")]


@pytest.mark.parametrize("page, line, block", JSON_BLOCKS, ids=[f"{name(p)}:{n}" for p, n, _ in JSON_BLOCKS])
def test_every_json_example_is_a_valid_hub_config(page, line, block):
    parse_config(json.loads(block), env={})


def test_the_two_setup_commands_are_on_the_first_screen():
    first_screen = "\n".join((PROJECT / "README.md").read_text().splitlines()[:25])
    assert "make serve" in first_screen and "make test" in first_screen


def test_the_readme_stays_about_150_lines():
    lines = len((PROJECT / "README.md").read_text().splitlines())
    assert lines <= 170, f"README.md has {lines} lines: move the detail to a page in docs/"


LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's ids for the headings of ``page``: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M),
                              flags=re.M):
        out.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return out


LINKS = [(page, target) for page in PAGES for target in LINK.findall(page.read_text())
         if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("page, target", LINKS, ids=[f"{name(p)}->{t}" for p, t in LINKS])
def test_every_relative_link_resolves(page, target):
    path, _, anchor = target.partition("#")
    file = (page.parent / path).resolve() if path else page
    assert file.exists(), f"{name(page)} links to {path}, which does not exist"
    if anchor and file.suffix == ".md":
        assert anchor in anchors(file), f"{name(page)} links to #{anchor}; {file.name} has {sorted(anchors(file))}"


def test_every_docs_page_is_linked_from_the_readme():
    readme = (PROJECT / "README.md").read_text()
    unlinked = [name(p) for p in PAGES[1:] if f"]({name(p)}" not in readme]
    assert unlinked == []


def matches(expected: list[str], actual: list[str]) -> bool:
    """``...`` alone skips any lines; ``...`` within a line stands for any text; other lines match exactly."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(piece) for piece in head.rstrip().split("..."))
    return re.fullmatch(pattern, actual[0].rstrip()) is not None and matches(rest, actual[1:])


def console_examples() -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """Each ```console block as (test id, [(command, expected lines)]): a block is one terminal session."""
    out = []
    for page in PAGES:
        for line, block in blocks(page, "console"):
            session = []
            for chunk in block.split("$ ")[1:]:
                command, *expected = chunk.rstrip("\n").split("\n")
                session.append((command, expected))
            more = f" (+{len(session) - 1} more)" if len(session) > 1 else ""
            first = session[0][0] if len(session[0][0]) <= 60 else session[0][0][:57] + "..."
            out.append((f"{name(page)}:{line} $ {first}{more}", session))
    return out


EXAMPLES = console_examples()


@pytest.mark.parametrize("session", [s for _, s in EXAMPLES], ids=[i for i, _ in EXAMPLES])
@pytest.mark.slow
def test_console_example_prints_what_the_page_shows(session, tmp_path: Path):
    """The commands of a block run in order on one fresh data folder, as someone typing them would."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "HERMES_DEMO_DATA": str(tmp_path), "COLUMNS": "200"}
    for command, expected in session:
        run = subprocess.run(command, shell=True, cwd=PROJECT, env=env, capture_output=True, text=True,
                             timeout=120)
        actual = (run.stdout + run.stderr).splitlines()
        assert matches(expected, actual), f"$ {command}\n--- the page\n" + "\n".join(expected) + \
            "\n--- actual\n" + "\n".join(actual)

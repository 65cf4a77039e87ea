"""docs/architecture.md's layout table, made from the tree: each stratum's units lowest first (the order
``tests/test_layout.py`` enforces), what each is (the first sentence of its docstring) and its modules.

    python -m tests.layout_doc          # rewrite the table in docs/architecture.md
    block()                             # the table as it should read (test_layout compares)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_layout import APART, LOOSE, PACKAGE, STRATA

DOC = PACKAGE.parent / "docs" / "architecture.md"
BEGIN = "<!-- layout: made from the tree by `python -m tests.layout_doc`; tests/test_layout.py checks it -->"
END = "<!-- layout end -->"


def _first_sentence(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(doc.split("\n\n")[0].split())
    m = re.match(r"(.+?\.)(\s|$)", text)
    sentence = (m.group(1) if m else text).rstrip(".")
    if len(sentence) > 150:
        sentence = sentence[:150].rsplit(" ", 1)[0].rstrip(",;:") + " …"
    return sentence.replace("``", "`").replace("|", "\\|")


def _contents(folder: Path) -> str:
    names = [p.stem for p in sorted(folder.glob("*.py")) if p.stem != "__init__"]
    names += [f"{p.name}/" for p in sorted(folder.iterdir()) if p.is_dir() and (p / "__init__.py").exists()]
    return " · ".join(f"`{n}`" for n in names)


def _row(stratum: str, unit: str) -> str:
    base = PACKAGE / stratum
    path = base / unit if unit else base
    if path.is_dir():
        return f"| `{stratum}/{unit + '/' if unit else ''}` | {_first_sentence(path / '__init__.py')} | {_contents(path)} |"
    module = path.with_suffix(".py")
    return f"| `{stratum}/{unit}.py` | {_first_sentence(module)} | |"


def block() -> str:
    rows = ["| unit, lowest first | what it is | modules |", "| --- | --- | --- |"]
    for unit in sorted(APART):
        rows.append(_row(unit, ""))
    for stratum, layers in STRATA.items():
        rows.append(f"| **`{stratum}/`** | {_first_sentence(PACKAGE / stratum / '__init__.py')} | |")
        for layer in layers:
            for unit in sorted(layer) or [""]:
                rows.append(_row(stratum, unit) if unit else
                            f"| `{stratum}/` (one unit) | | {_contents(PACKAGE / stratum)} |")
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    rows.append(f"| loose at the top ({', '.join(sorted(LOOSE))}) | the package's public names; `python -m hermes_hub` "
                f"| {' · '.join(f'`{n}`' for n in loose)} |")
    return "\n".join([BEGIN, "", *rows, "", END])


def current(text: str) -> str | None:
    start, end = text.find(BEGIN), text.find(END)
    return None if start < 0 or end < 0 else text[start:end + len(END)]


def main() -> None:
    text = DOC.read_text(encoding="utf-8")
    old = current(text)
    if old is None:
        raise SystemExit(f"{DOC} has no {BEGIN!r} ... {END!r} block to rewrite")
    DOC.write_text(text.replace(old, block()), encoding="utf-8")
    print(f"rewrote the layout table in {DOC}")


if __name__ == "__main__":
    main()

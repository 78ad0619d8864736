"""The command blocks of README.md and docs/*.md, split into the commands a user types.

A small collector rather than pytest-markdown-docs, pytest-codeblocks or mktestdocs: those run a
block as it stands, and these blocks need placeholders filled in (`<render run>`, `...`), a server
started in the background with participants rating it, and outputs checked between commands."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import REPO

DOCS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
FENCE = re.compile(r"^```(\w*)\s*$")
#: fenced blocks of these languages are commands; an untagged block is, when a line starts a run
SHELL = {"bash", "sh", "shell", "console"}
RUNS = re.compile(r"^(python|gesturebench|export|curl)\b")


@dataclass(frozen=True)
class Block:
    """One fenced block: its file (relative to the repository), first line number, language and
    text."""

    file: str
    line: int
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def fences(path: Path) -> list[Block]:
    """Every fenced block of `path`, of any language (untagged: "")."""
    lines, found, i = path.read_text().splitlines(), [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        text = "\n".join(lines[i + 1 : end])
        found.append(Block(str(path.relative_to(REPO)), i + 1, fence.group(1), text))
        i = end + 1
    return found


def blocks(docs: tuple[Path, ...] = DOCS) -> list[Block]:
    """Every fenced block of `docs` that holds commands: shell blocks, untagged blocks with a
    command line (as `bash`), and python blocks (the API's examples)."""
    found = []
    for block in (b for path in docs for b in fences(path)):
        untagged_command = not block.lang and any(RUNS.match(t) for t in block.text.splitlines())
        if block.lang in SHELL or block.lang == "python":
            found.append(block)
        elif untagged_command:
            found.append(Block(block.file, block.line, "bash", block.text))
    return found


def yaml_block(file: str, first_line: str) -> str:
    """The text of the YAML block of `file` whose first line is `first_line`."""
    return next(
        b.text
        for b in fences(REPO / file)
        if b.lang == "yaml" and b.text.splitlines()[0].strip() == first_line
    )


def _split(line: str) -> tuple[list[str], str]:
    """`line`'s commands (split at `&&` and `;` outside quotes, stripped) and its trailing
    comment."""
    parts, current, quote, i = [], "", None, 0
    while i < len(line):
        c = line[i]
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (not current or current[-1].isspace()):
            break
        elif line.startswith("&&", i) or c == ";":
            parts.append(current)
            current, i = "", i + (2 if c == "&" else 1)
            continue
        current += c
        i += 1
    return [p.strip() for p in (*parts, current) if p.strip()], line[i:]


def commands(block: Block) -> list[str]:
    """The commands of `block`, as bash reads them: continuation lines joined, comments and blank
    lines left out, `a && b` and `a; b` as two commands. A python block is one command, its
    text."""
    if block.lang == "python":
        return [block.text]
    found, pending = [], ""
    for raw in block.text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.strip()[:-1].rstrip() + " "
            continue
        line = (pending + raw.strip()).strip()
        pending = ""
        found.extend(_split(line)[0])
    return found


def documented() -> dict[str, list[Block]]:
    """Every documented command, with the blocks that hold it."""
    found: dict[str, list[Block]] = {}
    for block in blocks():
        for command in commands(block):
            found.setdefault(command, []).append(block)
    return found

"""The README a newcomer reads top to bottom (issue 36): it starts with the two commands,
stays short, defines its words, and every link of it and of docs/ leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", markdown, flags=re.MULTILINE):
        text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
        found.add(text.strip().replace(" ", "-"))
    return found


def test_the_readme_starts_with_the_two_commands_and_stays_short():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    first_block = text.split("```", 2)[1]
    assert [line.split()[:2] for line in first_block.strip().splitlines()] == [["make", "demo"], ["make", "test"]]
    assert len(text.splitlines()) <= 200
    glossary = text.split("## Glossary", 1)[1].split("\n## ", 1)[0]
    for word in ("BAT agent", "blueprint", "Partition", "**k**", "pass^k", "gating", "Episode"):
        assert word in glossary, word


def test_every_link_of_the_readme_and_the_docs_leads_somewhere():
    broken = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []

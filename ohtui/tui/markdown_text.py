"""Markdown as one cheap Content: for previews, where a Markdown widget per message costs too much.

Headings and **bold** are bold, *emphasis* italic, `code` and fenced code set apart, list
items get bullets, links show their text. The markup characters themselves are not shown.
"""

from __future__ import annotations

import re

from textual.content import Content

_INLINE = re.compile(
    r"\*\*(?P<bold>[^*]+)\*\*|__(?P<bold2>[^_]+)__|`(?P<code>[^`]+)`"
    r"|(?<![\w*])\*(?P<em>[^*\s][^*]*)\*|\[(?P<link>[^\]]+)\]\([^)]*\)"
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
CODE_STYLE = "$text-accent"


def inline_content(text: str) -> Content:
    """One line's inline Markdown (bold, emphasis, code, links) as styled text."""
    parts: list[str | tuple[str, str]] = []
    position = 0
    for match in _INLINE.finditer(text):
        parts.append(text[position : match.start()])
        if match["bold"] or match["bold2"]:
            parts.append((match["bold"] or match["bold2"], "bold"))
        elif match["code"]:
            parts.append((match["code"], CODE_STYLE))
        elif match["em"]:
            parts.append((match["em"], "italic"))
        else:
            parts.append((match["link"], "underline"))
        position = match.end()
    parts.append(text[position:])
    return Content.assemble(*parts)


def markdown_content(text: str) -> Content:
    """A Markdown text as Content, line by line."""
    lines: list[Content] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            lines.append(Content.styled(f"  {line}", CODE_STYLE))
        elif heading := _HEADING.match(line):
            lines.append(Content.styled(heading[1], "bold"))
        elif bullet := _BULLET.match(line):
            lines.append(Content.assemble(bullet[1], "• ", inline_content(bullet[2])))
        elif quote := _QUOTE.match(line):
            lines.append(Content.assemble(("▎ ", "$foreground-muted"), inline_content(quote[1])))
        else:
            lines.append(inline_content(line))
    return Content("\n").join(lines)

"""A Visual for text that grows at its end: what is finished is drawn once and kept.

A streamed response is a head (the reasoning line), finished blocks (paragraphs) and the
block still growing. Only the head and the growing block are drawn again on a redraw; the
finished blocks are drawn once for a given look (width, style, selection) and their strips
kept, so a redraw costs the same at the hundredth paragraph as at the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.strip import Strip
from textual.visual import Visual, VisualType, visualize

if TYPE_CHECKING:
    from textual.css.styles import RulesMap
    from textual.style import Style
    from textual.visual import RenderOptions
    from textual.widget import Widget


@dataclass(frozen=True)
class Block:
    """A piece of the text to draw, less its first `skip` rows (a lead-in drawn with it)."""

    content: VisualType
    skip: int = 0

    def strips(
        self, widget: Widget, width: int, style: Style, options: RenderOptions
    ) -> list[Strip]:
        """Its rows, drawn."""
        drawn = visualize(widget, self.content).render_strips(width, None, style, options)
        return drawn[self.skip :]

    def rows(self, widget: Widget, rules: RulesMap, width: int) -> int:
        """How many rows it takes at `width`."""
        return visualize(widget, self.content).get_height(rules, width) - self.skip


class FinishedBlocks:
    """The finished blocks of a streamed text, with their strips once drawn. A blank row
    follows each block (the gap between paragraphs)."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.draws = 0
        """How many times a block was drawn (each block once per look)."""
        self._look: tuple[object, ...] | None = None
        self._strips: list[Strip] = []
        self._drawn = 0
        self._measured = (0, 0, 0)
        """(width, blocks measured, their rows)."""

    def add(self, block: Block) -> None:
        """Append a finished block."""
        self.blocks.append(block)

    def strips(
        self, widget: Widget, width: int, style: Style, options: RenderOptions
    ) -> list[Strip]:
        """The blocks' strips: the kept ones, and the new blocks' drawn now."""
        look = (width, style, options.selection, options.selection_style)
        if look != self._look:
            self._look, self._strips, self._drawn = look, [], 0
        gap = Strip.blank(width, style.rich_style)
        for block in self.blocks[self._drawn :]:
            self._strips.extend(block.strips(widget, width, style, options))
            self._strips.append(gap)
            self.draws += 1
        self._drawn = len(self.blocks)
        return self._strips

    def rows(self, widget: Widget, rules: RulesMap, width: int) -> int:
        """The rows the blocks take at `width` (each block measured once per width)."""
        measured_width, count, rows = self._measured
        if measured_width != width:
            count = rows = 0
        for block in self.blocks[count:]:
            rows += block.rows(widget, rules, width) + 1
        self._measured = (width, len(self.blocks), rows)
        return rows


class GrowingVisual(Visual):
    """A head, finished blocks (kept as strips) and a growing tail, one under the other."""

    def __init__(
        self, widget: Widget, head: VisualType | None, blocks: FinishedBlocks, tail: Block
    ) -> None:
        self._widget = widget
        self._head = None if head is None else visualize(widget, head)
        self._blocks = blocks
        self._tail = tail

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        strips: list[Strip] = []
        if self._head is not None:
            strips.extend(self._head.render_strips(width, None, style, options))
        strips.extend(self._blocks.strips(self._widget, width, style, options))
        strips.extend(self._tail.strips(self._widget, width, style, options))
        return strips if height is None else strips[:height]

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return container_width

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self.head_rows(rules, width) + self.tail_rows(rules, width)

    def head_rows(self, rules: RulesMap, width: int) -> int:
        """The rows above the growing tail: the head's and the finished blocks'."""
        head = 0 if self._head is None else self._head.get_height(rules, width)
        return head + self._blocks.rows(self._widget, rules, width)

    def tail_rows(self, rules: RulesMap, width: int) -> int:
        """The rows of the growing tail."""
        return self._tail.rows(self._widget, rules, width)

"""CostScreen (/cost, /usage): tokens in and out, cache reads and writes and cost, per model
and for the whole conversation, and how full the context is."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ohtui.tui.screens.usage_report import UsageReport, UsageRow

NO_CALLS = "No model calls yet: the cost and tokens show once the agent has answered."


def money(cost: float) -> str:
    """A cost in US dollars, to the cent (a fraction of a cent to four places)."""
    return f"${cost:.2f}" if cost == 0 or cost >= 0.01 else f"${cost:.4f}"


def tokens(count: int) -> str:
    """A token count with thousands separated."""
    return f"{count:,}"


FIGURES = ("calls", "input", "output", "cache read", "cache write", "cost")


def _figures(row: UsageRow) -> list[str]:
    return [
        tokens(row.calls),
        tokens(row.input_tokens),
        tokens(row.output_tokens),
        tokens(row.cache_read_tokens),
        tokens(row.cache_write_tokens),
        money(row.cost),
    ]


def _named_rows(report: UsageReport) -> list[tuple[Text, UsageRow]]:
    """(name, row) per model, the model the next turn uses marked, then the total."""
    named = [
        (Text(f"{row.model} (now)" if row.model == report.current_model else row.model), row)
        for row in report.rows
    ]
    if len(report.rows) > 1:
        named.append((Text("whole conversation", style="bold"), report.total))
    return named


def _table(headings: tuple[str, ...], named: bool = False) -> Table:
    """A table of the figures under `headings`; `named`: a column of model names first."""
    table = Table(box=None, expand=False, pad_edge=False, show_edge=False, padding=(0, 1))
    if named:
        table.add_column("model", overflow="fold")
    for heading in headings:
        table.add_column(heading, justify="right", no_wrap=True)
    return table


def usage_table(report: UsageReport) -> Table:
    """One row per model, then the conversation's total (when more than one model ran)."""
    table = _table(FIGURES, named=True)
    named = _named_rows(report)
    for index, (name, row) in enumerate(named):
        if len(report.rows) > 1 and index == len(named) - 1:
            table.add_section()
        table.add_row(name, *_figures(row))
    return table


def stacked_usage(report: UsageReport) -> Group:
    """For a narrow terminal: each model's name on a line of its own, its figures below
    under headings of two lines, so neither the name nor a figure is squeezed."""
    parts: list[RenderableType] = []
    for index, (name, row) in enumerate(_named_rows(report)):
        figures = _table(tuple(heading.replace(" ", "\n") for heading in FIGURES))
        figures.add_row(*_figures(row))
        if index:
            parts.append(Text(""))
        parts.extend((name, figures))
    return Group(*parts)


class UsageView:
    """The usage table where the terminal is wide enough for the model names beside the
    figures; stacked (`stacked_usage`) where it is not."""

    def __init__(self, report: UsageReport) -> None:
        self.report = report

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = usage_table(self.report)
        unbounded = options.update_width(10_000)  # a measurement is cut to the width given
        needed = Measurement.get(console, unbounded, table).maximum
        yield table if needed <= options.max_width else stacked_usage(self.report)


def context_line(report: UsageReport) -> str:
    """How full the context is after the latest call, against the model's window."""
    used = report.context_tokens
    if used is None:
        return "Context: nothing sent to the model yet."
    window = report.context_window
    of = f"of {tokens(window)} ({used / window:.0%})" if window else "(window unknown)"
    model = f" · {report.context_model}" if report.context_model else ""
    return f"Context: {tokens(used)} tokens {of}{model}"


def cache_line(report: UsageReport) -> str:
    """The share of input read from the cache, over the whole conversation."""
    rate = report.total.cache_hit_rate
    if not report.total.cache_read_tokens or rate is None:
        return "Cache: no input read from the provider's cache."
    return f"Cache hits: {rate:.0%} of the input was read from the provider's cache."


class CostScreen(ModalScreen[None]):
    """The conversation's usage and cost; Esc, Enter or q closes it."""

    CSS_PATH = "cost.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,enter,q", "dismiss", "Close")]

    def __init__(self, report: UsageReport) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        """The heading, the table (or why there is none), the cache and context lines."""
        report = self.report
        with Vertical(id="dialog"):
            yield Static("Usage and cost", id="heading")
            if report.rows:
                yield Static(UsageView(report), id="usage")
                yield Static(cache_line(report), id="cache", markup=False)
            else:
                yield Static(NO_CALLS, id="usage", markup=False)
            yield Static(context_line(report), id="context", markup=False)
            if report.current_model:
                yield Static(
                    f"Next turn: {report.current_model} · /model to switch",
                    id="next-model",
                    markup=False,
                )
            yield Static("Esc to close", id="legend", markup=False)

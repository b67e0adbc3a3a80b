"""Parsing a command line with tree-sitter's bash grammar, within a budget of time and
syntax nodes, and the helpers that walk the syntax tree (for the reader, `reader`)."""

from __future__ import annotations

import gc
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

PARSE_SECONDS = 0.03
"""Time to read one command line; a longer one is not vetted (it fails closed)."""
MAX_NODES = 20_000
"""Syntax nodes in one command line; more are not vetted (it fails closed)."""
CHUNK = 16 * 1024


class TooLongError(Exception):
    """The line is too long or too dense to read within the budget."""


@dataclass
class Budget:
    deadline: float
    nodes: int = MAX_NODES


@dataclass(frozen=True)
class Input:
    """Where a command's standard input comes from."""

    kind: str  # "pipe", "file" or "text"
    text: str = ""
    literal: bool = True


@dataclass(frozen=True)
class Heredoc:
    """A heredoc taken out of the line to work around the grammar (see `recover_heredocs`)."""

    body: str
    literal: bool
    node: Node | None
    source: bytes


_parser: Parser | None = None
_parser_lock = threading.Lock()


_collecting = threading.local()
"""Per thread: when the garbage collection running in it began, and how long the ones it
ran took in all."""


def _count_collection(phase: str, _info: dict[str, int]) -> None:
    if phase == "start":
        _collecting.began = time.thread_time()
    elif (began := getattr(_collecting, "began", None)) is not None:
        _collecting.spent = getattr(_collecting, "spent", 0.0) + time.thread_time() - began
        _collecting.began = None


gc.callbacks.append(_count_collection)


def work_clock() -> float:
    """The reading thread's own CPU time, less its garbage collections: the budget bounds
    the work of reading a command, which neither a busy machine nor a collection of a large
    heap that happens to run in this thread (tens of ms) must turn into a refusal."""
    return time.thread_time() - getattr(_collecting, "spent", 0.0)


def bash_parser() -> Parser:
    """The bash parser, made on first use."""
    global _parser
    with _parser_lock:
        if _parser is None:
            import tree_sitter
            import tree_sitter_bash

            _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        return _parser


def parse_within(source: bytes, budget: Budget) -> Tree:
    cut = False

    def read(offset: int, _point: object) -> bytes:
        nonlocal cut
        if work_clock() > budget.deadline:
            cut = True
            return b""
        return source[offset : offset + CHUNK]

    parser = bash_parser()
    with _parser_lock:
        tree = parser.parse(read)
    if cut:
        raise TooLongError(f"more than {PARSE_SECONDS * 1000:.0f} ms to parse")
    budget.nodes -= tree.root_node.descendant_count
    if budget.nodes < 0:
        raise TooLongError(f"more than {MAX_NODES} syntax nodes")
    return tree


def recover_heredocs(
    source: bytes, tree: Tree, budget: Budget
) -> tuple[bytes, Tree, dict[str, Heredoc]] | None:
    """Re-read a line whose only parse errors follow a heredoc on its first line.

    The grammar fails on `python - <<'EOF' 2>&1 | tail` (a common form); bash does not. Each
    heredoc becomes a here-string placeholder and the line is parsed again; the body stays
    known to the reader. Any other error leaves the line unreadable.
    """
    heredocs = descendants_of_kind(tree.root_node, "heredoc_redirect")
    if not heredocs:
        return None
    spans = []
    for node in heredocs:
        start = child_of_kind(node, "heredoc_start")
        body_start = child_of_kind(node, "heredoc_body") or child_of_kind(node, "heredoc_end")
        if start is None or body_start is None:
            return None
        spans.append((start.end_byte, body_start.start_byte))
    for error in error_nodes(tree.root_node):
        if not any(a <= error.start_byte and error.end_byte <= b for a, b in spans):
            return None
    nonce = secrets.token_hex(6)
    pieces: list[bytes] = []
    position = 0
    found: dict[str, Heredoc] = {}
    for index, node in enumerate(sorted(heredocs, key=lambda n: n.start_byte)):
        start, end, body = (
            child_of_kind(node, "heredoc_start"),
            child_of_kind(node, "heredoc_end"),
            child_of_kind(node, "heredoc_body"),
        )
        if start is None or end is None or node.start_byte < position:
            return None
        line_end = source.find(b"\n", start.end_byte)
        if line_end < 0 or line_end > end.start_byte:
            return None
        placeholder = f"__ohtui_heredoc_{nonce}_{index}__"
        pieces += [source[position : node.start_byte], b"<<<" + placeholder.encode()]
        pieces.append(source[start.end_byte : line_end + 1])  # `2>&1 | tail`, read again
        position = end.end_byte
        delimiter = source[start.start_byte : start.end_byte]
        quoted = any(c in delimiter for c in b"'\"\\")
        text = source[body.start_byte : body.end_byte].decode("utf-8", "replace") if body else ""
        found[placeholder] = Heredoc(
            text, quoted or plain_body(body), None if quoted else body, source
        )
    pieces.append(source[position:])
    rewritten = b"".join(pieces)
    tree = parse_within(rewritten, budget)
    if tree.root_node.has_error:
        return None
    return rewritten, tree, found


def plain_body(body: Node | None) -> bool:
    """Whether a heredoc body has no expansions in it."""
    return body is None or not any(
        c.is_named and c.type != "heredoc_content" for c in body.children
    )


def unread_expansion(body: Node, source: bytes) -> bool:
    """Whether an unquoted heredoc body holds `$(`, `${`, `$[` or a backtick that the
    grammar left as plain text (it does so after `<<-`): bash would expand it."""
    text = source[body.start_byte : body.end_byte]
    read = [
        (c.start_byte - body.start_byte, c.end_byte - body.start_byte)
        for c in body.named_children
        if c.type != "heredoc_content"
    ]
    for match in re.finditer(rb"\\.|\$[({\[]|`", text, re.DOTALL):
        if match.group().startswith(b"\\"):
            continue
        if not any(a <= match.start() < b for a, b in read):
            return True
    return False


def unquote(text: str) -> str:
    """A heredoc delimiter after quote removal (`'EOF'`, `"E"OF`, `\\EOF` are all EOF)."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and quote != "'" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if c in "'\"" and quote in ("", c):
            quote = "" if quote else c
        else:
            out.append(c)
        i += 1
    return "".join(out)


def redirect_operator(node: Node, destinations: list[Node], source: bytes) -> str:
    """A redirection's operator as written (`<>`, `>|`, `&>>`), without its fd number.

    The grammar splits some operators (`1<>f` reads as `<` and an error): the text between
    the fd number and the target is the operator bash sees."""
    start = node.start_byte
    for child in node.children:
        if child.type == "file_descriptor":
            start = child.end_byte
    end = destinations[0].start_byte if destinations else node.end_byte
    return source[start:end].decode("utf-8", "replace").strip() or ">"


def adjacent_groups(nodes: list[Node]) -> list[list[Node]]:
    """Nodes that touch with no blank between them: bash reads them as one word."""
    groups: list[list[Node]] = []
    for node in nodes:
        if groups and groups[-1][-1].end_byte == node.start_byte:
            groups[-1].append(node)
        else:
            groups.append([node])
    return groups


def child_of_kind(node: Node, kind: str) -> Node | None:
    return next((c for c in node.children if c.type == kind), None)


def descendants_of_kind(node: Node, kind: str) -> list[Node]:
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            found.append(current)
        stack.extend(current.children)
    return found


def error_nodes(node: Node) -> list[Node]:
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            found.append(current)
        elif current.has_error:
            stack.extend(current.children)
    return found


def excerpt(text: str, limit: int = 40) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"

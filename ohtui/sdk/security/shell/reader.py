"""Reads a bash command line into a CommandLine, on tree-sitter's bash grammar.

The grammar gives the structure; this module decides what bash would run. Where the tree
could disagree with bash (a parse error, a keyword glued to a word, words the grammar split
apart), the line is marked as not reliably readable, which fails closed: no allow rule
covers it, every deny rule applies, and it rates at least MEDIUM. The commands found are
still collected, best effort, for the risk rules.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ohtui.sdk.security.shell import programs
from ohtui.sdk.security.shell.model import Command, CommandLine, Redirection, command_name
from ohtui.sdk.security.shell.words import (
    Word,
    ansi_c,
    double_quoted,
    finish,
    protect,
    unquoted_word,
)

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

PARSE_SECONDS = 0.03
"""Time to read one command line; a longer one is not vetted (it fails closed)."""
MAX_NODES = 20_000
"""Syntax nodes in one command line; more are not vetted (it fails closed)."""
MAX_NESTING = 8
"""Shells within shells (`bash -c "eval '...'"`) followed before giving up."""
_MAX_RECURSION = 150
_CHUNK = 16 * 1024
_METACHARS = " \t\n;&|<>()"
_ESCAPED = re.compile(r"\\.", re.DOTALL)
_RESERVED = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "case",
        "esac",
        "while",
        "until",
        "for",
        "in",
        "function",
        "select",
        "{",
        "}",
        "!",
        "[[",
        "]]",
    }
)
_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "do_group",
        "else_clause",
        "elif_clause",
        "if_statement",
        "while_statement",
        "negated_command",
        "subshell",
    }
)
_STATEMENTS = _CONTAINERS | {
    "pipeline",
    "command",
    "redirected_statement",
    "compound_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "function_definition",
    "test_command",
    "declaration_command",
    "unset_command",
    "variable_assignment",
    "variable_assignments",
}
_ARITHMETIC_OPERANDS = frozenset(
    {
        "variable_name",
        "word",
        "subscript",
        "simple_expansion",
        "expansion",
        "special_variable_name",
        "string",
        "raw_string",
        "concatenation",
    }
)
_SHELL_STATE: dict[str, tuple[bool, str]] = {
    # builtin: (counts only with arguments, what it changes)
    "alias": (True, "defines an alias"),
    "unalias": (False, "removes an alias"),
    "source": (False, "runs a file in the shell"),
    ".": (False, "runs a file in the shell"),
    "eval": (False, "runs `eval`"),
    "set": (True, "sets shell options or parameters"),
    "shopt": (True, "sets shell options"),
    "enable": (True, "loads or switches builtins"),
    "hash": (True, "changes where commands are found"),
    "trap": (True, "sets a trap"),
    "bind": (False, "changes key bindings"),
    "complete": (False, "sets completions"),
    "compopt": (False, "sets completions"),
    "compgen": (False, "runs `compgen`, which can call functions"),
    "mapfile": (False, "assigns variables (and may run callbacks)"),
    "readarray": (False, "assigns variables (and may run callbacks)"),
    "read": (False, "assigns variables"),
    "getopts": (False, "assigns variables"),
    "let": (False, "assigns variables"),
    "declare": (True, "declares variables or functions"),
    "typeset": (True, "declares variables or functions"),
    "local": (True, "declares variables"),
    "export": (True, "exports variables"),
    "readonly": (True, "makes variables read-only"),
    "unset": (True, "unsets variables or functions"),
    "exec": (False, "uses `exec`"),
    "umask": (True, "changes the file mode mask"),
    "ulimit": (True, "changes resource limits"),
    "fc": (False, "re-runs commands from the history"),
}
"""The builtins that change the shell for later command lines (see `CommandLine.changes_shell`)."""
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?)\+?=(.*)$", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_]")


class _TooLongError(Exception):
    """The line is too long or too dense to read within the budget."""


@dataclass
class _Budget:
    deadline: float
    nodes: int = MAX_NODES


@dataclass(frozen=True)
class _Input:
    """Where a command's standard input comes from."""

    kind: str  # "pipe", "file" or "text"
    text: str = ""
    literal: bool = True


@dataclass(frozen=True)
class _Heredoc:
    """A heredoc taken out of the line to work around the grammar (see `_recover`)."""

    body: str
    literal: bool
    node: Node | None
    source: bytes


_parser: Parser | None = None
_parser_lock = threading.Lock()


def read_command_line(command: str, depth: int = 0, budget: _Budget | None = None) -> CommandLine:
    """What `command` would run, as far as it can be told before running it."""
    budget = budget or _Budget(time.monotonic() + PARSE_SECONDS)
    line = CommandLine()
    if depth > MAX_NESTING:
        line.resolve_fail("it nests shells too deeply to check", open_ended=True)
        return line
    source = command.encode("utf-8", "replace")
    try:
        tree = _parse(source, budget)
        heredocs: dict[str, _Heredoc] = {}
        if tree.root_node.has_error:
            recovered = _recover(source, tree, budget)
            if recovered is not None:
                source, tree, heredocs = recovered
        reader = _Reader(source, line, budget, depth, heredocs)
        reader.statement(tree.root_node, None)
    except _TooLongError as exc:
        line.resolve_fail(f"it is too long to check ({exc})", open_ended=True)
        line.change_shell("it is too long to check")
        return line
    for problem in reader.problems:
        line.resolve_fail(f"it cannot be read reliably ({problem})", open_ended=True)
        line.change_shell(f"it cannot be read reliably ({problem})")
    return line


def _parse(source: bytes, budget: _Budget) -> Tree:
    global _parser
    cut = False

    def read(offset: int, _point: object) -> bytes:
        nonlocal cut
        if time.monotonic() > budget.deadline:
            cut = True
            return b""
        return source[offset : offset + _CHUNK]

    with _parser_lock:
        if _parser is None:
            import tree_sitter
            import tree_sitter_bash

            _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        tree = _parser.parse(read)
    if cut:
        raise _TooLongError(f"more than {PARSE_SECONDS * 1000:.0f} ms to parse")
    budget.nodes -= tree.root_node.descendant_count
    if budget.nodes < 0:
        raise _TooLongError(f"more than {MAX_NODES} syntax nodes")
    return tree


def _recover(
    source: bytes, tree: Tree, budget: _Budget
) -> tuple[bytes, Tree, dict[str, _Heredoc]] | None:
    """Re-read a line whose only parse errors follow a heredoc on its first line.

    The grammar fails on `python - <<'EOF' 2>&1 | tail` (a common form); bash does not. Each
    heredoc becomes a here-string placeholder and the line is parsed again; the body stays
    known to the reader. Any other error leaves the line unreadable.
    """
    heredocs = _descendants(tree.root_node, "heredoc_redirect")
    if not heredocs:
        return None
    spans = []
    for node in heredocs:
        start = _child(node, "heredoc_start")
        body_start = _child(node, "heredoc_body") or _child(node, "heredoc_end")
        if start is None or body_start is None:
            return None
        spans.append((start.end_byte, body_start.start_byte))
    for error in _errors(tree.root_node):
        if not any(a <= error.start_byte and error.end_byte <= b for a, b in spans):
            return None
    nonce = secrets.token_hex(6)
    pieces: list[bytes] = []
    position = 0
    found: dict[str, _Heredoc] = {}
    for index, node in enumerate(sorted(heredocs, key=lambda n: n.start_byte)):
        start, end, body = (
            _child(node, "heredoc_start"),
            _child(node, "heredoc_end"),
            _child(node, "heredoc_body"),
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
        found[placeholder] = _Heredoc(
            text, quoted or _plain_body(body), None if quoted else body, source
        )
    pieces.append(source[position:])
    rewritten = b"".join(pieces)
    tree = _parse(rewritten, budget)
    if tree.root_node.has_error:
        return None
    return rewritten, tree, found


def _plain_body(body: Node | None) -> bool:
    """Whether a heredoc body has no expansions in it."""
    return body is None or not any(
        c.is_named and c.type != "heredoc_content" for c in body.children
    )


class _Reader:
    """Walks a syntax tree, adding what it runs to a CommandLine."""

    def __init__(
        self,
        source: bytes,
        line: CommandLine,
        budget: _Budget,
        depth: int,
        heredocs: dict[str, _Heredoc],
    ) -> None:
        self.source = source
        self.line = line
        self.budget = budget
        self.depth = depth
        self.heredocs = heredocs
        self.problems: list[str] = []
        self._recursion = 0

    # --- statements ----------------------------------------------------------------------

    def statement(self, node: Node, stdin: _Input | None) -> None:
        """Read one statement (and what it contains)."""
        self._recursion += 1
        try:
            if self._recursion > _MAX_RECURSION:
                self._problem("it is nested too deeply")
                return
            self._statement(node, stdin)
        finally:
            self._recursion -= 1

    def _statement(self, node: Node, stdin: _Input | None) -> None:
        kind = node.type
        if node.is_missing:
            self._problem(f"a missing `{kind}`")
        elif kind in _CONTAINERS:
            for child in node.children:
                if child.is_named or child.is_missing:
                    self.statement(child, stdin)
        elif kind == "compound_statement":
            self._compound(node, stdin)
        elif kind == "pipeline":
            for index, child in enumerate(node.named_children):
                self.statement(child, stdin if index == 0 else _Input("pipe"))
        elif kind == "redirected_statement":
            self._redirected(node, stdin)
        elif kind == "command":
            self._command(node, stdin, [])
        elif kind == "variable_assignment":
            self._assignments([node], standalone=True)
        elif kind == "variable_assignments":
            self._assignments(node.named_children, standalone=True)
        elif kind == "declaration_command":
            self._declaration(node)
        elif kind in ("unset_command", "comment"):
            if kind == "unset_command":
                self.line.change_shell("unsets variables or functions")
            self.nested(node)
        elif kind == "test_command":
            self._test(node)
        elif kind == "for_statement":
            self._for(node, stdin)
        elif kind == "c_style_for_statement":
            self._c_for(node, stdin)
        elif kind == "case_statement":
            self._case(node, stdin)
        elif kind == "function_definition":
            self.line.resolve_fail("it defines a shell function")
            self.line.change_shell("defines a function")
            for child in node.named_children:
                if child.type in _STATEMENTS:
                    self.statement(child, stdin)
        elif kind == "ERROR":
            self._problem(f"a syntax error near `{_excerpt(self.text(node))}`")
            for child in node.named_children:
                if child.type in _STATEMENTS:
                    self.statement(child, stdin)
                else:
                    self.nested(child)
        elif kind in ("heredoc_body", "heredoc_start", "heredoc_end", "file_redirect"):
            self.nested(node)
        else:
            self.nested(node)
            self._problem(f"`{kind}` where a command was expected")

    def _compound(self, node: Node, stdin: _Input | None) -> None:
        children = node.children
        if children and children[0].type == "((":
            self.arithmetic(node)
            return
        if children and children[0].type == "{":
            after = self.source[children[0].end_byte : children[0].end_byte + 1]
            if after not in (b" ", b"\t", b"\n"):
                self._problem("`{` glued to a word (bash reads it as brace expansion)")
        for child in node.named_children:
            self.statement(child, stdin)

    def _redirected(self, node: Node, stdin: _Input | None) -> None:
        body = node.child_by_field_name("body")
        redirects: list[Node] = []
        after: list[tuple[Node, bool]] = []
        for child in node.children_by_field_name("redirect"):
            redirects.append(child)
            if child.type != "heredoc_redirect":
                continue
            for index, part in enumerate(child.children):
                field = child.field_name_for_child(index)
                if field == "redirect":
                    redirects.append(part)
                elif part.type in _STATEMENTS:
                    # `cat <<EOF | sh`: the grammar hangs the rest of the line on the heredoc.
                    piped = part.type == "pipeline" and part.children[0].type in ("|", "|&")
                    after.append((part, piped))
                elif part.type == "ERROR":
                    self._problem(f"a syntax error near `{_excerpt(self.text(part))}`")
        if body is not None and body.type == "command":
            self._command(body, stdin, redirects)
        else:
            stdin, extra = self.redirections(redirects, stdin)
            if extra:
                self._problem("words after a redirection of a compound command")
            if body is not None:
                self.statement(body, stdin)
        for statement, piped in after:
            self.statement(statement, _Input("pipe") if piped else None)

    def _test(self, node: Node) -> None:
        self.nested(node)
        for operator in _descendants(node, "test_operator"):
            if self.text(operator) in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"):
                expression = operator.parent
                operands = [
                    c
                    for c in (expression.named_children if expression else [])
                    if c.type != "test_operator"
                ]
                if any(c.type != "number" for c in operands):
                    self.line.resolve_fail(
                        "it compares run-time values arithmetically, which can run commands"
                    )

    def _for(self, node: Node, stdin: _Input | None) -> None:
        variable = node.child_by_field_name("variable")
        if variable is not None and programs.risky_assignment(self.text(variable), None):
            self.line.resolve_fail(f"it sets {self.text(variable)}", open_ended=True)
        if variable is not None:
            self._sets_variable(self.text(variable))
        for child in node.children_by_field_name("value"):
            self.nested(child)
        body = node.child_by_field_name("body")
        if body is not None:
            self.statement(body, stdin)

    def _c_for(self, node: Node, stdin: _Input | None) -> None:
        for field in ("initializer", "condition", "update"):
            for child in node.children_by_field_name(field):
                self.arithmetic(child)
        body = node.child_by_field_name("body")
        if body is not None:
            self.statement(body, stdin)

    def _case(self, node: Node, stdin: _Input | None) -> None:
        value = node.child_by_field_name("value")
        if value is not None:
            self.nested(value)
        for item in node.named_children:
            if item.type != "case_item":
                continue
            for child in item.named_children:
                if child.type in _STATEMENTS:
                    self.statement(child, stdin)
                else:
                    self.nested(child)

    # --- simple commands -----------------------------------------------------------------

    def _command(self, node: Node, stdin: _Input | None, redirects: list[Node]) -> None:
        assignments: list[Node] = []
        word_nodes: list[Node] = []
        for index, child in enumerate(node.children):
            field = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                assignments.append(child)
            elif field == "redirect" or child.type.endswith("_redirect"):
                redirects.append(child)
            elif field == "name":
                word_nodes.append(child.named_children[0] if child.named_child_count else child)
            elif field == "argument":
                word_nodes.append(child)
            elif child.is_named or child.is_missing:
                self._problem(f"`{child.type}` inside a command")
        stdin, extra = self.redirections(redirects, stdin)
        word_nodes = sorted([*word_nodes, *extra], key=lambda n: n.start_byte)
        words: list[str] = []
        unknown: set[int] = set()
        for group in _adjacent_groups(word_nodes):
            word = self.word(group)
            for value in word.values:
                if not word.literal or (word.glob and (not words or word.leading_glob)):
                    unknown.add(len(words))
                words.append(value)
        self._assignments(assignments, standalone=not words)
        if words:
            if 0 not in unknown and words[0] in _RESERVED:
                self._problem(f"the keyword `{words[0]}` used as a command")
            self.run(words, unknown, stdin)

    def _assignments(self, nodes: list[Node], *, standalone: bool) -> None:
        for node in nodes:
            if node.type != "variable_assignment":
                self.nested(node)
                continue
            name_node = node.child_by_field_name("name")
            value_node = node.child_by_field_name("value")
            name = self.text(name_node) if name_node is not None else ""
            value: str | None = None
            if value_node is not None:
                self.nested(value_node)
                word = self.word([value_node])
                value = word.values[0] if word.literal and len(word.values) == 1 else None
            else:
                value = ""
            if name_node is not None:
                self.nested(name_node)
            self._assign(name, value)
            if standalone:
                self._sets_variable(name)
        if nodes and not standalone:
            names = ", ".join(self.text(n).split("=", 1)[0] for n in nodes)
            self.line.not_vetted(f"it sets {names} for the command")

    def _assign(self, name: str, value: str | None) -> None:
        base = name.split("[", 1)[0]
        if programs.risky_assignment(name, value):
            self.line.resolve_fail(f"it sets {base}", open_ended=True)
        else:
            self.line.not_vetted(f"it sets {base}")

    def _sets_variable(self, name: str) -> None:
        """A variable set in the shell itself matters later when it is special to bash or
        a program (risky), or could be exported already (an upper-case name)."""
        base = name.split("[", 1)[0]
        if programs.risky_assignment(base, None) or base != base.lower():
            self.line.change_shell(f"sets {base}")

    def _declaration(self, node: Node) -> None:
        keyword = self.text(node.children[0]) if node.children else "declare"
        if len(node.named_children) > 0:
            self.line.change_shell(_SHELL_STATE.get(keyword, _SHELL_STATE["declare"])[1])
        options = ""
        for child in node.named_children:
            text = self.text(child)
            if child.type == "word" and text.startswith(("-", "+")):
                options += text[1:]
            elif child.type == "variable_assignment":
                self._assignments([child], standalone=True)
            elif child.type == "variable_name":
                if programs.risky_assignment(text, None) and node.children[0].type != "export":
                    self.line.resolve_fail(f"it declares {text}", open_ended=True)
            else:
                self.nested(child)
        if "n" in options:
            self.line.resolve_fail("it declares a name reference", open_ended=True)
        if "f" in options and node.children[0].type == "export":
            self.line.resolve_fail("it exports a shell function")

    # --- redirections ----------------------------------------------------------------------

    def redirections(
        self, nodes: list[Node], stdin: _Input | None
    ) -> tuple[_Input | None, list[Node]]:
        """Record redirections; return the command's input and words the grammar misplaced."""
        extra_words: list[Node] = []
        for node in nodes:
            if node.type == "file_redirect":
                operator = next((c for c in node.children if not c.is_named), None)
                op = self.text(operator) if operator is not None else ">"
                destinations = node.children_by_field_name("destination")
                for destination in destinations:
                    self.nested(destination)
                if not destinations:
                    continue
                target = self.word([destinations[0]])
                redirection = Redirection(
                    op, target.values[0], target.literal and len(target.values) == 1
                )
                self.line.redirections.append(redirection)
                if redirection.writes:
                    self.line.not_vetted(f"it writes to {_excerpt(redirection.target)}")
                extra_words.extend(destinations[1:])  # `echo > f hi`: `hi` is echo's
                if op in ("<", "<&"):
                    stdin = _Input("file")
            elif node.type == "herestring_redirect":
                for child in node.named_children:
                    self.nested(child)
                content = node.named_children[-1] if node.named_child_count else None
                if content is None:
                    continue
                placeholder = self.text(content)
                heredoc = self.heredocs.get(placeholder)
                if heredoc is not None:
                    stdin = self._heredoc_input(heredoc)
                    continue
                word = self.word([content])
                stdin = _Input("text", " ".join(word.values), word.literal)
            elif node.type == "heredoc_redirect":
                stdin = self._heredoc(node)
            else:
                self._problem(f"`{node.type}` as a redirection")
        return stdin, extra_words

    def _heredoc(self, node: Node) -> _Input:
        start = _child(node, "heredoc_start")
        body = _child(node, "heredoc_body")
        end = _child(node, "heredoc_end")
        operator = node.children[0].type if node.children else "<<"
        delimiter_source = self.text(start) if start is not None else ""
        quoted = any(c in delimiter_source for c in "'\"\\")
        delimiter = _unquote(delimiter_source)
        text = self.text(body) if body is not None else ""
        lines = text.split("\n")
        strip = operator == "<<-"
        if any((ln.lstrip("\t") if strip else ln) == delimiter for ln in lines[:-1]) or (
            end is not None and self.text(end).lstrip("\t") != delimiter
        ):
            self._problem("a heredoc whose end the grammar misplaced")
        literal = quoted or _plain_body(body)
        if body is not None and not quoted:
            self.nested(body)
            if _unread_expansion(body, self.source):
                self._problem("a heredoc body with expansions the grammar did not read")
        return _Input("text", text, literal)

    def _heredoc_input(self, heredoc: _Heredoc) -> _Input:
        if heredoc.node is not None:
            _Reader(heredoc.source, self.line, self.budget, self.depth, {}).nested(heredoc.node)
        return _Input("text", heredoc.body, heredoc.literal)

    # --- words -------------------------------------------------------------------------------

    def word(self, nodes: list[Node]) -> Word:
        """The value of one bash word made of `nodes` (already walked for substitutions)."""
        parts: list[str] = []
        for node in nodes:
            self.nested(node)
            part = self._protected(node)
            if part is None:
                start, end = nodes[0].start_byte, nodes[-1].end_byte
                return Word.unknown(self.source[start:end].decode("utf-8", "replace"))
            parts.append(part)
        return finish("".join(parts))

    def _protected(self, node: Node) -> str | None:
        """A word part as protected text (quoted characters escaped); None if not literal."""
        kind = node.type
        text = self.text(node)
        if kind == "word":
            self._check_word(text)
            return unquoted_word(text)
        if kind in ("number", "brace_expression", "$"):
            return text
        if kind == "raw_string":
            return protect(text[1:-1])
        if kind == "ansi_c_string":
            return protect(ansi_c(text[2:-1]))
        if kind in ("string", "translated_string"):
            inner = node.named_children
            if kind == "translated_string":
                return self._protected(inner[0]) if len(inner) == 1 else None
            if any(c.type != "string_content" for c in inner):
                return None
            return protect(double_quoted(text[1:-1]))
        if kind == "concatenation":
            pieces = [self._protected(c) for c in node.children]
            return None if any(p is None for p in pieces) else "".join(p or "" for p in pieces)
        return None

    def _check_word(self, text: str) -> None:
        """Bash ends a word at an unescaped metacharacter; the grammar must have too."""
        bare = _ESCAPED.sub("", text) if "\\" in text else text
        found = next((c for c in _METACHARS if c in bare), None)
        if found is not None:
            self._problem(f"the word `{_excerpt(text)}` holds `{found}`")

    def nested(self, node: Node) -> None:
        """Read the commands nested in a word or expression (substitutions, arithmetic)."""
        stack = [node]
        while stack:
            current = stack.pop()
            kind = current.type
            if kind == "command_substitution":
                for child in current.named_children:
                    self.statement(child, None)
            elif kind == "process_substitution":
                self.line.resolve_fail("it uses process substitution")
                for child in current.named_children:
                    self.statement(child, None)
            elif kind == "arithmetic_expansion":
                self.arithmetic(current)
            elif kind == "ERROR" or current.is_missing:
                self._problem(f"a syntax error near `{_excerpt(self.text(current))}`")
            else:
                stack.extend(current.children)

    def arithmetic(self, node: Node) -> None:
        """Arithmetic on anything but numbers can run commands (`a[$(cmd)]` in a value)."""
        stack = list(node.named_children)
        on_values = False
        while stack:
            current = stack.pop()
            if current.type in ("command_substitution", "process_substitution"):
                self.nested(current)
                on_values = True
            elif current.type in _ARITHMETIC_OPERANDS:
                on_values = True
                stack.extend(current.named_children)
            else:
                stack.extend(current.named_children)
        if on_values:
            self.line.resolve_fail("it does arithmetic on run-time values, which can run commands")

    # --- what a simple command runs --------------------------------------------------------

    def run(self, words: list[str], unknown: set[int], stdin: _Input | None) -> None:
        """Add a simple command, unwrapping what it runs."""
        self._shell_state(words, unknown)
        if 0 in unknown:
            self.line.commands.append(Command(tuple(words), frozenset(unknown)))
            self.line.resolve_fail(
                f"its program `{_excerpt(words[0])}` is only known at run time", open_ended=True
            )
            return
        name = command_name(words)
        spec = programs.WRAPPERS.get(name)
        if spec is not None and (spec.subcommand is None or words[1:2] == [spec.subcommand]):
            self._wrapper(name, spec, words, unknown, stdin)
            return
        command = Command(tuple(words), frozenset(unknown))
        self.line.commands.append(command)
        args = words[1:]
        if name in programs.EVAL_BUILTINS:
            self.line.resolve_fail("it runs `eval`, which builds a command at run time")
            self._shell_code(" ".join(args), literal=len(unknown) == 0, what="eval")
        elif name in programs.FILE_RUNNERS:
            if 1 in unknown:
                self.line.feed(f"it runs commands another command produces (`{name}`)")
            self.line.resolve_fail(f"it runs the commands in a file (`{name}`)", open_ended=True)
        elif name in programs.OPEN_ENDED_BUILTINS:
            self.line.resolve_fail(programs.OPEN_ENDED_BUILTINS[name], open_ended=True)
        elif name == "hash" and any(a.startswith("-") and "p" in a for a in args):
            self.line.resolve_fail("it points a command name at another program", open_ended=True)
        elif name == "alias":
            self.line.resolve_fail("it defines an alias")
            for arg in args:
                if "=" in arg:
                    self._shell_code(arg.split("=", 1)[1], literal=True, what="alias")
        elif name == "trap":
            self.line.resolve_fail("it sets a trap, which runs a command later")
            action = next((a for a in args if not a.startswith("-")), None)
            if action is not None:
                self._shell_code(action, literal=1 not in unknown, what="trap")
        elif name == "let":
            if any(_IDENTIFIER.search(a) for a in args):
                self.line.resolve_fail(
                    "it does arithmetic on run-time values, which can run commands"
                )
        elif name in programs.ASSIGNING_BUILTINS:
            self._assigning_builtin(name, args)
        elif name in programs.SHELLS:
            self._shell(words, unknown, stdin)
        elif name in programs.STDIN_RUNNERS:
            self._stdin_code(stdin, shell=True, what=name)
        elif name in ("find", "fd", "fdfind"):
            self._find_exec(words, unknown)
        elif name == "ssh":
            self._ssh(words)
        elif name == "parallel":
            self.line.resolve_fail(
                "it runs commands built from its input (`parallel`)", open_ended=True
            )
        elif programs.interpreter(name) is not None:
            self._interpreter(programs.interpreter(name) or name, words, unknown, stdin)

    def _shell_state(self, words: list[str], unknown: set[int]) -> None:
        """Record how a builtin (or a program known only at run time) may change the shell."""
        if 0 in unknown:
            self.line.change_shell("its program is only known at run time")
            return
        name = words[0]
        if name == "printf":
            if any(w.startswith("-v") for w in words[1:]):
                self.line.change_shell("assigns a variable (`printf -v`)")
            return
        only_with_arguments, what = _SHELL_STATE.get(name, (False, ""))
        if what and (len(words) > 1 or not only_with_arguments):
            self.line.change_shell(what)

    def _wrapper(
        self,
        name: str,
        spec: programs.Wrapper,
        words: list[str],
        unknown: set[int],
        stdin: _Input | None,
    ) -> None:
        start = 2 if spec.subcommand else 1
        split = _split_wrapper(name, spec, words, start)
        if isinstance(split, str):
            self.line.commands.append(Command(tuple(words), frozenset(unknown)))
            self.line.resolve_fail(split, open_ended=True)
            return
        index, shell_code, joined = split
        self.line.commands.append(
            Command(tuple(words[:index]), frozenset(i for i in unknown if i < index))
        )
        for word in words[1:index]:
            match = _ASSIGNMENT.match(word)
            if name == "env" and match:
                self._assign(match.group(1), match.group(2))
        if name == "exec":
            self.line.resolve_fail("it uses `exec`, which replaces the shell")
        if shell_code is not None:
            code_index, code = shell_code
            self._shell_code(code, literal=code_index not in unknown, what=name)
            return
        inner = words[index:]
        inner_unknown = {i - index for i in unknown if i >= index}
        if name == "command" and any(w in ("-v", "-V") for w in words[1:index]):
            return  # `command -v x` only looks x up
        if joined:
            if inner:
                self._shell_code(" ".join(inner), literal=not inner_unknown, what=name)
            elif name in ("sudo",):
                self._stdin_code(stdin, shell=True, what=name)
            return
        if name == "xargs":
            inner, inner_unknown = _xargs_command(words[:index], inner, inner_unknown)
        if inner:
            self.run(inner, inner_unknown, stdin)

    def _shell(self, words: list[str], unknown: set[int], stdin: _Input | None) -> None:
        index = 1
        runs_code = False
        while index < len(words):
            word = words[index]
            if word in ("--", "-"):
                index += 1
                break
            if word in programs.SHELL_VALUE_OPTIONS:
                if word in programs.SHELL_RUNS_FILE_OPTIONS:
                    self.line.resolve_fail(
                        f"the shell runs a start-up file ({word})", open_ended=True
                    )
                index += 2
                continue
            if word.startswith("--"):
                index += 1
                continue
            if word[:1] in "-+" and len(word) > 1:
                runs_code = runs_code or (word[0] == "-" and "c" in word[1:])
                index += 1
                continue
            break
        if runs_code:
            if index < len(words):
                self._shell_code(words[index], literal=index not in unknown, what=words[0])
            return
        if index < len(words):
            self.line.resolve_fail(
                f"the shell runs the script `{_excerpt(words[index])}`", open_ended=True
            )
            return
        self._stdin_code(stdin, shell=True, what=words[0])

    def _shell_code(self, code: str, *, literal: bool, what: str) -> None:
        if not literal:
            self.line.feed(f"{what} runs a command built at run time")
            return
        self.line.add(read_command_line(code, self.depth + 1, self.budget))

    def _stdin_code(self, stdin: _Input | None, *, shell: bool, what: str) -> None:
        if stdin is None:
            return
        if stdin.kind == "pipe":
            self.line.feed(f"{what} runs what another command prints")
        elif stdin.kind == "file":
            self.line.resolve_fail(f"{what} runs code read from a file", open_ended=shell)
        elif not stdin.literal:
            self.line.feed(f"{what} runs code built at run time")
        elif shell:
            self._shell_code(stdin.text, literal=True, what=what)
        else:
            self.line.code.append(stdin.text)

    def _interpreter(
        self, family: str, words: list[str], unknown: set[int], stdin: _Input | None
    ) -> None:
        options = programs.INTERPRETER_CODE_OPTIONS.get(family, frozenset())
        index = 1
        while index < len(words):
            word = words[index]
            option = word.split("=", 1)[0]
            if word in options and index + 1 < len(words):
                self._code(words[index + 1], index + 1 not in unknown)
                return
            if option in options and "=" in word:
                self._code(word.split("=", 1)[1], index not in unknown)
                return
            short = next(
                (o for o in options if len(o) == 2 and word.startswith(o) and len(word) > 2), None
            )
            if short is not None:
                self._code(word[2:], index not in unknown)
                return
            if family == "deno" and word == "eval" and index + 1 < len(words):
                self._code(words[index + 1], index + 1 not in unknown)
                return
            if word in ("-m", "-") or not word.startswith("-"):
                break
            index += 1
        if index >= len(words) or words[index] == "-":
            self._stdin_code(stdin, shell=False, what=words[0])

    def _code(self, code: str, literal: bool) -> None:
        if literal:
            self.line.code.append(code)
        else:
            self.line.feed("it runs code built at run time")

    def _assigning_builtin(self, name: str, args: list[str]) -> None:
        names: list[str] = []
        if name == "printf":
            for index, arg in enumerate(args):
                if arg == "-v" and index + 1 < len(args):
                    names.append(args[index + 1])
                elif arg.startswith("-v") and len(arg) > 2:
                    names.append(arg[2:])
        elif name == "getopts":
            names = args[1:2]
        else:
            names = [a for a in args if not a.startswith("-")]
        for variable in names:
            self._assign(variable, None)

    def _find_exec(self, words: list[str], unknown: set[int]) -> None:
        markers = (
            {"-exec", "-execdir", "-ok", "-okdir"}
            if words[0].endswith("find")
            else {"-x", "--exec", "-X", "--exec-batch"}
        )
        index = 0
        while index < len(words):
            if words[index] not in markers:
                index += 1
                continue
            end = next(
                (i for i in range(index + 1, len(words)) if words[i] in (";", "+")), len(words)
            )
            inner = words[index + 1 : end]
            inner_unknown = {i - index - 1 for i in unknown if index < i < end}
            inner_unknown |= {i for i, w in enumerate(inner) if "{}" in w}
            if inner:
                self.run(inner, inner_unknown, None)
            else:
                self._problem(f"`{words[index]}` without a command")
            index = end + 1

    def _ssh(self, words: list[str]) -> None:
        takes_value = set("bcDEeFIiJLlmOopQRSWwB")
        index = 1
        while index < len(words) and words[index].startswith("-"):
            word = words[index]
            index += 2 if len(word) == 2 and word[1] in takes_value else 1
        remote = words[index + 1 :]
        if remote:
            self.line.code.append(" ".join(remote))

    # --- helpers -------------------------------------------------------------------------------

    def text(self, node: Node) -> str:
        """The source text of a node."""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def _problem(self, problem: str) -> None:
        if problem not in self.problems:
            self.problems.append(problem)


def _split_wrapper(
    name: str, spec: programs.Wrapper, words: list[str], start: int
) -> tuple[int, tuple[int, str] | None, bool] | str:
    """(where the wrapped command starts, shell code given by option, joins into a shell),
    or why the wrapper's words cannot be split."""
    for index, word in enumerate(words[start:], start):
        option, has_value, value = word.partition("=")
        if option in spec.shell_options:
            if has_value:
                return len(words), (index, value), False
            if index + 1 < len(words):
                return len(words), (index + 1, words[index + 1]), False
        if len(option) > 2 and option[:2] in spec.shell_options and not option.startswith("--"):
            return len(words), (index, word[2:]), False
    joined = spec.joins_into_shell
    index = start
    while index < len(words):
        word = words[index]
        if word == "--":
            index += 1
            break
        if name == "env" and _ASSIGNMENT.match(word):
            index += 1
            continue
        if not word.startswith("-") or (word == "-" and name not in ("su", "runuser")):
            break
        option = word.split("=", 1)[0]
        if name == "sudo" and word in ("-s", "-i", "--shell", "--login"):
            joined = True
            index += 1
        elif name == "watch" and word in ("-x", "--exec"):
            joined = False
            index += 1
        elif word in spec.takes_value:
            index += 2
        elif (
            option in spec.takes_value
            or option in spec.flags
            or (
                not word.startswith("--")
                and len(word) > 2
                and (word[:2] in spec.takes_value or all("-" + c in spec.flags for c in word[1:]))
            )
            or (name == "nice" and word[1:].isdigit())
        ):
            index += 1
        else:
            return f"`{name}` has an option the analyzer does not know ({word})"
    return min(index + spec.positionals, len(words)), None, joined


def _xargs_command(
    options: list[str], inner: list[str], unknown: set[int]
) -> tuple[list[str], set[int]]:
    """The command xargs runs, its input-dependent words marked unknown."""
    if not inner:
        inner = ["echo"]
    replace = None
    for index, word in enumerate(options):
        if word in ("-I", "--replace") and index + 1 < len(options):
            replace = options[index + 1]
        elif word.startswith("-I") and len(word) > 2:
            replace = word[2:]
        elif word.startswith(("-i", "--replace")):
            replace = word.split("=", 1)[1] if "=" in word else (word[2:] or "{}")
    if replace:
        return inner, unknown | {i for i, w in enumerate(inner) if replace in w}
    return [*inner, "$(xargs input)"], unknown | {len(inner)}


def _unread_expansion(body: Node, source: bytes) -> bool:
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


def _unquote(text: str) -> str:
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


def _adjacent_groups(nodes: list[Node]) -> list[list[Node]]:
    """Nodes that touch with no blank between them: bash reads them as one word."""
    groups: list[list[Node]] = []
    for node in nodes:
        if groups and groups[-1][-1].end_byte == node.start_byte:
            groups[-1].append(node)
        else:
            groups.append([node])
    return groups


def _child(node: Node, kind: str) -> Node | None:
    return next((c for c in node.children if c.type == kind), None)


def _descendants(node: Node, kind: str) -> list[Node]:
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == kind:
            found.append(current)
        stack.extend(current.children)
    return found


def _errors(node: Node) -> list[Node]:
    found: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            found.append(current)
        elif current.has_error:
            stack.extend(current.children)
    return found


def _excerpt(text: str, limit: int = 40) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""Reads a bash command line into a CommandLine, on tree-sitter's bash grammar.

The grammar gives the structure; this module decides what bash would run. Where the tree
could disagree with bash (a parse error, a keyword glued to a word, words the grammar split
apart), the line is marked as not reliably readable, which fails closed: no allow rule
covers it, every deny rule applies, and it rates at least MEDIUM. The commands found are
still collected, best effort, for the risk rules.

Parsing within a budget (and the syntax tree's helpers) is `grammar`'s; what a simple
command runs (wrappers, shells and interpreters given code) is `running`'s.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ohtui.sdk.security.shell import programs
from ohtui.sdk.security.shell.grammar import (
    PARSE_SECONDS,
    Budget,
    Heredoc,
    Input,
    TooLongError,
    adjacent_groups,
    bash_parser,
    child_of_kind,
    descendants_of_kind,
    excerpt,
    parse_within,
    plain_body,
    recover_heredocs,
    redirect_operator,
    unquote,
    unread_expansion,
    work_clock,
)
from ohtui.sdk.security.shell.model import CommandLine, Redirection
from ohtui.sdk.security.shell.running import CommandRunner
from ohtui.sdk.security.shell.words import (
    Word,
    ansi_c,
    double_quoted,
    finish,
    protect,
    unquoted_word,
)

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_NESTING = 8
"""Shells within shells (`bash -c "eval '...'"`) followed before giving up."""
_MAX_RECURSION = 150
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


def read_command_line(command: str, depth: int = 0, budget: Budget | None = None) -> CommandLine:
    """What `command` would run, as far as it can be told before running it."""
    if budget is None:
        bash_parser()  # loading it is not reading the command: never counted
        budget = Budget(work_clock() + PARSE_SECONDS)
    line = CommandLine()
    if depth > MAX_NESTING:
        line.resolve_fail("it nests shells too deeply to check", open_ended=True)
        return line
    source = command.encode("utf-8", "replace")
    try:
        tree = parse_within(source, budget)
        heredocs: dict[str, Heredoc] = {}
        if tree.root_node.has_error:
            recovered = recover_heredocs(source, tree, budget)
            if recovered is not None:
                source, tree, heredocs = recovered
        reader = _Reader(source, line, budget, depth, heredocs)
        reader.statement(tree.root_node, None)
    except TooLongError as exc:
        line.resolve_fail(f"it is too long to check ({exc})", open_ended=True)
        return line
    if tree.root_node.has_error and not reader.problems:
        reader.problems.append("a syntax error")
    for problem in reader.problems:
        line.resolve_fail(f"it cannot be read reliably ({problem})", open_ended=True)
    return line


class _Reader(CommandRunner):
    """Walks a syntax tree, adding what it runs to a CommandLine (what a simple command
    runs is `CommandRunner`'s part)."""

    def __init__(
        self,
        source: bytes,
        line: CommandLine,
        budget: Budget,
        depth: int,
        heredocs: dict[str, Heredoc],
    ) -> None:
        self.source = source
        self.line = line
        self.budget = budget
        self.depth = depth
        self.heredocs = heredocs
        self.problems: list[str] = []
        self._recursion = 0

    # --- statements ----------------------------------------------------------------------

    def statement(self, node: Node, stdin: Input | None) -> None:
        """Read one statement (and what it contains)."""
        self._recursion += 1
        try:
            if self._recursion > _MAX_RECURSION:
                self._problem("it is nested too deeply")
                return
            self._statement(node, stdin)
        finally:
            self._recursion -= 1

    def _statement(self, node: Node, stdin: Input | None) -> None:
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
                self.statement(child, stdin if index == 0 else Input("pipe"))
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
            self.nested(node)
            if kind == "unset_command":
                self.line.change("it runs `unset`, which can change the shell for later commands")
                if "[" in self.text(node):
                    self.line.resolve_fail("it evaluates an array subscript")
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
            self.line.change("it defines a shell function")
            for child in node.named_children:
                if child.type in _STATEMENTS:
                    self.statement(child, stdin)
        elif kind == "ERROR":
            self._problem(f"a syntax error near `{excerpt(self.text(node))}`")
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

    def _compound(self, node: Node, stdin: Input | None) -> None:
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

    def _redirected(self, node: Node, stdin: Input | None) -> None:
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
                    self._problem(f"a syntax error near `{excerpt(self.text(part))}`")
        if body is not None and body.type == "command":
            self._command(body, stdin, redirects)
        else:
            stdin, extra = self.redirections(redirects, stdin)
            if extra:
                self._problem("words after a redirection of a compound command")
            if body is not None:
                self.statement(body, stdin)
        for statement, piped in after:
            self.statement(statement, Input("pipe") if piped else None)

    def _test(self, node: Node) -> None:
        self.nested(node)
        for operator in descendants_of_kind(node, "test_operator"):
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

    def _for(self, node: Node, stdin: Input | None) -> None:
        variable = node.child_by_field_name("variable")
        if variable is not None and programs.risky_assignment(self.text(variable), None):
            self.line.resolve_fail(f"it sets {self.text(variable)}", open_ended=True)
        if variable is not None and _state_variable(self.text(variable)):
            self.line.change(f"it sets {self.text(variable)}")
        for child in node.children_by_field_name("value"):
            self.nested(child)
        body = node.child_by_field_name("body")
        if body is not None:
            self.statement(body, stdin)

    def _c_for(self, node: Node, stdin: Input | None) -> None:
        for field in ("initializer", "condition", "update"):
            for child in node.children_by_field_name(field):
                self.arithmetic(child)
        body = node.child_by_field_name("body")
        if body is not None:
            self.statement(body, stdin)

    def _case(self, node: Node, stdin: Input | None) -> None:
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

    def _command(self, node: Node, stdin: Input | None, redirects: list[Node]) -> None:
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
        for group in adjacent_groups(word_nodes):
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
            self._assign(name, value, standalone=standalone)
        if nodes and not standalone:
            names = ", ".join(self.text(n).split("=", 1)[0] for n in nodes)
            self.line.not_vetted(f"it sets {names} for the command")

    def _assign(self, name: str, value: str | None, *, standalone: bool = True) -> None:
        base, _, subscript = name.partition("[")
        if subscript and not _plain_subscript(subscript[:-1]):
            self.line.resolve_fail("it evaluates an array subscript, which can run commands")
        if standalone and _state_variable(base):
            self.line.change(f"it sets {base}")
        if programs.risky_assignment(name, value):
            self.line.resolve_fail(f"it sets {base}", open_ended=True)
        else:
            self.line.not_vetted(f"it sets {base}")

    def _declaration(self, node: Node) -> None:
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
        keyword = node.children[0].type if node.children else "declare"
        self.line.change(f"it runs `{keyword}`, which can change the shell for later commands")
        if "i" in options:
            self.line.resolve_fail("it declares integers, whose values it evaluates")
        if "n" in options:
            self.line.resolve_fail("it declares a name reference", open_ended=True)
        if "f" in options and node.children[0].type == "export":
            self.line.resolve_fail("it exports a shell function")

    # --- redirections ----------------------------------------------------------------------

    def redirections(
        self, nodes: list[Node], stdin: Input | None
    ) -> tuple[Input | None, list[Node]]:
        """Record redirections; return the command's input and words the grammar misplaced."""
        extra_words: list[Node] = []
        for node in nodes:
            if node.type == "file_redirect":
                destinations = node.children_by_field_name("destination")
                op = redirect_operator(node, destinations, self.source)
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
                    self.line.not_vetted(f"it writes to {excerpt(redirection.target)}")
                extra_words.extend(destinations[1:])  # `echo > f hi`: `hi` is echo's
                if op in ("<", "<&"):
                    stdin = Input("file")
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
                stdin = Input("text", " ".join(word.values), word.literal)
            elif node.type == "heredoc_redirect":
                stdin = self._heredoc(node)
            else:
                self._problem(f"`{node.type}` as a redirection")
        return stdin, extra_words

    def _heredoc(self, node: Node) -> Input:
        start = child_of_kind(node, "heredoc_start")
        body = child_of_kind(node, "heredoc_body")
        end = child_of_kind(node, "heredoc_end")
        operator = node.children[0].type if node.children else "<<"
        delimiter_source = self.text(start) if start is not None else ""
        quoted = any(c in delimiter_source for c in "'\"\\")
        delimiter = unquote(delimiter_source)
        text = self.text(body) if body is not None else ""
        lines = text.split("\n")
        strip = operator == "<<-"
        if any((ln.lstrip("\t") if strip else ln) == delimiter for ln in lines[:-1]) or (
            end is not None and self.text(end).lstrip("\t") != delimiter
        ):
            self._problem("a heredoc whose end the grammar misplaced")
        literal = quoted or plain_body(body)
        if body is not None and not quoted:
            self.nested(body)
            if unread_expansion(body, self.source):
                self._problem("a heredoc body with expansions the grammar did not read")
        return Input("text", text, literal)

    def _heredoc_input(self, heredoc: Heredoc) -> Input:
        if heredoc.node is not None:
            _Reader(heredoc.source, self.line, self.budget, self.depth, {}).nested(heredoc.node)
        return Input("text", heredoc.body, heredoc.literal)

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
        if kind == "translated_string":
            return None  # `$"…"`: a message catalog may translate it at run time
        if kind == "string":
            inner = node.named_children
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
            self._problem(f"the word `{excerpt(text)}` holds `{found}`")

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
            elif kind == "subscript":
                index = current.child_by_field_name("index")
                if index is None or not _plain_subscript(self.text(index)):
                    self.line.resolve_fail(
                        "it evaluates an array subscript, which can run commands"
                    )
                stack.extend(current.children)
            elif kind == "ERROR" or current.is_missing:
                self._problem(f"a syntax error near `{excerpt(self.text(current))}`")
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
            self.line.change("its arithmetic may assign variables")

    # --- helpers -------------------------------------------------------------------------------

    def read_nested(self, code: str) -> CommandLine:
        """Read code a command runs (`bash -c`, `eval`) one shell deeper, on this budget."""
        return read_command_line(code, self.depth + 1, self.budget)

    def text(self, node: Node) -> str:
        """The source text of a node."""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def _problem(self, problem: str) -> None:
        if problem not in self.problems:
            self.problems.append(problem)


def _plain_subscript(subscript: str) -> bool:
    """Whether an array subscript is a plain number or name that evaluates to nothing else."""
    return subscript.isdigit() or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", subscript) is not None


def _state_variable(name: str) -> bool:
    """Whether setting `name` in the shell steers later commands: a risky name, a pager or
    `LESS*` variable, or an environment-style (upper-case) name that may be exported."""
    base = name.split("[", 1)[0]
    return (
        programs.risky_assignment(base, None)
        or base.startswith(programs.STATE_VARIABLE_PREFIXES)
        or (base.upper() == base and any(c.isalpha() for c in base))
    )

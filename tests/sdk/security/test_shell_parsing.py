"""Tests for the bash reader behind approval rules and pattern analysis (`parse_command`)."""

from __future__ import annotations

import time

import pytest

from ohtui.sdk.security.shell import Command, parse_command
from ohtui.sdk.security.shell.grammar import Budget as _Budget
from ohtui.sdk.security.shell.reader import read_command_line


def parts(command: str) -> list[list[str]]:
    return parse_command(command).parts


# --- simple commands and operators ------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls -la", [["ls", "-la"]]),
        ("a; b", [["a"], ["b"]]),
        ("a && b", [["a"], ["b"]]),
        ("a || b", [["a"], ["b"]]),
        ("a | b", [["a"], ["b"]]),
        ("a |& b", [["a"], ["b"]]),
        ("a & b", [["a"], ["b"]]),
        ("a\nb", [["a"], ["b"]]),
        ("a;b&&c||d|e&f\ng", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]),
        ("sleep 1 &", [["sleep", "1"]]),
        ("(cd sub && ls)", [["cd", "sub"], ["ls"]]),
        ("{ ls; pwd; }", [["ls"], ["pwd"]]),
        ("if true; then rm x; fi", [["true"], ["rm", "x"]]),
        ("while false; do rm x; done", [["false"], ["rm", "x"]]),
        ("case x in x) rm y;; esac", [["rm", "y"]]),
        ("! ls", [["ls"]]),
    ],
)
def test_operators_and_compounds_split_simple_commands(
    command: str, expected: list[list[str]]
) -> None:
    line = parse_command(command)
    assert line.parts == expected
    assert not line.unresolved


def test_quotes_keep_operators_inside_one_word() -> None:
    line = parse_command("""echo "a; b && c" 'd | e' f""")
    assert line.parts == [["echo", "a; b && c", "d | e", "f"]]
    assert not line.opaque


def test_escapes_keep_operators_and_spaces_literal() -> None:
    assert parts(r"echo a\;b c\ d") == [["echo", "a;b", "c d"]]
    assert parts(r'echo "say \"hi\""') == [["echo", 'say "hi"']]


def test_quoted_pieces_join_into_one_word() -> None:
    assert parts("""'g'"it" status""") == [["git", "status"]]
    assert parts("r\\m x") == [["rm", "x"]]
    assert parts("r''m x") == [["rm", "x"]]


def test_ansi_c_strings_are_decoded() -> None:
    assert parts("$'\\x72m' x") == [["rm", "x"]]
    assert parts("$'\\162m' x") == [["rm", "x"]]
    assert parts("$'r\\u006d' x") == [["rm", "x"]]
    line = parse_command("echo $'a;b' $'it\\'s'; ls")
    assert line.parts == [["echo", "a;b", "it's"], ["ls"]]


def test_brace_expansion_makes_words() -> None:
    assert parts("echo x{a,b}y {1..3}") == [["echo", "xay", "xby", "1", "2", "3"]]
    assert parts("echo '{a,b}' \\{c,d}") == [["echo", "{a,b}", "{c,d}"]]


def test_backslash_newline_joins_lines() -> None:
    assert parts("ls \\\n  -la") == [["ls", "-la"]]


def test_comments_are_ignored() -> None:
    assert parts("ls # rm -rf /\npwd") == [["ls"], ["pwd"]]


def test_hash_inside_a_word_is_not_a_comment() -> None:
    assert parts("echo a#b") == [["echo", "a#b"]]


def test_prefix_assignments_are_recorded_not_run() -> None:
    line = parse_command("A=1 B=two ls x")
    assert line.parts == [["ls", "x"]]
    assert any("A" in reason for reason in line.unvetted)
    assert not line.unresolved


def test_words_the_grammar_splits_are_joined_as_bash_does() -> None:
    # tree-sitter reads `$"rm"` as two arguments; bash reads one word, which a message
    # catalog may translate at run time: as a program it is unresolved.
    assert parts('$"rm" x') == [['$"rm"', "x"]]
    assert parse_command('$"rm" x').open_ended
    # and places `hi` among the redirection targets
    assert parts("echo > out.txt hi") == [["echo", "hi"]]
    assert parts("> out.txt rm x") == [["rm", "x"]]


# --- heredocs ----------------------------------------------------------------------------


def test_quoted_heredoc_body_is_data() -> None:
    line = parse_command("cat <<'EOF' > notes.txt\nrm -rf /\n$(rm -rf ~)\nEOF\nls")
    assert line.parts == [["cat"], ["ls"]]


def test_unquoted_heredoc_substitutions_run() -> None:
    line = parse_command("cat <<EOF\nhello $(rm -rf ~)\nEOF")
    assert ["rm", "-rf", "~"] in line.parts


def test_command_after_heredoc_is_read() -> None:
    assert parts("cat <<EOF\nhello world\nEOF\nrm -rf ~") == [["cat"], ["rm", "-rf", "~"]]


def test_heredoc_followed_by_a_pipe_is_read_again() -> None:
    # tree-sitter fails on this common form; the reader re-reads it without the body.
    line = parse_command("python3 - <<'PY' 2>&1 | tail -3\nimport os\nPY")
    assert line.parts == [["python3", "-"], ["tail", "-3"]]
    assert line.code == ["import os\n"]
    assert not line.unresolved


def test_double_less_than_inside_expansions_is_not_a_heredoc() -> None:
    line = parse_command("echo $[1<<2]\nrm -rf x\n2]")
    assert ["rm", "-rf", "x"] in line.parts
    unreadable = parse_command("echo ${x<<y}\nrm -rf x\ny}")
    assert unreadable.open_ended


def test_shell_fed_a_literal_heredoc_is_read() -> None:
    line = parse_command("bash <<'EOF'\nrm -rf build\nEOF")
    assert ["rm", "-rf", "build"] in line.parts
    assert not line.open_ended


# --- wrappers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sudo -u x cmd a", [["sudo", "-u", "x"], ["cmd", "a"]]),
        ("sudo git status", [["sudo"], ["git", "status"]]),
        ("sudo -- rm x", [["sudo", "--"], ["rm", "x"]]),
        ("env A=1 cmd", [["env", "A=1"], ["cmd"]]),
        ("xargs -I {} rm {}", [["xargs", "-I", "{}"], ["rm", "{}"]]),
        ("timeout 5 cmd x", [["timeout", "5"], ["cmd", "x"]]),
        ("timeout -s KILL 5 cmd", [["timeout", "-s", "KILL", "5"], ["cmd"]]),
        ("nohup cmd", [["nohup"], ["cmd"]]),
        ("nice -n 10 cmd", [["nice", "-n", "10"], ["cmd"]]),
        ("/usr/bin/sudo cmd", [["/usr/bin/sudo"], ["cmd"]]),
        ("sudo env A=1 timeout 5 rm x", [["sudo"], ["env", "A=1"], ["timeout", "5"], ["rm", "x"]]),
        ("uv run pytest -q", [["uv", "run"], ["pytest", "-q"]]),
        ("busybox rm x", [["busybox"], ["rm", "x"]]),
    ],
)
def test_wrappers_are_unwrapped_into_separate_parts(
    command: str, expected: list[list[str]]
) -> None:
    assert parts(command) == expected


def test_xargs_runs_its_command_with_unknown_arguments() -> None:
    line = parse_command("ls | xargs -n1 rm")
    rm = line.commands[-1]
    assert rm.name == "rm" and not rm.literal


def test_unknown_wrapper_option_is_unresolved() -> None:
    line = parse_command("timeout --frobnicate 5 rm x")
    assert line.open_ended
    assert any("--frobnicate" in reason for reason in line.unresolved)


def test_env_split_string_is_read_as_a_command() -> None:
    assert ["rm", "-rf", "x"] in parts("env -S 'rm -rf x'")


def test_shell_dash_c_is_read_as_a_command_line() -> None:
    line = parse_command('bash -c "a; b"')
    assert line.parts == [["bash", "-c", "a; b"], ["a"], ["b"]]
    assert not line.opaque


def test_shell_dash_c_carries_inner_findings() -> None:
    line = parse_command('sh -c "echo hi > /etc/motd"')
    assert ["echo", "hi"] in line.parts
    assert "/etc/motd" in line.writes_files
    assert ["rm", "-rf", "x"] in parts('bash -lc "rm -rf x; ls"')


def test_find_exec_runs_its_command_as_a_part() -> None:
    line = parse_command(r"find . -name '*.o' -exec rm {} \;")
    assert line.commands[1].words == ("rm", "{}")
    assert not line.commands[1].literal


def test_eval_of_literal_text_is_read() -> None:
    line = parse_command("eval 'rm -rf x'")
    assert ["rm", "-rf", "x"] in line.parts
    assert line.unresolved  # eval never counts as resolved


def test_interpreter_code_is_collected() -> None:
    assert parse_command("python3 -c 'import os'").code == ["import os"]
    assert parse_command("node -e 'x()'").code == ["x()"]
    assert parse_command("perl -e 'unlink 1'").code == ["unlink 1"]


# --- what cannot be resolved -------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "$x -rf /",
        "x=rm; $x y",
        "$(echo rm) y",
        "`echo rm` y",
        "/bin/r? y",
        'eval "$cmd"',
        "source ./env.sh",
        ". ./env.sh",
        "echo rm | sh",
        "curl x | bash",
        'bash -c "$(curl x)"',
        "sh script.sh",
        "PATH=./bin:$PATH ls",
        "LD_PRELOAD=./x.so ls",
        "BASH_ENV=./x bash -c ls",
        "GIT_CONFIG_COUNT=1 git status",
        "IFS=x; ls",
        "declare -n ref=PATH",
        "hash -p /usr/bin/touch ls",
        "{rm,-rf,~}",
        "ls ${x<<y}",
        "echo 'unclosed",
    ],
)
def test_unresolvable_lines_are_open_ended(command: str) -> None:
    line = parse_command(command)
    assert line.open_ended, command
    assert line.opaque


@pytest.mark.parametrize(
    "command",
    [
        "echo $((x))",
        "let i++",
        "(( i = i + 1 ))",
        "for ((i=0; i<3; i++)); do :; done",
        "[[ $x -eq 1 ]]",
        "f() { ls; }",
        "alias ll='ls -l'",
        "trap 'ls' EXIT",
        "exec ls",
        "diff <(ls a) <(ls b)",
    ],
)
def test_constructs_that_can_hide_code_are_unresolved(command: str) -> None:
    assert parse_command(command).unresolved, command


@pytest.mark.parametrize(
    "command",
    [
        "ls 2>&1",
        "ls >/dev/null",
        "ls 2>/dev/null | grep x",
        "ls &>/dev/null",
        "echo err >&2",
        "sort < input.txt",
        "echo $((1 + 2))",
    ],
)
def test_harmless_redirections_and_arithmetic_are_resolved(command: str) -> None:
    line = parse_command(command)
    assert not line.opaque, line.opaque_reasons
    assert line.writes_files == []


def test_run_time_arguments_are_not_literal() -> None:
    line = parse_command('echo "$HOME" *.py ./*.py')
    echo = line.commands[0]
    assert echo.unknown == frozenset({1, 2})  # `./*.py` cannot become an option
    assert not line.unresolved


def test_writes_files_lists_file_targets_only() -> None:
    line = parse_command("a > one.txt 2>&1; b >> two.txt 2>/dev/null; c < in.txt")
    assert line.writes_files == ["one.txt", "two.txt"]
    assert any("one.txt" in reason for reason in line.unvetted)


def test_program_on_path() -> None:
    assert Command(("ls",)).on_path == "ls"
    assert Command(("/usr/bin/ls",)).on_path == "ls"
    assert Command(("./ls",)).on_path is None
    assert Command(("evil/ls",)).on_path is None
    assert Command(("/tmp/ls",)).on_path is None


# --- cost ------------------------------------------------------------------------------------


def test_a_megabyte_heredoc_is_read_in_full() -> None:
    command = "cat > big.py <<'EOF'\n" + "print('hello; world') # x\n" * 40_000 + "EOF\n"
    # A roomy time budget: under a loaded test run the default one may (rightly) fail it
    # closed; bench/shell_analysis.py measures the real figure.
    line = read_command_line(command, budget=_Budget(time.monotonic() + 10))
    assert line.parts == [["cat"]]
    assert not line.unresolved


def test_a_megabyte_of_commands_fails_closed() -> None:
    line = read_command_line("ls; " * 250_000)
    assert line.open_ended
    assert any("too long" in reason for reason in line.unresolved)


def test_a_garbage_collection_in_the_reading_thread_is_not_counted_against_the_budget() -> None:
    """A full collection of a large heap can run in the thread reading a command (tens of
    ms): counted, it turned a plain `ls && pwd` into "too long to check" now and then."""
    import gc
    import time

    from ohtui.sdk.security.shell.grammar import work_clock

    heap = [[{} for _ in range(10)] for _ in range(200_000)]
    began_work, began_cpu = work_clock(), time.thread_time()
    gc.collect()
    spent_cpu, spent_work = time.thread_time() - began_cpu, work_clock() - began_work
    del heap
    assert spent_cpu > 0.02  # the collection really was long
    assert spent_work < 0.005


def test_loading_the_grammar_is_never_counted_against_the_first_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first command of a session must not be "too long to check" because the bash
    grammar was loaded on its clock: a grammar that takes 100 ms of CPU to load (a cold disk
    cache, a busy machine) still leaves the command its whole 30 ms."""
    import tree_sitter_bash

    from ohtui.sdk.security.shell import grammar

    real_language = tree_sitter_bash.language

    def slow_language() -> object:
        end = time.thread_time() + 0.1
        while time.thread_time() < end:
            pass
        return real_language()

    monkeypatch.setattr(grammar, "_parser", None)
    monkeypatch.setattr(tree_sitter_bash, "language", slow_language)
    line = read_command_line("git status --short | grep -v '^??' | wc -l")
    assert not line.unresolved, line.unresolved
    assert [c.name for c in line.commands] == ["git", "grep", "wc"]

"""Tests for the bash reader behind approval rules and pattern analysis (`parse_command`)."""

from __future__ import annotations

import pytest

from ohtui.sdk.security.shell import ShellSyntaxError, parse_command, tokenize

# --- simple commands and operators ------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("ls -la", [["ls", "-la"]]),
        ("a; b", [["a"], ["b"]]),
        ("a && b", [["a"], ["b"]]),
        ("a || b", [["a"], ["b"]]),
        ("a | b", [["a"], ["b"]]),
        ("a & b", [["a"], ["b"]]),
        ("a\nb", [["a"], ["b"]]),
        ("a;b&&c||d|e&f\ng", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]),
        ("sleep 1 &", [["sleep", "1"]]),
        ("(cd sub && ls)", [["cd", "sub"], ["ls"]]),
    ],
)
def test_operators_split_simple_commands(command: str, parts: list[list[str]]) -> None:
    line = parse_command(command)
    assert line.parts == parts
    assert not line.opaque


def test_quotes_keep_operators_inside_one_word() -> None:
    line = parse_command("""echo "a; b && c" 'd | e' f""")
    assert line.parts == [["echo", "a; b && c", "d | e", "f"]]
    assert not line.opaque


def test_escapes_keep_operators_and_spaces_literal() -> None:
    assert parse_command(r"echo a\;b c\ d").parts == [["echo", "a;b", "c d"]]
    assert parse_command(r'echo "say \"hi\""').parts == [["echo", 'say "hi"']]


def test_quoted_pieces_join_into_one_word() -> None:
    assert parse_command("""'g'"it" status""").parts == [["git", "status"]]


def test_backslash_newline_joins_lines() -> None:
    assert parse_command("ls \\\n  -la").parts == [["ls", "-la"]]


def test_comments_are_ignored() -> None:
    line = parse_command("ls # rm -rf /\npwd")
    assert line.parts == [["ls"], ["pwd"]]


def test_hash_inside_a_word_is_not_a_comment() -> None:
    assert parse_command("echo a#b").parts == [["echo", "a#b"]]


def test_variable_assignments_before_a_command_are_dropped() -> None:
    assert parse_command("A=1 B=two ls x").parts == [["ls", "x"]]


def test_control_keywords_are_not_commands() -> None:
    line = parse_command("if true; then rm x; fi")
    assert line.parts == [["true"], ["rm", "x"]]


# --- heredocs ----------------------------------------------------------------------------


def test_heredoc_body_is_not_parsed_as_commands() -> None:
    line = parse_command("cat <<EOF > notes.txt\nrm -rf /\nEOF\nls")
    assert ["rm", "-rf", "/"] not in line.parts
    assert line.parts == [["cat"], ["ls"]]


def test_quoted_heredoc_delimiter_body_is_skipped() -> None:
    line = parse_command("cat <<'EOF' \nrm -rf /\nEOF\nls")
    assert line.parts == [["cat"], ["ls"]]


def test_heredoc_delimiter_at_end_of_line_skips_the_body() -> None:
    line = parse_command("cat <<EOF\nhello world\nEOF\nrm -rf ~")
    assert line.parts == [["cat"], ["rm", "-rf", "~"]]


# --- wrappers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("sudo -u x cmd a", [["sudo", "-u", "x"], ["cmd", "a"]]),
        ("sudo git status", [["sudo"], ["git", "status"]]),
        ("sudo -- rm x", [["sudo", "--"], ["rm", "x"]]),
        ("env A=1 cmd", [["env", "A=1"], ["cmd"]]),
        ("xargs -n1 rm", [["xargs", "-n1"], ["rm"]]),
        ("xargs -I {} rm {}", [["xargs", "-I", "{}"], ["rm", "{}"]]),
        ("timeout 5 cmd x", [["timeout", "5"], ["cmd", "x"]]),
        ("timeout -s KILL 5 cmd", [["timeout", "-s", "KILL", "5"], ["cmd"]]),
        ("nohup cmd", [["nohup"], ["cmd"]]),
        ("nice -n 10 cmd", [["nice", "-n", "10"], ["cmd"]]),
        ("/usr/bin/sudo cmd", [["/usr/bin/sudo"], ["cmd"]]),
        ("sudo env A=1 timeout 5 rm x", [["sudo"], ["env", "A=1"], ["timeout", "5"], ["rm", "x"]]),
    ],
)
def test_wrappers_are_unwrapped_into_separate_parts(command: str, parts: list[list[str]]) -> None:
    assert parse_command(command).parts == parts


def test_shell_dash_c_is_parsed_as_a_command_line() -> None:
    line = parse_command('bash -c "a; b"')
    assert line.parts == [["bash", "-c"], ["a"], ["b"]]
    assert not line.opaque


def test_shell_dash_c_carries_inner_opacity() -> None:
    line = parse_command('sh -c "echo hi > /etc/motd"')
    assert ["echo", "hi"] in line.parts
    assert line.opaque
    assert "/etc/motd" in line.writes_files


def test_shell_with_combined_c_flag_is_unwrapped() -> None:
    line = parse_command('bash -lc "rm -rf x; ls"')
    assert ["rm", "-rf", "x"] in line.parts
    assert ["ls"] in line.parts


def test_find_exec_runs_its_command_as_a_part() -> None:
    line = parse_command(r"find . -name '*.o' -exec rm {} \;")
    assert line.parts == [["find", ".", "-name", "*.o", "-exec"], ["rm", "{}"]]
    assert parse_command("find . -exec rm -f {} +").parts == [
        ["find", ".", "-exec"],
        ["rm", "-f", "{}"],
    ]


# --- opacity ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo $(rm -rf y)",
        'echo "$(whoami)"',
        "echo `rm x`",
        "diff <(ls a) <(ls b)",
        "tee >(cat)",
        "ls > out.txt",
        "ls >> out.txt",
        "ls 2> err.log",
        "ls &> all.log",
        "for f in *; do rm $f; done",
        "case x in x) rm y;; esac",
        "function f { rm x; }",
        'echo "unclosed',
        "echo 'unclosed",
    ],
)
def test_unvettable_constructs_are_opaque(command: str) -> None:
    line = parse_command(command)
    assert line.opaque
    assert line.opaque_reasons


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
        "echo $HOME",
    ],
)
def test_harmless_redirections_and_expansions_are_not_opaque(command: str) -> None:
    line = parse_command(command)
    assert not line.opaque, line.opaque_reasons
    assert line.writes_files == []


def test_command_substitution_bodies_are_collected() -> None:
    line = parse_command("echo $(rm -rf y) `id -u`")
    assert line.substitutions == ["rm -rf y", "id -u"]
    assert "substitution" in line.opaque_reasons[0]


def test_nested_substitution_is_collected_whole() -> None:
    line = parse_command("echo $(cat $(ls))")
    assert line.substitutions[0] == "cat $(ls)"


def test_writes_files_lists_file_targets_only() -> None:
    line = parse_command("a > one.txt 2>&1; b >> two.txt 2>/dev/null; c < in.txt")
    assert line.writes_files == ["one.txt", "two.txt"]
    assert any("one.txt" in reason for reason in line.opaque_reasons)


def test_for_loop_reason_names_the_keyword() -> None:
    line = parse_command("for f in a b; do rm $f; done")
    assert any("`for`" in reason for reason in line.opaque_reasons)


def test_unclosed_quote_yields_no_parts_and_says_why() -> None:
    line = parse_command('git status; echo "oops')
    assert line.parts == []
    assert any("unclosed double quote" in reason for reason in line.opaque_reasons)


def test_tokenize_raises_on_unclosed_quotes() -> None:
    with pytest.raises(ShellSyntaxError):
        tokenize("echo 'x")
    with pytest.raises(ShellSyntaxError):
        tokenize('echo "x')


def test_tokenize_marks_operators() -> None:
    tokens = tokenize("a 2>&1 | b")
    assert [(t.text, t.operator) for t in tokens] == [
        ("a", False),
        (">&", True),
        ("1", False),
        ("|", True),
        ("b", False),
    ]

"""The `ohtui` command: parses arguments and starts the TUI or a headless run.

Imports nothing heavy up front: `ohtui --help` must answer in a blink.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ohtui import __version__
from ohtui.hardening import make_process_private
from ohtui.long_lived import own_program, started, starting
from ohtui.settings.choices import ConfirmationPolicy
from ohtui.settings.overrides import ENV_VARS, run_overrides
from ohtui.settings.sandbox_modes import SANDBOX_MODES
from ohtui.tui.options import AppOptions

if TYPE_CHECKING:
    from ohtui.headless import Command

DESCRIPTION = "A terminal chat app for an AI coding agent that works in your project."
PICK = "\0pick"
"""--resume given without an id: open the picker."""
EPILOG = """\
agent server:
  ohtui serve [--host H] [--port P]      serve conversations to ohtui and OpenHands clients
                                         (ohtui serve --help for more)

editors (the Agent Client Protocol, on stdin and stdout):
  ohtui acp                              the agent for Zed, JetBrains IDEs, Neovim, Toad
                                         (ohtui acp --help for more)

trust (what a headless run uses):
  ohtui trust [--yes]                    review what the workspace's .mcp.json and your
                                         plugins would run, and trust them

headless runs (-p):
  ohtui -p "fix the failing test"        print the agent's final response
  echo "task" | ohtui -p                 the task from stdin
  ohtui -p "task" --json                 one JSON object per event on stdout
  ohtui -p "task" --fork 1c37            run it in a new fork of conversation 1c37 (its id:
                                         on stderr, or "conversation_id" of the first --json
                                         line); --at EVENT_ID forks at that event
  ohtui -p "task" --resume 1c37 --at E   move 1c37's HEAD to event E first: the task starts
                                         a new branch there (event ids: "id" in --json)
  exit codes: 0 finished · 1 run error · 2 usage, an unknown conversation (--resume,
              --fork) or event (--at) · 3 configuration · 4 LLM provider (auth,
              unreachable) · 5 stopped (max iterations, stuck) · 6 in use (the
              conversation is open in another ohtui) · 8 actions needing approval
              were refused (each named on stderr), so the task may not be done

checkpoints of the workspace (no agent turn; with --resume ID or --continue, and --server):
  ohtui --undo --continue                restore the workspace to before the newest action
                                         not undone yet; prints each file changed
  ohtui --checkpoints --resume 1c37      list them, newest first (* marks what --undo restores)
  ohtui --restore 9f2e --resume 1c37     restore one of them (e.g. to take a restore back)
  exit codes: 0 restored (or listed) · 1 the restore failed (the agent runs on the server,
              the checkpoint's files are gone) · 2 usage, unknown conversation or checkpoint ·
              3 configuration (and a server that keeps no checkpoints) · 6 in use ·
              7 nothing to undo

settings:
  config.toml in your user config directory (--config or OHTUI_CONFIG to use another);
  API keys and secrets live in the OS keyring (open /settings in the app).

environment (overrides config.toml for this run):
  OHTUI_API_KEY            the API key (or the provider's own, e.g. OPENAI_API_KEY)
{variables}
  OHTUI_DATA_DIR           where conversations, prompt history and rules are kept
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    variables = "\n".join(
        f"  {name:<24} [{table}] {key}" for name, (table, key) in ENV_VARS.items()
    )
    parser = argparse.ArgumentParser(
        prog="ohtui",
        description=DESCRIPTION,
        epilog=EPILOG.format(variables=variables),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ohtui {__version__}")
    parser.add_argument(
        "-w",
        "--workspace",
        type=Path,
        default=None,
        help="the directory the agent works in (default: the current directory)",
    )
    parser.add_argument("-m", "--model", help="the model to use, e.g. anthropic/claude-sonnet-4-5")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint")
    parser.add_argument(
        "--confirm",
        choices=[policy.value for policy in ConfirmationPolicy],
        default=None,
        help="which actions wait for approval: always, risky (medium risk and up, or unrated) "
        "or never (default: as configured, else risky)",
    )
    parser.add_argument(
        "--sandbox",
        choices=SANDBOX_MODES,
        default=None,
        help="confine the agent's commands with bubblewrap: workspace-write (only the "
        "workspace is writable, no network), read-only, or off (default: as configured, else "
        "workspace-write where bubblewrap works)",
    )
    parser.add_argument(
        "--server",
        metavar="URL",
        help="run the agent on this agent server (`ohtui serve`, or an OpenHands agent "
        "server), e.g. http://devbox:8000; -w then names the folder there; its session key: "
        "OHTUI_SERVER_API_KEY or the keyring (default: [server] url, else on this machine)",
    )
    parser.add_argument("--config", type=Path, metavar="PATH", help="use this config.toml")
    parser.add_argument(
        "--screen-reader",
        action="store_true",
        help="screen-reader mode: plain text lines that say what they are, no animation or "
        "box drawing, numbered choices (also OHTUI_SCREEN_READER=1, or [ui] screen_reader)",
    )
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument(
        "--resume",
        nargs="?",
        const=PICK,
        metavar="ID",
        help="resume a saved conversation (a unique id prefix is enough); no id: pick one",
    )
    resume.add_argument(
        "-c",
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="resume this workspace's latest conversation",
    )
    resume.add_argument(
        "--fork",
        metavar="ID",
        help="with -p: run the task in a new fork of this saved conversation (a unique id "
        "prefix is enough), which starts as a copy of it; the original is not changed",
    )
    parser.add_argument(
        "--at",
        metavar="EVENT_ID",
        help="with -p and --fork ID: fork at this event (the branch up to it); with -p and "
        "--resume ID: move the conversation's HEAD to this event first, so the task starts "
        "a new branch there (every branch is kept)",
    )
    headless = parser.add_argument_group("headless")
    headless.add_argument(
        "-p",
        "--prompt",
        nargs="?",
        const="-",
        metavar="TASK",
        help="run TASK without the UI and print the final response (no TASK or '-': stdin)",
    )
    headless.add_argument(
        "--json",
        action="store_true",
        help="with -p: one JSON object per event on stdout; with --undo or --checkpoints: "
        "one JSON object",
    )
    headless.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="with -p: approve actions that need approval (default: reject them)",
    )
    checkpoints = headless.add_mutually_exclusive_group()
    checkpoints.add_argument(
        "--undo",
        action="store_true",
        help="restore the workspace of the conversation --resume ID or --continue names to "
        "before its newest action not undone yet, and run nothing (not with -p)",
    )
    checkpoints.add_argument(
        "--checkpoints",
        action="store_true",
        help="list that conversation's checkpoints of its workspace, and run nothing",
    )
    checkpoints.add_argument(
        "--restore",
        metavar="CHECKPOINT",
        help="restore that conversation's workspace to one of its checkpoints (an id or a "
        "prefix of 4+ characters, as --checkpoints lists them; e.g. to take a restore back)",
    )
    return parser


def config_path(args: argparse.Namespace) -> Path:
    """config.toml: --config, else OHTUI_CONFIG, else the user config directory's."""
    from ohtui.settings import paths

    return args.config.expanduser() if args.config else paths.config_file()


def options_from(args: argparse.Namespace) -> AppOptions:
    """AppOptions from parsed arguments and the environment."""
    from ohtui.settings import paths

    return AppOptions(
        workspace=(args.workspace or Path.cwd()).expanduser().resolve(),
        history_file=paths.history_file(),
        rules_file=paths.approval_rules_file(),
        mcp_trust_file=paths.mcp_trust_file(),
        plugin_trust_file=paths.plugin_trust_file(),
        model_memory_file=paths.model_memory_file(),
        commands_dir=paths.commands_dir(),
        config_file=config_path(args),
        use_keyring=True,
        environ=os.environ,
        model=args.model,
        base_url=args.base_url,
        policy=args.confirm,
        sandbox=args.sandbox,
        server=args.server,
        resume_id=None if args.resume in (None, PICK) else args.resume,
        pick=args.resume == PICK,
        continue_latest=args.continue_latest,
        screen_reader=args.screen_reader,
    )


def main(argv: list[str] | None = None) -> int:
    """Run ohtui; returns the exit code."""
    arguments = sys.argv[1:] if argv is None else argv
    own_program()
    if arguments[:1] == ["serve"]:
        make_process_private()
        from ohtui.server.serve import main as serve

        return serve(arguments[1:])
    if arguments[:1] == ["trust"]:
        from ohtui.trust_command import main as trust

        return trust(arguments[1:])
    if arguments[:1] == ["acp"]:
        make_process_private()
        from ohtui.acp import main as acp

        return acp(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    # The agent's commands run as the user: keep them out of this process's keys.
    make_process_private()
    if args.workspace is not None and not args.workspace.expanduser().is_dir():
        from ohtui.opening import SetupError
        from ohtui.opening.local import check_workspace

        try:
            check_workspace(args.workspace.expanduser().absolute())
        except SetupError as exc:
            _say(f"ohtui: {exc}", sys.stderr)
            return 3
    _check_tree_flags(parser, args)
    if args.undo or args.checkpoints or args.restore is not None:
        return _checkpoints(parser, args)
    if args.prompt is not None:
        return _headless(parser, args)
    if args.json or args.yes:
        parser.error("--json and --yes work with -p (a headless run)")
    # Known before the first frame, which it changes: a bad value stops here, in words.
    from ohtui.settings.screen_reader import SwitchError, env_switch

    try:
        env_switch(os.environ)
    except SwitchError as exc:
        _say(f"ohtui: {exc}.", sys.stderr)
        return 3
    starting()  # no garbage collection until the first frame (the app calls `started`)
    try:
        from ohtui.tui.app import OhtuiApp

        app = OhtuiApp(options_from(args))
        app.run()
    finally:
        started()
    if app.resume_hint:
        _say(app.resume_hint, sys.stdout)
    if app.exit_error:
        _say(app.exit_error, sys.stderr)
        return 1
    return 0


def _say(text: str, stream: TextIO) -> None:
    """Print a line of ours that may quote others' text (a title, an error), nothing in it
    acting on the terminal."""
    from ohtui.terminal_text import terminal_safe

    print(terminal_safe(text), file=stream)


def _check_tree_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--fork and --at: with -p only, --at with the conversation it moves in (exits 2)."""
    if args.at is not None:
        if args.fork is None and args.resume in (None, PICK):
            parser.error(
                "--at names an event of a conversation: use it with --resume ID or --fork ID"
            )
        if not args.at.strip():
            parser.error('--at needs an event id ("id" in the --json output)')
    flag = "--fork" if args.fork is not None else "--at" if args.at is not None else None
    if flag is not None and args.prompt is None:
        parser.error(f"{flag} works with -p (a headless run): add -p TASK")
    if args.fork is not None and not args.fork.strip():
        parser.error("--fork needs the id of a saved conversation")


def _checkpoints(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """--undo, --restore or --checkpoints: a saved conversation's checkpoints, and no agent
    turn."""
    flag = "--undo" if args.undo else "--checkpoints" if args.checkpoints else "--restore"
    if args.prompt is not None or args.yes:
        parser.error(f"{flag} runs no agent turn: run it alone, then -p with --continue")
    if args.resume in (None, PICK) and not args.continue_latest:
        parser.error(f"{flag} needs the conversation: --resume ID or --continue")
    from ohtui.headless import Command

    if args.restore is not None and not args.restore.strip():
        parser.error("--restore needs a checkpoint id: --checkpoints lists them")
    command = (
        Command.UNDO if args.undo else Command.CHECKPOINTS if args.checkpoints else Command.RESTORE
    )
    return _run_headless(args, "", command)


def _headless(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    task = args.prompt
    if task == "-":
        if sys.stdin.isatty():
            parser.error("give the task after -p, or pipe it on stdin")
        task = sys.stdin.read()
    if not task.strip():
        parser.error("the task is empty")
    if args.resume == PICK:
        parser.error("--resume needs an id with -p (there is no picker without the UI)")
    from ohtui.headless import Command

    return _run_headless(args, task.strip(), Command.RUN)


def _run_headless(args: argparse.Namespace, task: str, command: Command) -> int:
    from ohtui.headless import HeadlessOptions, run_headless

    return run_headless(
        HeadlessOptions(
            task=task,
            workspace=(args.workspace or Path.cwd()).expanduser().resolve(),
            config_file=config_path(args),
            overrides=run_overrides(
                os.environ,
                model=args.model,
                base_url=args.base_url,
                policy=args.confirm,
                sandbox=args.sandbox,
                server=args.server,
            ),
            json_output=args.json,
            yes=args.yes,
            resume_id=args.resume,
            continue_latest=args.continue_latest,
            command=command,
            checkpoint_id=(args.restore or "").strip() or None,
            fork_id=args.fork.strip() if args.fork else None,
            at_event_id=args.at.strip() if args.at else None,
        )
    )

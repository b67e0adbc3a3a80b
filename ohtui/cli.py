"""The `ohtui` command: parses arguments and starts the TUI. Imports nothing heavy up front."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ohtui import __version__
from ohtui.tui.options import POLICY_ORDER, AppOptions

DESCRIPTION = "A terminal chat app for an AI coding agent that works in your project."
EPILOG = """\
environment:
  OHTUI_MODEL        model, e.g. openai/gpt-4o or anthropic/claude-sonnet-4-5
  OHTUI_BASE_URL     an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1
  OHTUI_API_KEY      the API key (or the provider's own variable, e.g. OPENAI_API_KEY)
  OHTUI_DATA_DIR     where conversations and prompt history are kept
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    parser = argparse.ArgumentParser(
        prog="ohtui",
        description=DESCRIPTION,
        epilog=EPILOG,
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
    parser.add_argument("-m", "--model", help="the model to use (default: $OHTUI_MODEL)")
    parser.add_argument(
        "--base-url", help="an OpenAI-compatible endpoint (default: $OHTUI_BASE_URL)"
    )
    parser.add_argument(
        "--resume", metavar="ID", help="resume a saved conversation (a unique id prefix is enough)"
    )
    parser.add_argument(
        "--confirm",
        choices=POLICY_ORDER,
        default="risky",
        help="which actions wait for your approval (default: risky)",
    )
    return parser


def options_from(args: argparse.Namespace) -> AppOptions:
    """AppOptions from parsed arguments and the environment."""
    from ohtui.settings import paths

    return AppOptions(
        workspace=(args.workspace or Path.cwd()).expanduser().resolve(),
        persistence_dir=paths.conversations_dir(),
        history_file=paths.history_file(),
        rules_file=paths.approval_rules_file(),
        model=args.model or os.environ.get("OHTUI_MODEL") or None,
        base_url=args.base_url or os.environ.get("OHTUI_BASE_URL") or None,
        api_key=os.environ.get("OHTUI_API_KEY") or None,
        resume_id=args.resume,
        policy=args.confirm,
    )


def main(argv: list[str] | None = None) -> int:
    """Run ohtui; returns the exit code."""
    args = build_parser().parse_args(argv)
    options = options_from(args)
    from ohtui.tui.app import OhtuiApp

    app = OhtuiApp(options)
    app.run()
    if app.resume_hint:
        print(app.resume_hint)
    if app.exit_error:
        print(app.exit_error, file=sys.stderr)
        return 1
    return 0

"""`ohtui serve`: run the agent server (Starlette on uvicorn) until interrupted."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
from pathlib import Path

from ohtui.server.auth import DEFAULT_KEY_ENV, AuthConfigError, check_bind, session_key

SECRET_KEY_FILE = "server-secret.key"
"""In the data dir: the key that encrypts the agents' API keys saved for resume."""
USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The `ohtui serve` argument parser."""
    parser = argparse.ArgumentParser(
        prog="ohtui serve",
        description="Serve conversations over the OpenHands agent-server protocol (REST + "
        "WebSocket), for ohtui --server and OpenHands clients.",
        epilog=f"The session API key comes from {DEFAULT_KEY_ENV} (or the variable "
        "--api-key-env names); clients send it as X-Session-API-Key. Without one, only a "
        "loopback address may be bound. Conversations are kept in ohtui's data dir "
        "(OHTUI_DATA_DIR moves it).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        default=None,
        help=f"the environment variable holding the session API key (default {DEFAULT_KEY_ENV})",
    )
    return parser


def main(argv: list[str]) -> int:
    """Run the server; returns the exit code (2: refused settings)."""
    args = build_parser().parse_args(argv)
    key_env = args.api_key_env or DEFAULT_KEY_ENV
    try:
        key = session_key(os.environ, args.api_key_env)
        check_bind(args.host, key, key_env)
    except AuthConfigError as exc:
        print(f"ohtui serve: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if not 0 <= args.port <= 65535:
        print(f"ohtui serve: --port must be 0-65535, not {args.port}", file=sys.stderr)
        return USAGE_ERROR
    problem = _cannot_listen(args.host, args.port)
    if problem:
        print(f"ohtui serve: cannot listen on {args.host}:{args.port}: {problem}", file=sys.stderr)
        return USAGE_ERROR
    _set_up_logging()
    # The event loop thread waits for the GIL behind the run threads (litellm parsing a
    # stream holds it): a shorter switch interval cuts the frames' tail latency.
    sys.setswitchinterval(0.001)
    from ohtui.settings import paths

    return _run(args.host, args.port, key, paths.conversations_dir(), paths.data_dir())


def _run(host: str, port: int, key: str | None, conversations: Path, data_dir: Path) -> int:
    import uvicorn

    from ohtui.server.app import ServerConfig, create_app

    config = ServerConfig(
        conversations_dir=conversations, api_key=key, secret_key_file=data_dir / SECRET_KEY_FILE
    )
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config),
            host=host,
            port=port,
            access_log=False,  # ours (ohtui.server) leaves query strings out of the log
            log_config=None,
            lifespan="on",
            ws_max_size=64 * 1024 * 1024,
        )
    )
    logging.getLogger("ohtui.server").info(
        "ohtui serve on http://%s:%d (session key %s; conversations in %s)",
        host,
        port,
        "required" if key else "not required",
        conversations,
    )
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl+C once it has shut down cleanly
        return 0
    return 0 if server.started else 1


def _cannot_listen(host: str, port: int) -> str | None:
    """Why `host:port` cannot be bound (in use, not an address of this machine), or None."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
            probe.bind(address)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.errno == errno.EADDRINUSE:
            reason += " (another server runs there: choose another --port)"
        return reason
    return None


def _set_up_logging() -> None:
    """INFO lines on stderr: a server is watched from its terminal or its service log."""
    from ohtui.terminal_text import TerminalSafeFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TerminalSafeFormatter("%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for noisy in ("LiteLLM", "litellm", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.getLogger("uvicorn.error").addFilter(_without_query)


def _without_query(record: logging.LogRecord) -> bool:
    """Cut query strings from uvicorn's lines (its WebSocket line prints the path with the
    query, where an old client may put its key)."""
    if isinstance(record.args, tuple):
        record.args = tuple(
            arg.split("?", 1)[0] if isinstance(arg, str) and "?" in arg else arg
            for arg in record.args
        )
    return True

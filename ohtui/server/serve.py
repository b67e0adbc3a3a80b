"""`ohtui serve`: run the agent server (Starlette on uvicorn) until a signal ends it
(`ohtui.server.stopping`)."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.server.auth import (
    DEFAULT_KEY_ENV,
    HEADER,
    AuthConfigError,
    check_bind,
    session_key,
)
from ohtui.server.roots import RootError, Roots
from ohtui.settings.sandbox_modes import SANDBOX_MODES

if TYPE_CHECKING:
    from ohtui.server.app import ServerConfig

SECRET_KEY_FILE = "server-secret.key"
"""In the data dir: the key that encrypts the agents' API keys saved for resume."""
USAGE_ERROR = 2
GRACE_SECONDS = 5
"""How long requests still being answered may take once the conversations are closed."""

logger = logging.getLogger("ohtui.server")


def build_parser() -> argparse.ArgumentParser:
    """The `ohtui serve` argument parser."""
    parser = argparse.ArgumentParser(
        prog="ohtui serve",
        description="Serve conversations over the OpenHands agent-server protocol (REST + "
        "WebSocket), for ohtui --server and OpenHands clients.",
        epilog=f"The session API key comes from {DEFAULT_KEY_ENV} (or the variable "
        "--api-key-env names); without one, a key is made on first start and kept in "
        "ohtui's data dir, readable by you only (ohtui --server on this machine reads it "
        f"there). Clients send it as {HEADER}. Only a loopback address may be bound "
        "without a key given. Conversations are kept in ohtui's data dir (OHTUI_DATA_DIR "
        "moves it), run in the sandbox as the TUI's do, and work only in folders under the "
        "roots.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        default=None,
        help=f"the environment variable holding the session API key (default {DEFAULT_KEY_ENV})",
    )
    parser.add_argument(
        "--sandbox",
        choices=SANDBOX_MODES,
        default=None,
        help="confine every conversation's commands with bubblewrap: workspace-write, "
        "read-only or off (default: OHTUI_SANDBOX, else [sandbox] in config.toml, else "
        "workspace-write where bubblewrap works)",
    )
    parser.add_argument(
        "--root",
        action="append",
        metavar="PATH",
        help="a folder conversations may work in (or under); repeat for more (default: roots "
        "in the [server] table of config.toml, else the folder ohtui serve starts in)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name (or address) clients reach this server by, e.g. behind a proxy; "
        "requests naming any other host are refused (DNS rebinding)",
    )
    parser.add_argument("--config", type=Path, metavar="PATH", help="use this config.toml")
    return parser


def main(argv: list[str]) -> int:
    """Run the server; returns the exit code (2: refused settings)."""
    args = build_parser().parse_args(argv)
    key_env = args.api_key_env or DEFAULT_KEY_ENV
    try:
        key = session_key(os.environ, args.api_key_env)
        check_bind(args.host, key, key_env)
    except AuthConfigError as exc:
        return _refuse(str(exc))
    asked = os.environ.get("OHTUI_SANDBOX", "").strip()
    if args.sandbox is None and asked and asked not in SANDBOX_MODES:
        return _refuse(f"OHTUI_SANDBOX is '{asked}': give one of {', '.join(SANDBOX_MODES)}")
    try:
        roots = Roots.resolve(args.root, Path.cwd(), "--root") if args.root else None
    except RootError as exc:
        return _refuse(str(exc))
    if not 0 <= args.port <= 65535:
        return _refuse(f"--port must be 0-65535, not {args.port}")
    problem = _cannot_listen(args.host, args.port)
    if problem:
        return _refuse(f"cannot listen on {args.host}:{args.port}: {problem}")
    from ohtui.settings import paths

    _set_up_logging()
    key_line = f"session key: from {key_env}; clients send it in the {HEADER} header"
    local_users = key is None
    if key is None:
        from ohtui.settings.local_server import KeyFileError, stored_session_key

        path = paths.server_session_key_file()
        try:
            key, made = stored_session_key(path)
        except KeyFileError as exc:
            return _refuse(str(exc))
        key_line = (
            f"session key: {'made and ' if made else ''}kept in {path} (readable by you only); "
            f"clients send it in the {HEADER} header, and ohtui --server "
            f"http://{_url_host(args.host)}:{args.port} on this machine reads it there; your "
            "own programs on this machine, outside the sandbox, need no key"
        )
    # The event loop thread waits for the GIL behind the run threads (litellm parsing a
    # stream holds it): a shorter switch interval cuts the frames' tail latency.
    sys.setswitchinterval(0.001)
    from ohtui.server.app import ServerConfig
    from ohtui.server.deferred import deferred_asked
    from ohtui.server.guard import AllowedHosts
    from ohtui.server.secret import given_secret_key

    config = ServerConfig(
        conversations_dir=paths.conversations_dir(),
        api_key=key,
        secret_key_file=paths.data_dir() / SECRET_KEY_FILE,
        hosts=AllowedHosts.for_bind(args.host, args.allow_host),
        config_file=args.config.expanduser() if args.config else paths.config_file(),
        start_dir=Path.cwd(),
        sandbox=args.sandbox,
        roots=roots,
        local_users=local_users,
        deferred=deferred_asked(os.environ),
        init_key=given_secret_key(os.environ),
    )
    return _run(args.host, args.port, config, key_line)


def _refuse(message: str) -> int:
    print(f"ohtui serve: {message}", file=sys.stderr)
    return USAGE_ERROR


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def _run(host: str, port: int, config: ServerConfig, key_line: str) -> int:
    import uvicorn

    from ohtui.server.app import create_app
    from ohtui.server.limits import MAX_BODY_BYTES
    from ohtui.server.stopping import StoppingServer

    app = create_app(config)
    server = StoppingServer(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            access_log=False,  # ours (ohtui.server) leaves query strings out of the log
            log_config=None,
            lifespan="on",
            ws_max_size=MAX_BODY_BYTES,
            ws_max_queue=4,
            timeout_graceful_shutdown=GRACE_SECONDS,
        ),
        app.state.engine,
    )
    logger.info(
        "ohtui serve on http://%s:%d (conversations in %s)",
        _url_host(host),
        port,
        config.conversations_dir,
    )
    logger.info("%s", key_line)
    try:
        server.run()
    finally:
        app.state.engine.close()  # (done already unless the shutdown itself failed)
    return 0 if server.started else 1


def _cannot_listen(host: str, port: int) -> str | None:
    """Why `host:port` cannot be bound (in use, not an address of this machine), or None."""
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

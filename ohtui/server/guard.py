"""What a web page could make the user's browser send is refused before any route runs.

A page can post a "simple" form (`text/plain`, no preflight) to http://127.0.0.1:PORT, or
rebind its own name to 127.0.0.1 and talk to the server as its own origin. So on every
request and socket: the `Host` must be a name or address the server answers as (DNS
rebinding brings a foreign name); an `Origin`, when a browser sends one, must be the
server's own; `Sec-Fetch-Site` must not say cross-site; and a body must be
`application/json`, uncompressed (a simple request cannot say so). `BodyLimit` then counts a
body as it arrives. This module imports nothing from ohtui.sdk.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ohtui.server.limits import MAX_BODY_BYTES, too_large
from ohtui.settings.local_server import is_loopback

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")
_PORT = re.compile(r":[0-9]{1,5}")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def split_host(value: str) -> tuple[str, int | None] | None:
    """(host, port) of a Host header or an origin's authority, the host lower-cased without
    a trailing dot; None when it is no plain `name[:port]`, `address[:port]` or
    `[v6-address][:port]` (user info, paths and the like are never part of one)."""
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[1:end], value[end + 1 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
    else:
        host, colon, port = value.partition(":")
        rest = colon + port
        host = host.lower().removesuffix(".")
        if not _NAME.fullmatch(host):
            return None
    if not rest:
        return host, None
    if not _PORT.fullmatch(rest) or int(rest[1:]) > 65535:
        return None
    return host, int(rest[1:])


@dataclass(frozen=True)
class AllowedHosts:
    """The names and addresses the server answers as (the `Host` a request may carry)."""

    names: frozenset[str]
    addresses: frozenset[IPAddress]
    any_address: bool
    """Whether any address is fine (a wildcard bind: the server has them all). A literal
    address is never a rebound name."""

    @classmethod
    def for_bind(cls, host: str, extra: Iterable[str] = ()) -> AllowedHosts:
        """Loopback's names and addresses, the bound host, `extra` (--allow-host); and, for
        a bind beyond loopback, this machine's host name and, for a wildcard, any
        address."""
        names = {"localhost"}
        addresses: set[IPAddress] = set()
        for given in (host, *extra):
            value = given.strip().strip("[]").lower().removesuffix(".")
            try:
                addresses.add(ipaddress.ip_address(value))
            except ValueError:
                names.add(value)
        try:
            wildcard = ipaddress.ip_address(host.strip().strip("[]")).is_unspecified
        except ValueError:
            wildcard = False
        if not is_loopback(host):
            machine = socket.gethostname().lower()
            names.update({machine, machine.split(".")[0]})
        return cls(frozenset(names), frozenset(addresses), wildcard)

    def allows(self, host: str) -> bool:
        """Whether a request may name `host` (as `split_host` gives it)."""
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return host in self.names
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return address.is_loopback or self.any_address or address in self.addresses


class RequestGuard:
    """Refuses foreign hosts and origins on every request and socket, and bodies that are
    not plain JSON, each with a sentence: 400 for a malformed Host, 403 for a foreign one or
    a foreign origin, 415 for another content type or encoding."""

    def __init__(self, app: ASGIApp, hosts: AllowedHosts) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self._refusal(scope, headers)
        if refusal is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await _refuse_socket(scope, receive, send, *refusal)
        else:
            await _respond(send, *refusal)

    def _refusal(self, scope: Scope, headers: dict[str, list[str]]) -> tuple[int, str] | None:
        hosts = headers.get("host", [])
        where = split_host(hosts[0]) if len(hosts) == 1 else None
        if where is None:
            return 400, "The request's Host header is missing or malformed."
        if not self.hosts.allows(where[0]):
            return 403, (
                f"This server does not answer as '{where[0]}' (the request's Host header): a "
                "web page may have rebound that name to it. If that name is yours, start "
                f"ohtui serve with --allow-host {where[0]}."
            )
        problem = _cross_site(scope, headers, where)
        if problem:
            return 403, problem
        if scope["type"] == "http":
            problem = _not_json(headers)
            if problem:
                return 415, problem
        return None


def _cross_site(
    scope: Scope, headers: dict[str, list[str]], host: tuple[str, int | None]
) -> str | None:
    """Why the request comes from another site's page (None: it does not)."""
    origins = headers.get("origin", [])
    if origins:
        origin = origins[0] if len(origins) == 1 else ",".join(origins)
        if not _same_origin(origin, host):
            return (
                f"Requests from web pages of another origin ({origin}) are refused: the "
                "Origin must be this server's own, or absent."
            )
    site = headers.get("sec-fetch-site", [])
    if site and site[0].strip().lower() not in ("same-origin", "none"):
        return f"Requests a browser marks as {site[0]} (Sec-Fetch-Site) are refused."
    return None


def _same_origin(origin: str, host: tuple[str, int | None]) -> bool:
    scheme, separator, authority = origin.strip().partition("://")
    scheme = scheme.lower()
    if not separator or scheme not in _DEFAULT_PORTS:
        return False  # "null" (a sandboxed frame, a file, a redirect), or not http(s)
    where = split_host(authority)
    if where is None:
        return False
    default = _DEFAULT_PORTS[scheme]
    return (where[0], where[1] or default) == (host[0], host[1] or default)


def _not_json(headers: dict[str, list[str]]) -> str | None:
    """Why the body is not one we read (None: it is JSON, or there is none)."""
    encodings = [e.strip().lower() for e in headers.get("content-encoding", [])]
    if any(e not in ("", "identity") for e in encodings):
        return (
            f"Content-Encoding {', '.join(encodings)} is not accepted: send the JSON body "
            "uncompressed."
        )
    types = headers.get("content-type", [])
    length = headers.get("content-length", ["0"])
    has_body = "transfer-encoding" in headers or length != ["0"]
    if not types and not has_body:
        return None
    media = types[0].split(";", 1)[0].strip().lower() if len(types) == 1 else ""
    if media == "application/json":
        return None
    shown = ", ".join(types) if types else "none"
    return f"The request body must be JSON sent as Content-Type: application/json (it was {shown})."


class BodyLimit:
    """Reads a request's body before the route does, counting bytes as they arrive: past
    MAX_BODY_BYTES (declared or counted) it answers 413 and reads no further."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _headers(scope).get("content-length", ["0"])[0]
        if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            await _respond(send, 413, too_large(int(declared)))
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left: there is no one to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                await _respond(send, 413, too_large(size))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        del chunks
        first = True

        async def replay() -> Message:
            nonlocal first
            if first:
                first = False
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _headers(scope: Scope) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for key, value in scope.get("headers", []):
        found.setdefault(key.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return found


async def _respond(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _refuse_socket(
    scope: Scope, receive: Receive, send: Send, status: int, detail: str
) -> None:
    """Refuse the upgrade with `status` and the sentence (a bare 403 where the server cannot
    send a body)."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    if "websocket.http.response" not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "websocket.http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "websocket.http.response.body", "body": body})

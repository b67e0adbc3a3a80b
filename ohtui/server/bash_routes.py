"""`POST /api/bash/execute_bash_command`: one command run on the server and waited for, as
`RemoteWorkspace.execute_command` asks (the OpenHands server's route, its answer a
`BashOutput`).

The command runs as the agent's commands do: in a folder under the server's roots, in the
sandbox the server's conversations get, with the agent's environment (ohtui's own keys
left out), its output cut at OUTPUT_LIMIT and its time at the request's timeout (at most
MAX_TIMEOUT seconds).
"""

from __future__ import annotations

import logging
import os
import subprocess
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ohtui.server.confinement import Confinement
from ohtui.server.limits import parse_json
from ohtui.server.roots import OutsideRootsError, WorkingDirError

logger = logging.getLogger(__name__)

MAX_TIMEOUT = 600
OUTPUT_LIMIT = 1024 * 1024
"""Characters of stdout (and of stderr) answered; the rest is cut, and said so."""
TIMED_OUT = -1
"""The exit code of a command stopped at its timeout (as the OpenHands server reports)."""


class ExecuteBashRequest(BaseModel):
    """The OpenHands server's ExecuteBashRequest."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1)
    cwd: str | None = None
    timeout: int = Field(default=300, ge=1)


class BashApi:
    """The route, bound to the server's confinement (roots and sandbox)."""

    def __init__(self, confinement: Confinement) -> None:
        self.confinement = confinement

    async def execute(self, request: Request) -> Response:
        try:
            asked = ExecuteBashRequest.model_validate(parse_json(await request.body() or b"{}"))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(body)"
            return JSONResponse({"detail": f"{where}: {first['msg']}"}, status_code=422)
        except ValueError as exc:
            return JSONResponse({"detail": str(exc)}, status_code=422)
        roots = self.confinement.roots
        try:
            cwd = roots.check(asked.cwd) if asked.cwd else roots.paths[0]
        except OutsideRootsError as exc:
            return JSONResponse({"detail": str(exc)}, status_code=403)
        except WorkingDirError as exc:
            return JSONResponse({"detail": str(exc)}, status_code=422)
        if not cwd.is_dir():
            return JSONResponse({"detail": f"the cwd '{cwd}' does not exist"}, status_code=422)
        output = await run_in_threadpool(self._run, asked, cwd)
        return JSONResponse(output)

    def _run(self, asked: ExecuteBashRequest, cwd: Path) -> dict[str, Any]:
        from ohtui.sdk.sandbox.boundary import Sandbox
        from ohtui.sdk.tools.terminal.environment import agent_environment
        from ohtui.sdk.utils import spawn
        from ohtui.settings import paths

        sandbox = Sandbox(
            config=self.confinement.sandbox if self.confinement.problem is None else _off(),
            workspace=str(cwd),
            private=paths.private_paths(self.confinement.config_file),
            protected=paths.protected_paths(),
        )
        environ = agent_environment(os.environ)
        launch = sandbox.launch(["/bin/bash", "-c", asked.command], environ)
        timeout = min(asked.timeout, MAX_TIMEOUT)
        process = spawn.popen(
            launch.wrapped_argv(),
            cwd=str(cwd),
            env=launch.environment(environ),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(timeout=timeout)
            code = process.returncode
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            code = TIMED_OUT
        logger.info("bash command in %s: exit %s", cwd, code)
        now = datetime.now().isoformat()
        return {
            "id": uuid.uuid4().hex,
            "timestamp": now,
            "command_id": uuid.uuid4().hex,
            "order": 0,
            "exit_code": code,
            "stdout": _cut(out),
            "stderr": _cut(err),
            "kind": "BashOutput",
        }

    def routes(self) -> list[Route]:
        """The route, relative to /api."""
        return [Route("/bash/execute_bash_command", self.execute, methods=["POST"])]


def _off() -> Any:
    from ohtui.sdk.sandbox import SandboxConfig, SandboxMode

    return SandboxConfig(mode=SandboxMode.OFF, network=True)


def _cut(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[:OUTPUT_LIMIT] + f"\n[output cut at {OUTPUT_LIMIT} characters]"

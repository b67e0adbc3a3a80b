"""How the agent's bash is started, so that a stop, and the end of the application, reach
everything a command started.

Inside the sandbox, bubblewrap's own init adopts whatever a command detaches and
--die-with-parent ends the whole sandbox with the application: bash starts as it is, and
nothing of the application (its interpreter, wherever it is installed) is needed in there.
Without the sandbox, on Linux, bash starts under `SUPERVISOR`, a small process that does the
same: bash and it adopt what commands detach (`(cmd &)`, `setsid`, `nohup`), and when the
application ends (SIGKILL too) or bash exits, it kills all of it. macOS has neither, so bash
starts plainly there: a process a command detaches escapes a stop.
"""

from __future__ import annotations

import os
import sys

SUPERVISOR = """\
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(36, 1, 0, 0, 0):  # PR_SET_CHILD_SUBREAPER
    sys.stderr.write("ohtui: the shell cannot adopt detached processes (errno %d), so a stop "
                     "may miss them\\n" % ctypes.get_errno())
libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG: the application's end is ours
if os.getppid() != int(sys.argv[1]):  # it ended before we asked
    os._exit(1)
# The environment as given, before Python's start-up changed it (LC_CTYPE coercion).
with open("/proc/self/environ", "rb") as f:
    env = dict(v.split(b"=", 1) for v in f.read().split(b"\\0") if b"=" in v)
shell = os.fork()
if shell == 0:
    libc.prctl(36, 1, 0, 0, 0)  # bash adopts first, as before; we adopt what it leaves
    # Python ignores these at start-up, and an ignored signal stays ignored across exec.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    os.execvpe(sys.argv[2], sys.argv[2:], env)

def tree():
    found, todo = set(), [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            for task in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                    kids = [int(k) for k in f.read().split()]
                found.update(kids)
                todo += kids
        except OSError:
            pass
    return found

def reap():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return

def signal_all(pids, number):
    for pid in pids:
        try:
            os.kill(pid, number)
        except OSError:
            pass

def end_all(code):
    # Stopped first, until no new one appears: a stopped process cannot fork, and bash
    # cannot go on to the rest of its line when the command it waits for dies.
    stopped = set()
    while new := tree() - stopped:
        signal_all(new, signal.SIGSTOP)
        stopped |= new
    while pids := tree():
        signal_all(pids, signal.SIGKILL)
        reap()
        time.sleep(0.005)
    os._exit(code)

for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, lambda number, frame: end_all(128 + number))
while True:
    pid, status = os.wait()
    if pid == shell:
        code = os.waitstatus_to_exitcode(status)
        end_all(code if code >= 0 else 128 - code)
"""
"""Runs bash (its argv after the application's pid) as its child, adopts what it detaches,
and kills all of it when bash exits or the application ends; exits with bash's status."""


def shell_command(shell: str, *, sandboxed: bool) -> list[str]:
    """The argv that starts the agent's bash (in the sandbox: as it is; see the module)."""
    bash = [shell, "--noprofile", "--norc"]
    if sandboxed or not sys.platform.startswith("linux") or not sys.executable:
        return bash
    return [sys.executable, "-I", "-S", "-c", SUPERVISOR, str(os.getpid()), *bash]


def supervised(argv: list[str]) -> bool:
    """Whether `argv` (from `shell_command`) starts bash under the supervisor."""
    return len(argv) > 4 and argv[4] == SUPERVISOR

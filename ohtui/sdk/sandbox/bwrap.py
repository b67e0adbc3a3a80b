"""The bubblewrap command line for a sandbox: what commands see, and what they may touch.

In order: the host's filesystem read-only; private /tmp, /var/tmp and /dev/shm; the runtime
folders (/run, XDG_RUNTIME_DIR: the session bus, the keyring, agents' sockets) replaced by
empty ones, but for the program folders on PATH and the files /etc links to there; the
writable paths bound read-write, and inside them the application's protected files and the
repository's git configuration read-only again; hidden paths covered; every other service's
listening socket covered, unless the user opted in to it; no other process, no network (or,
with the network shared, no abstract socket) and no way back to the terminal.
"""

from __future__ import annotations

import glob
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ohtui.sdk.sandbox import git, landlock, sockets
from ohtui.sdk.sandbox.config import SandboxMode
from ohtui.sdk.sandbox.launch import Launch, within

if TYPE_CHECKING:
    from ohtui.sdk.sandbox.boundary import Sandbox

TEMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")
"""Replaced by private, empty ones."""
SCRATCH = "ohtui-tmp"
"""The writable folder TMPDIR names when a temp root must be read-only (see `_temp_tops`)."""


def bwrap_launch(sandbox: Sandbox, argv: Sequence[str], environ: Mapping[str, str]) -> Launch:
    """How to run `argv` confined by `sandbox` (which is active)."""
    args = Args()
    args.add("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
    covered: list[str] = []  # mounted empty: nothing under them shows unless bound again

    temp_roots = [t for t in TEMP_ROOTS if os.path.isdir(t) and not os.path.islink(t)]
    for root in temp_roots:
        args.add("--tmpfs", root)
    covered += temp_roots

    runtime = _runtime_roots(environ)
    for root in runtime:
        args.add("--tmpfs", root)
    covered += runtime
    kept = []
    for kind, target, path in _runtime_keep(runtime, environ):
        args.add(kind, target, path)
        kept += [path] if kind == "--ro-bind" else []

    bound = [p for p in sandbox.writable if os.path.exists(p)]
    read_only_workspace = sandbox.config.mode is SandboxMode.READ_ONLY and os.path.isdir(
        sandbox.workspace
    )
    shown_whole = [*bound, *([sandbox.workspace] if read_only_workspace else [])]
    tops, ro_roots = _temp_tops(shown_whole, temp_roots)
    for top in tops:
        args.add("--tmpfs", top)
    covered += tops
    shown = _programs_in_temp(argv, environ, temp_roots)
    for prefix in shown:
        args.add("--ro-bind", prefix, prefix)
    # Hidden paths outside what is writable are covered before it is bound, so that a
    # writable path inside one (a workspace in a hidden folder) is bound over the cover
    # with its protections below; those inside a writable path are covered once it is.
    hidden = _outermost(sandbox.hidden)
    hidden_dirs = _cover(args, [p for p in hidden if not within(p, shown_whole)])
    for path in bound:
        args.add("--bind", path, path)
    if read_only_workspace:
        args.add("--ro-bind", sandbox.workspace, sandbox.workspace)

    # Read-only again inside what is writable: the application's protected files, and the
    # repository's configuration and hooks (unless the user made them writable by name).
    opted = sandbox.opted_writable
    again = [sandbox.real(p) for p in sandbox.protected]
    again += [p for p in git.protected_paths(sandbox.workspace) if not within(p, opted)]
    again = [p for p in again if within(p, bound) and os.path.exists(p)]
    guarded = [*again, *(p for p in hidden if within(p, shown_whole) and os.path.lexists(p))]
    for folder in _pinned(guarded, bound):
        args.add("--bind", folder, folder)
    for path in again:
        args.add("--ro-bind", path, path)
    hidden_dirs += _cover(args, [p for p in hidden if within(p, shown_whole)])
    covered += hidden_dirs
    for path in (sandbox.real(p) for p in sandbox.protected):
        if within(path, hidden_dirs) and os.path.exists(path):
            args.add("--ro-bind", path, path)

    hide, allowed, env = _sockets(sandbox, environ, [*bound, *kept, *shown], covered)
    for path in hide:
        args.add("--ro-bind", "/dev/null", path)
    for path in allowed:
        args.add("--ro-bind", path, path)
    for root in ro_roots:
        args.add("--tmpfs", f"{root}/{SCRATCH}")
    for path in [*hidden_dirs, *runtime, *tops, *ro_roots]:
        args.add("--remount-ro", path)
    if ro_roots:
        env["TMPDIR"] = f"{ro_roots[0]}/{SCRATCH}"
    if runtime:
        env["XDG_RUNTIME_DIR"] = None

    args.add("--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try")
    # Everything in the sandbox dies with the process that started it (its thread must live
    # as long as the application: see ohtui.sdk.utils.spawn), and it has no terminal.
    args.add("--die-with-parent", "--new-session")
    before_exec = None
    if not sandbox.config.network:
        args.add("--unshare-net")
    else:
        before_exec = landlock.scoped_restriction()
    # The variables the dynamic loader (and glibc) obey would act on bubblewrap itself, which
    # runs outside: the program gets them from bubblewrap, bubblewrap does not.
    for name in sorted({*environ, *env}):
        value = env.get(name, environ.get(name))
        if value is not None and _acts_on_loader(name):
            args.add("--setenv", name, value)
            env[name] = None
    args.add("--chdir", sandbox.workspace, "--")
    binary = shutil.which("bwrap") or "bwrap"
    return Launch([binary, *args.items, *argv], env, before_exec)


LOADER_VARIABLES = frozenset(
    [
        "GCONV_PATH",
        "GETCONF_DIR",
        "GLIBC_TUNABLES",
        "HOSTALIASES",
        "LOCALDOMAIN",
        "LOCPATH",
        "MALLOC_TRACE",
        "NIS_PATH",
        "NLSPATH",
        "RESOLV_HOST_CONF",
        "RES_OPTIONS",
        "TMPDIR",
        "TZDIR",
    ]
)
"""Besides LD_*: what glibc ignores for a set-user-ID program, as able to make it run or
read what the caller chose."""


def _acts_on_loader(name: str) -> bool:
    return name.startswith("LD_") or name in LOADER_VARIABLES


def _cover(args: Args, paths: Sequence[str]) -> list[str]:
    """Cover each of `paths`: a folder with an empty one, anything else with an empty file;
    returns the folders covered."""
    folders = []
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            args.add("--tmpfs", path)
            folders.append(path)
        elif os.path.lexists(path):
            args.add("--ro-bind", "/dev/null", path)
    return folders


def _pinned(guarded: Sequence[str], bound: Sequence[str]) -> list[str]:
    """The folders between a writable root and each guarded path in it, shallowest first.

    A mount cannot be renamed, but the folder above it can, and the mount goes with it: a
    command could move `~/.config` away and make a new `~/.config/ohtui/config.toml` (or a
    new `.husky/_` for git to run) where the application looks. Each folder on the way is
    bound onto itself, which makes it a mount that cannot be renamed or removed either.
    """
    folders: set[str] = set()
    for path in guarded:
        root = within(path, bound)
        if root is None:
            continue
        folder = os.path.dirname(path)
        while folder != root and within(folder, [root]) and folder not in folders:
            if os.path.isdir(folder) and not os.path.islink(folder):
                folders.add(folder)
            folder = os.path.dirname(folder)
    return sorted(folders, key=lambda f: f.count("/"))


def _outermost(paths: Sequence[str]) -> list[str]:
    """`paths` without those inside another of them (covering the outer one covers them)."""
    return [p for p in paths if not within(p, [q for q in paths if q != p])]


class Args:
    """bubblewrap's arguments, in order (each operation applies on top of the ones before)."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, *items: str) -> None:
        """Append arguments."""
        self.items.extend(items)


def _runtime_roots(environ: Mapping[str, str]) -> list[str]:
    """The folders services keep their sockets in: /run (and /var/run where it is a folder of
    its own) and the user's XDG_RUNTIME_DIR."""
    roots = [r for r in ("/run", "/var/run") if os.path.isdir(r) and not os.path.islink(r)]
    runtime = environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    runtime = os.path.realpath(runtime)
    if os.path.isdir(runtime) and not within(runtime, [*roots, *TEMP_ROOTS]):
        roots.append(runtime)
    return roots


def _runtime_keep(roots: list[str], environ: Mapping[str, str]) -> Iterable[tuple[str, str, str]]:
    """What stays visible in the emptied runtime folders, as bubblewrap operations: the
    program folders on PATH (NixOS keeps its system there; fnm its shells) and the files
    /etc links into them (resolv.conf), never a runtime folder itself. The sockets in them
    are covered like any other (`_sockets`)."""
    wanted = [os.path.normpath(p) for p in environ.get("PATH", "").split(":") if p[:1] == "/"]
    try:
        with os.scandir("/etc") as entries:
            wanted += [os.path.realpath(e.path) for e in entries if e.is_symlink()]
    except OSError:
        pass
    done: set[str] = set()
    for path in wanted:
        root = within(path, roots)
        if root is None or path == root or not os.path.exists(path):
            continue
        current = root
        for part in os.path.relpath(path, root).split("/"):
            current = os.path.join(current, part)
            if current in done:
                break
            if os.path.islink(current):  # recreated as a link: its target shows as it is
                done.add(current)
                yield "--symlink", os.readlink(current), current
                break
        else:
            done.add(path)
            yield "--ro-bind", path, path


def _programs_in_temp(
    argv: Sequence[str], environ: Mapping[str, str], temp_roots: list[str]
) -> list[str]:
    """What a program installed in a private temp folder needs, to show read-only: the
    prefix (the folder above `bin`, a virtual environment's root) of each folder on PATH
    there, the folder of each file the command line names there (the program, its script)
    and each folder it names, and the folders a virtual environment there imports from
    (its `.pth` files: an editable install's source). A program installed under /tmp (a
    clone and its venv, an unpacked tool) runs in the sandbox as it runs outside it."""
    folders = [p for p in environ.get("PATH", "").split(":") if p[:1] == "/"]
    for arg in argv:
        if os.path.isabs(arg):
            folders.append(arg if os.path.isdir(arg) else os.path.dirname(arg))
    prefixes: list[str] = []

    def show(folder: str) -> None:
        root = within(folder, temp_roots)
        if root is None or folder == root or not os.path.isdir(folder):
            return
        prefix = os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder
        if prefix != root and prefix not in prefixes:
            prefixes.append(prefix)

    for folder in map(os.path.realpath, folders):  # a link could name /run, or / itself
        show(folder)
    for prefix in list(prefixes):
        for line in _import_paths(prefix):
            show(os.path.realpath(line))
    return prefixes


def _import_paths(prefix: str) -> list[str]:
    """The absolute folders the `.pth` files of a virtual environment at `prefix` add."""
    found: list[str] = []
    pattern = os.path.join(glob.escape(prefix), "lib", "python*", "site-packages", "*.pth")
    for pth in glob.glob(pattern):
        try:
            with open(pth, encoding="utf-8", errors="replace") as file:
                lines = file.read(65536).splitlines()
        except OSError:
            continue
        found += [line.strip() for line in lines if line.startswith("/")]
    return found


def _temp_tops(paths: list[str], temp_roots: list[str]) -> tuple[list[str], list[str]]:
    """Where writes next to a bound path in a private temp folder must fail, not vanish.

    A workspace at /tmp/a/b/ws is bound into the private /tmp, and `touch ../x` would land
    in that private folder, never on disk, though it reported success. So the top folder
    holding it (/tmp/a) becomes a read-only folder of its own; a path directly in a temp
    root (/tmp/ws) makes the whole root read-only, with a writable folder for TMPDIR.
    Returns (the tops to mount read-only, the roots to make read-only).
    """
    tops: list[str] = []
    ro_roots: list[str] = []
    for path in paths:
        root = within(path, temp_roots)
        if root is None or path == root:
            continue
        top = os.path.join(root, os.path.relpath(path, root).split("/")[0])
        if top == path:
            if root not in ro_roots:
                ro_roots.append(root)
        elif top not in tops:
            tops.append(top)
    return tops, ro_roots


def _sockets(
    sandbox: Sandbox, environ: Mapping[str, str], bound: list[str], covered: list[str]
) -> tuple[list[str], list[str], dict[str, str | None]]:
    """Every other service's listening socket that would still show (to cover), the sockets
    the user opted in to (to bind through), and the variables naming a socket the sandbox
    keeps away (to drop from the environment)."""
    opted = {
        os.path.expanduser(os.path.expandvars(s) if s.startswith("$") else s)
        for s in sandbox.config.sockets
    }
    opted |= {os.path.realpath(s) for s in opted}
    named = list(sockets.named_by_environment(environ))
    env: dict[str, str | None] = {name: None for name, path in named if path not in opted}
    hide: list[str] = []
    for path in dict.fromkeys([*sockets.listening_paths(), *(p for _, p in named if p)]):
        if path in opted or not sockets.is_socket(path):
            continue
        if within(path, covered) and not within(path, bound):
            continue  # gone with the folder that was emptied
        hide.append(path)
    return hide, sorted(p for p in opted if sockets.is_socket(p)), env

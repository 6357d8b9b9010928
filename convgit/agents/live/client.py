"""The thin client of the recorder: ``convgit hook AGENT`` hands its event to the recorder of
its working tree (``convgit.agents.live.recorder``) over a Unix socket, and writes back what the
recorder says the agent should read. It imports nothing of convgit's beyond this module, and no
module of Python's that its start has not loaded already but ``_socket`` (no ``__future__``:
its annotations that name what it does not import are strings).

It never depends on the recorder: whenever there is none (not started yet, gone, its socket
stale), it answers for another version of convgit, another user, another working tree or
another environment, or it dies half-way through the event, ``run`` says so and the hook does
the work itself, exactly as it does without a recorder (``convgit.agents.hook``). A hook that
found no recorder, did the event itself and wants one (``[hooks] recorder``: true, or "auto",
the default, with watchman on PATH; or ``CONVGIT_RECORDER=on``) starts one for the next event
(``spawn``), in the background, detached from the agent's pipes. ``CONVGIT_RECORDER=off``
keeps every hook to itself.

Where it lives: one recorder per working tree (and store), found by a key made of the working
tree's folder and ``CONVGIT_STORE``; its socket, lock and state are in a folder of this user's
alone (``$XDG_RUNTIME_DIR/convgit``, else ``/tmp/convgit-<uid>``: owned by the user, mode
0700), the socket itself 0600; both sides check the other's uid (``SO_PEERCRED``).
"""

import os
import sys

PROTOCOL = b"convgit-recorder 2"
OFF = "CONVGIT_RECORDER"  # "off": no recorder is asked or started; "on": one is started;
# any other value is the hook's to refuse (``store.config.recorder_choice``): no recorder is asked
MAX_EVENT = 16 << 20  # bytes of stdin read at most (``convgit.agents.hook`` says the same)
HANDSHAKE = 0.5  # seconds the client waits to connect, and for the recorder to take its event
TAKE_BY = 0.3  # seconds after the client sent it past which the recorder leaves an event be
BEAT = 0.2  # seconds between two looks at a recorder that took an event (stopped: ended)
WAIT = 25.0  # seconds the client waits for the recorder's answer at most (the agent waits 30)
ASK_WAIT = 3.0  # seconds `status` and `stop` wait for it (busy with an event, or stopped)
RESPAWN = 10.0  # seconds between two starts of a recorder by clients that found none
_PEERCRED = 17  # SO_PEERCRED on Linux
# the first byte of the recorder's answer: recorded (the rest for stdout); recorded (the rest
# for stderr, exit status 2: an agent that reads a hook's failures there); the hook's to do
DONE, DONE_STDERR, FALL_BACK = b"D", b"E", b"F"
TAKEN = b"T"  # sent before the answer: the recorder records the event (the client waits)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _socket import socket


def run(args: list[str]) -> int | bytes | None:
    """``convgit hook AGENT [EVENT]`` through the recorder: its exit status once the recorder
    recorded the event (what the agent should be told written on stdout or stderr); else what
    the hook must do the work with, itself: the event's bytes when they were read from stdin,
    None when they were not.

    A recorder that does not take the event within ``HANDSHAKE`` (stopped, hung, or busy with
    another) leaves it to the hook: one that takes it only that soon (``TAKE_BY``), so the two
    never both do it. One that took it and is then found stopped is ended (``end``: as a kill
    at any point of an event, it loses nothing and its locks go with it) and the hook does the
    event; one still running gets until the hook's own deadline."""
    env = os.environ
    if env.get(OFF, "") not in ("", "on"):
        return None  # off, or a value the hook refuses in its own words
    if env.get("CONVGIT_FAULT") or env.get("CONVGIT_HOOK_PROBE"):
        return None  # a crash test's fault point, or a probe, is the hook's own
    found = place(os.getcwd())
    if found is None:
        return None
    folder, key, root = found
    connected = connect(os.path.join(folder, key + b".sock"))
    if connected is None:
        return None  # the hook does the event, and starts a recorder when one is wanted
    sock, pid = connected
    raw = sys.stdin.buffer.read(MAX_EVENT + 1)
    try:
        sock.sendall(request(b"event", args, raw, deadline=True))
        sock.shutdown(1)  # SHUT_WR: the request is whole
        answer = answered(sock, pid)
    except OSError:
        return raw  # not taken in time, gone (killed, say) or ended: the event is the hook's
    finally:
        sock.close()
    if answer[:1] in (DONE, DONE_STDERR):
        if len(answer) > 1:
            try:  # noqa: SIM105 - contextlib is not imported by the client
                os.write(1 if answer[:1] == DONE else 2, answer[1:])
            except OSError:
                pass
        return 2 if answer[:1] == DONE_STDERR and len(answer) > 1 else 0
    if answer.startswith(FALL_BACK + b"leaving:"):  # it leaves (another version): a new one
        spawn(folder, key, root)
    return raw


def answered(sock: "socket", pid: int) -> bytes:
    """The recorder's answer to an event just sent: taken (``TAKEN``) within ``HANDSHAKE``, or
    answered at once (a ``FALL_BACK``); then, while it records, looked at every ``BEAT``: found
    stopped, or past ``WAIT``, it is ended. OSError when it did not take the event, went away
    or was ended."""
    import time

    sock.settimeout(HANDSHAKE)
    try:
        first = sock.recv(1)
    except OSError:
        if stopped(pid):  # a recorder stopped for good would keep every next hook waiting
            end(pid)
        raise
    if first != TAKEN:
        return first + receive(sock)
    until = time.monotonic() + WAIT - HANDSHAKE
    sock.settimeout(BEAT)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = sock.recv(1 << 16)
        except TimeoutError:
            if stopped(pid) or time.monotonic() > until:
                end(pid)
                raise
            continue
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (SIGSTOP, or a debugger's stop)."""
    return _state(pid) in (b"T", b"t")


def end(pid: int) -> None:
    """End the recorder ``pid`` (SIGKILL: its locks go with it), and wait a moment for it to be
    gone."""
    import time

    if pid <= 0 or pid == os.getpid():
        return
    try:
        os.kill(pid, 9)
    except OSError:
        return
    until = time.monotonic() + HANDSHAKE
    while _state(pid) not in (b"", b"Z", b"X") and time.monotonic() < until:
        time.sleep(0.005)


def _state(pid: int) -> bytes:
    """The state of process ``pid`` as Linux says it (b"" when it is gone)."""
    try:
        with open(b"/proc/%d/stat" % pid, "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return b""


def place(cwd: str, store: str | None = None) -> tuple[bytes, bytes, bytes] | None:
    """(the folder of the recorders' sockets, the recorder's key, the working tree's root)
    for a hook run in ``cwd`` (with the store ``store``, else ``CONVGIT_STORE``'s); None when
    no recorder serves it: outside a git working tree, with ``GIT_DIR`` set, or without a
    folder of this user's alone for the socket."""
    env = os.environ
    if env.get("GIT_DIR") or env.get("GIT_WORK_TREE"):
        return None
    here = os.fsencode(os.path.realpath(cwd))
    root = here
    while not os.path.lexists(root + b"/.git"):
        parent = os.path.dirname(root)
        if parent == root:
            return None
        root = parent
    folder = runtime_folder()
    if folder is None:
        return None
    named = store if store is not None else env.get("CONVGIT_STORE", "")
    return folder, key_of(root, os.fsencode(os.path.abspath(named) if named else "")), root


def key_of(root: bytes, store: bytes) -> bytes:
    """The recorder's key: FNV-1a (64 bits) of the working tree's root and the store named
    by ``CONVGIT_STORE`` (no hashing module is imported for it)."""
    value = 0xCBF29CE484222325
    for byte in root + b"\0" + store:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return b"%016x" % value


def runtime_folder(create: bool = True) -> bytes | None:
    """The folder of this user's recorders: ``$XDG_RUNTIME_DIR/convgit`` (when that folder is
    there), else ``/tmp/convgit-<uid>``; made when missing, used only when it is a folder (not
    a link) owned by this user that no one else may enter."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    uid = os.getuid()
    if runtime and os.path.isdir(runtime):
        folder = os.fsencode(os.path.join(runtime, "convgit"))
    else:
        folder = b"/tmp/convgit-%d" % uid
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        if not create:
            return None
        try:
            os.mkdir(folder, 0o700)
            info = os.lstat(folder)
        except OSError:
            return None
    except OSError:
        return None
    if info.st_uid != uid or info.st_mode & 0o170077 != 0o040000:  # a folder, 0700 at most
        return None
    return folder


def connect(path: bytes) -> "tuple[socket, int] | None":
    """A connection to the recorder at ``path``, checked to be this user's, and the recorder's
    pid; None when there is none (no socket, or a stale one) or it does not let the client
    connect within ``HANDSHAKE``."""
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(HANDSHAKE)
    try:
        sock.connect(path)
        said = sock.getsockopt(_socket.SOL_SOCKET, _PEERCRED, 12)
        if int.from_bytes(said[4:8], sys.byteorder) != os.getuid():
            raise OSError("another user's socket")
    except OSError:
        sock.close()
        return None
    return sock, int.from_bytes(said[:4], sys.byteorder)


def request(kind: bytes, args: list[str], raw: bytes = b"", *, deadline: bool = False) -> bytes:
    """A request to the recorder: the protocol, what is asked (``event``, ``status``,
    ``stop``), this convgit's version and folder, the working folder, when this process
    started, when it stops waiting for the recorder to take it (0: it waits), the arguments
    and the environment; then, for an event, its bytes."""
    import time

    env = [k + b"=" + v for k, v in os.environb.items()]
    fields = [
        PROTOCOL,
        kind,
        *package(),
        os.fsencode(os.getcwd()),
        b"%d" % started_ns(),
        b"%d" % ((time.time() + HANDSHAKE) * 1e9 if deadline else 0),
        b"%d" % len(args),
        *map(os.fsencode, args),
        b"%d" % len(env),
        *env,
    ]
    return b"\0".join(fields) + b"\0" + raw


def package() -> tuple[bytes, bytes]:
    """This convgit's version and package folder (its real path), read without importing the
    package: the version as its ``__init__.py`` sets it (b"" when it cannot be read)."""
    folder = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    try:
        with open(os.path.join(folder, "__init__.py"), "rb") as handle:
            text = handle.read()
    except OSError:
        text = b""
    _, found, rest = text.partition(b'\n__version__ = "')
    return (rest.partition(b'"')[0] if found else b""), os.fsencode(folder)


def receive(sock: "socket") -> bytes:
    """Everything the recorder sends until it closes the connection."""
    chunks: list[bytes] = []
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def started_ns() -> int:
    """When this process started (nanoseconds of the wall clock; 0 when unknown): Linux says
    it in /proc, in clock ticks after the boot."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            ticks = int(handle.read().rpartition(b")")[2].split()[19])
        with open("/proc/uptime", "rb") as handle:
            uptime = float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    import time

    hertz = os.sysconf("SC_CLK_TCK")
    return int((time.time() - uptime + ticks / hertz) * 1e9)


def spawn(folder: bytes, key: bytes, root: bytes) -> None:
    """Start the recorder for ``key`` in the background, detached from this process's
    session and pipes (an agent reads the hook's output until every copy of it is closed),
    unless a client started one a moment ago."""
    stamp = os.path.join(folder, key + b".started")
    import time

    try:
        if time.time() - os.stat(stamp).st_mtime < RESPAWN:
            return
    except OSError:
        pass
    try:
        with open(stamp, "wb"):
            pass
    except OSError:
        return
    command, env = recorder_command(folder, key, root)
    try:
        child = os.fork()
    except OSError:
        return
    if child:
        return
    try:  # the child: a session of its own, no descriptor of the agent's
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 1 << 16)
        os.execve(command[0], command, env)
    finally:
        os._exit(0)


def recorder_command(
    folder: bytes, key: bytes, root: bytes
) -> tuple[list[bytes], dict[bytes, bytes]]:
    """The command that starts the recorder, and its environment: this Python with this
    process's module path (so the recorder runs this convgit, and finds what it imports),
    ``-S`` when this process has it."""
    env = dict(os.environb)
    env[b"PYTHONPATH"] = os.pathsep.join(os.fsdecode(p) for p in sys.path if p).encode()
    flags = [b"-S"] if sys.flags.no_site else []
    start = b"from convgit.agents.live.recorder import main; main()"
    return [os.fsencode(sys.executable), *flags, b"-c", start, folder, key, root], env


def ask(folder: bytes, key: bytes, kind: bytes, args: list[str] | None = None) -> bytes | None:
    """The recorder's answer to ``status`` or ``stop`` (with ``args``: for ``stop``, the
    command that asks, which it says it was stopped by); None when none answers within
    ``ASK_WAIT``: a command never waits for an event the recorder is busy with."""
    connected = connect(os.path.join(folder, key + b".sock"))
    if connected is None:
        return None
    sock = connected[0]
    sock.settimeout(ASK_WAIT)
    try:
        sock.sendall(request(kind, args or []))
        sock.shutdown(1)
        return receive(sock)
    except OSError:
        return None
    finally:
        sock.close()

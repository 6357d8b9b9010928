"""The recorder: one process per working tree that stays, so an agent's hook costs what its
event costs. Started by the first hook that finds none (``client.spawn``), it takes each event a
hook's thin client hands it (``client.run``) and records it exactly as the hook itself would
(``convgit.agents.hook.handle``, in the client's folder and environment), keeping between events
what each would rebuild: Python with what it imported, and the last snapshot's tree with
watchman's clock, so a snapshot hashes only what changed (``convgit.git.patching``).

It takes one event at a time, in order. It leaves by itself after ``IDLE`` seconds without an
event (``CONVGIT_RECORDER_IDLE``), when a client of another version of convgit asks (or its own
files change: its convgit was replaced), on ``convgit recorder stop``, on SIGTERM, and when its
socket, store or working tree goes. While it runs, its state file (``<key>.json``) names it for
``convgit status``; when it leaves, it says why in the store's ``logs/recorder.log`` and removes
its socket, state file and lock, and one that starts removes what a killed one left (``_sweep``),
so the folder of sockets holds only the recorders that run. Nothing depends on it: killed at any
point, the client sees no answer and the hook does the work itself; the locks it held go with
it. Stopped at any point, its clients do not wait for it: they end it (``client.answered``).

Its socket is in the client's folder of this user's alone (``client.runtime_folder``), mode
0600, and a connection of any other user is refused (``SO_PEERCRED``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from convgit.agents.hook import Told

IDLE = 600.0  # seconds without an event after which the recorder leaves
TICK = 2.0  # seconds between two looks at what would make it leave
LEFT = "left: "  # the store's recorder log's line of a recorder that left says why after it
STOP = "convgit recorder stop"  # the command that asks a recorder to leave, unless another says
FAULT = "CONVGIT_RECORDER_FAULT"  # a crash test's fault point for the recorder (``faults``)


@dataclass(frozen=True)
class Place:
    """Where the recorder of a working tree lives: the folder of this user's recorders, its
    key, and the working tree's root (``client.place``)."""

    folder: bytes
    key: bytes
    root: bytes

    @classmethod
    def of(cls, cwd: str | Path, store: Path | None = None) -> Place | None:
        from convgit.agents.live import client

        found = client.place(os.fspath(cwd), None if store is None else os.fspath(store))
        return None if found is None else cls(*found)

    def path(self, suffix: str) -> Path:
        return Path(os.fsdecode(os.path.join(self.folder, self.key + suffix.encode())))

    def state(self) -> dict[str, Any]:
        """What the running (or killed) recorder's state file says, {} when none."""
        try:
            found = json.loads(self.path(".json").read_text())
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def ask(self, kind: str, *args: str) -> dict[str, Any] | None:
        """The running recorder's answer to ``status`` or ``stop``; None when none answers."""
        from convgit.agents.live import client

        said = client.ask(self.folder, self.key, kind.encode(), list(args))
        if not said or said[:1] != client.DONE:
            return None
        try:
            found = json.loads(said[1:] or b"{}")
        except ValueError:
            return None
        return found if isinstance(found, dict) else None


def main() -> None:
    """The recorder's process: ``python -c ... FOLDER KEY ROOT`` (``client.spawn``)."""
    if os.environ.get(FAULT):  # the recorder's own fault point, as CONVGIT_FAULT is a hook's
        os.environ["CONVGIT_FAULT"] = os.environ.pop(FAULT)
    else:
        os.environ.pop("CONVGIT_FAULT", None)
    folder, key, root = (os.fsencode(a) for a in sys.argv[1:4])
    place = Place(folder, key, root)
    recorder = Recorder.start(place)
    if recorder is not None:
        recorder.serve()


class Leave(Exception):
    """The recorder leaves, for the reason given."""


class Recorder:
    """The recorder of one working tree (the module's note)."""

    def __init__(self, place: Place, lock_fd: int, listening: Any, location: Any) -> None:
        import convgit

        self.place = place
        self.lock_fd = lock_fd
        self.listening = listening
        self.location = location
        self.root = Path(os.fsdecode(place.root))
        self.version = convgit.__version__
        self.package = os.path.realpath(os.path.dirname(convgit.__file__))
        self.files = _own_files()
        self.files_checked = time.monotonic()
        self.since = time.time()
        self.last_event = time.monotonic()
        self.events = 0
        self.idle = float(os.environ.get("CONVGIT_RECORDER_IDLE") or IDLE)
        self.socket_id = _identity(place.path(".sock"))
        self.store_id = _identity(location.root)
        self.stopping = ""
        from convgit.git import patching

        own = location.root / "index" / f"recorder-{location.worktree_key}"
        self.patcher = patching.Patcher(own)
        patching.serve(self.root, self.patcher)

    @classmethod
    def start(cls, place: Place) -> Recorder | None:
        """The recorder for ``place``, its socket listening; None when another holds its lock
        (it is there already) or it may not serve this working tree."""
        fd = _lock(place.folder, place.key, wait=5.0)  # one of another version may be leaving
        if fd is None:
            return None
        _sweep(place.folder, place.key)
        from convgit.store.location import locate

        os.chdir(place.root)
        location = locate(os.fsdecode(place.root))
        if location.git is None or location.git.worktree is None:
            _clear(place.folder, place.key, fd)
            return None
        location.root.mkdir(parents=True, exist_ok=True)  # as the hook that started it does
        path = place.path(".sock")
        temporary = place.path(f".sock.{os.getpid()}")
        temporary.unlink(missing_ok=True)
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is made 0600
        try:
            listening.bind(os.fsencode(temporary))
        finally:
            os.umask(old)
        os.chmod(temporary, 0o600)
        listening.listen(64)
        os.replace(temporary, path)  # a stale socket of a recorder that died is replaced
        recorder = cls(place, fd, listening, location)
        recorder.say({"state": "running"})
        return recorder

    # -- its life --

    def serve(self) -> None:
        """Take events until it leaves: a thread takes each connection (``take``) the moment it
        comes, this one answers them in order."""
        import gc
        import queue
        import threading

        signal.signal(signal.SIGTERM, self._terminated)
        signal.signal(signal.SIGINT, self._terminated)
        signal.signal(signal.SIGALRM, _late)
        sys.setswitchinterval(0.0005)
        reason = "it left"
        taken: queue.Queue[tuple[Any, _Request]] = queue.Queue()
        try:
            self.warm()
            gc.freeze()  # what it imported stays: the collector never walks it again
            threading.Thread(target=self.take, args=(taken,), daemon=True).start()
            while True:
                self.look_around()
                try:
                    conn, request = taken.get(timeout=TICK)
                except queue.Empty:
                    continue
                with conn:
                    self.answer(conn, request)
                self.last_event = time.monotonic()
        except Leave as leaving:
            reason = str(leaving)
        except BaseException as exc:  # its own machinery failed: say why, and leave
            import traceback

            reason = f"it failed: {type(exc).__name__}: {exc}"
            self.log(reason + "\n" + traceback.format_exc())
        finally:
            self.leave(reason)

    def warm(self) -> None:
        """Before the first event: what a hook imports, and the working tree's first full
        scan (the base later snapshots patch), while watchman reads the tree."""
        from convgit.agents import hook, hook_failures, registry  # noqa: F401
        from convgit.agents.live import mirroring, turns  # noqa: F401
        from convgit.base.errors import SnapshotSkippedError
        from convgit.session import Session  # noqa: F401
        from convgit.store import load
        from convgit.store.config import max_files, size_cap

        load.keep_sessions()  # each Stop's import reads what the transcript added, not it all

        try:
            ws = self.workspace()
            if ws is not None:
                own = ws.private_index(self.patcher.own_index)
                self.patcher.warm(own, size_cap(self.location), max_files(self.location))
        except SnapshotSkippedError as exc:  # the first turn scans and counts them again
            self.log(f"no first full scan: {exc.message}")
        except Exception as exc:  # the first event scans in full instead
            self.log(f"warming up failed: {type(exc).__name__}: {exc}")

    def workspace(self) -> Any:
        """The working tree as a session's track finds it (the store kept out)."""
        from convgit.store.config import fsmonitor
        from convgit.workspace import Workspace

        found = Workspace.of(self.location)
        if found is not None:
            found.keep_out(self.location.root)
            found.track_changes(fsmonitor(self.location))
        return found

    def look_around(self) -> None:
        """Leave when there is a reason to (the module's note)."""
        if self.stopping:
            raise Leave(self.stopping)
        if time.monotonic() - self.last_event > self.idle:
            raise Leave(f"no event for {self.idle:.0f} s")
        if _identity(self.place.path(".sock")) != self.socket_id:
            raise Leave("its socket was removed or replaced")
        if _identity(self.location.root) != self.store_id:
            raise Leave(f"its store {self.location.root} was removed or replaced")
        if not self.root.is_dir():
            raise Leave(f"its working tree {self.root} is gone")
        if time.monotonic() - self.files_checked > TICK:
            self.files_checked = time.monotonic()
            if _own_files() != self.files:
                raise Leave(f"its convgit ({self.package}) was replaced")

    def leave(self, reason: str) -> None:
        """Stop listening, say why in the store's log (``status`` reads it there), and remove
        its files: the socket (when it is still this recorder's), its state, its lock."""
        with suppress(OSError):
            self.listening.shutdown(socket.SHUT_RDWR)  # wakes ``take`` from its accept
        with suppress(OSError):
            self.listening.close()
        with suppress(Exception):
            self.patcher.close()
        self.log(f"{LEFT}{reason}")
        path = self.place.path(".sock")
        if _identity(path) == self.socket_id:
            path.unlink(missing_ok=True)
        _clear(self.place.folder, self.place.key, self.lock_fd, keep=(".sock",))

    def _terminated(self, signum: int, frame: object) -> None:
        self.stopping = f"it was sent {signal.Signals(signum).name}"

    # -- one connection --

    def take(self, taken: Any) -> None:
        """Accept each connection, read its request and put it in ``taken`` for ``serve``; an
        event is taken only while its client surely waits for it (it waits ``HANDSHAKE``), and
        the client told so at once (``TAKEN``): a client that gave up does it itself."""
        from convgit.agents.live import client

        while True:
            try:
                conn, _ = self.listening.accept()
            except OSError:
                return  # the recorder leaves
            request = self.read(conn)
            if request is None:
                conn.close()
                continue
            if request.kind == b"event":
                late = request.deadline - (client.HANDSHAKE - client.TAKE_BY)
                try:
                    if request.deadline and time.time() > late:
                        _send(conn, client.FALL_BACK + b"late: the event waited too long")
                        raise OSError
                    conn.sendall(client.TAKEN)
                except OSError:
                    conn.close()  # the client does the event itself
                    continue
            taken.put((conn, request))

    def read(self, conn: Any) -> _Request | None:
        """The request on ``conn``; None when there is none to answer (refused, unread)."""
        from convgit.agents.live import client

        said = conn.getsockopt(socket.SOL_SOCKET, client._PEERCRED, 12)
        if int.from_bytes(said[4:8], sys.byteorder) != os.getuid():
            _send(conn, client.FALL_BACK + b"refused: another user's connection")
            self.log("refused a connection of another user")
            return None
        conn.settimeout(2)
        try:
            data = client.receive(conn)
        except OSError:
            return None
        request = _Request.parse(data)
        if request is None:
            _send(conn, client.FALL_BACK + b"not a request of this protocol")
        return request

    def answer(self, conn: Any, request: _Request) -> None:
        """Answer one request taken on ``conn``."""
        from convgit.agents.live import client
        from convgit.base import faults

        conn.settimeout(10)
        if request.kind == b"status":
            _send(conn, client.DONE + json.dumps(self.status()).encode())
            return
        if request.kind == b"stop":
            _send(conn, client.DONE + json.dumps(self.status()).encode())
            by = request.args[0] if request.args else STOP
            raise Leave(f"stopped by `{by}`")
        if request.kind != b"event":
            _send(conn, client.FALL_BACK + b"unknown request")
            return
        if request.version != self.version or request.package != self.package:
            _send(conn, client.FALL_BACK + b"leaving: another convgit")
            raise Leave(f"convgit {request.version} at {request.package} asked for a recorder")
        if _identity(self.location.root) != self.store_id:
            _send(conn, client.FALL_BACK + b"leaving: the store is gone")
            raise Leave(f"its store {self.location.root} was removed or replaced")
        if request.env.get(b"CONVGIT_STORE", b"") != os.environb.get(b"CONVGIT_STORE", b""):
            _send(conn, client.FALL_BACK + b"another store")
            return
        faults.point("recorder:received")
        said_back = self.record(request)
        faults.point("recorder:recorded")
        if said_back is None:
            _send(conn, client.FALL_BACK + b"another working tree")
            return
        _send(conn, (client.DONE_STDERR if said_back.stderr else client.DONE) + said_back.text)
        self.events += 1
        faults.point("recorder:answered")

    def record(self, request: _Request) -> Told | None:
        """The event, recorded in its client's folder and environment (``hook.handle``);
        what the agent should be told, or None when the event is another working tree's."""
        from convgit.agents import hook
        from convgit.agents.live import client

        now = time.time()
        timeout = hook.DEADLINE - (now - request.started if request.started else 0)
        if request.deadline:  # its client waits until WAIT after it sent the event
            timeout = min(timeout, request.deadline - client.HANDSHAKE + client.WAIT - now - 1)
        with self.as_client(request):
            signal.setitimer(signal.ITIMER_REAL, max(timeout, 1.0))
            try:
                return hook.handle(
                    request.args, request.raw, None,
                    began=time.time(), started=time.monotonic(), speaks=True,
                    since=request.started or None, accept=self._accept,
                    how=" through the recorder",
                )  # fmt: skip
            except hook.Declined:
                return None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)

    def _accept(self, location: Any) -> None:
        from convgit.agents import hook

        git = location.git
        same = location.root == self.location.root and git is not None
        if not same or git.worktree is None or git.worktree.resolve() != self.root.resolve():
            raise hook.Declined("another working tree's event")

    @contextmanager
    def as_client(self, request: _Request) -> Iterator[None]:
        """The client's environment and folder for the block (its PATH, HOME, git's config
        variables... are the event's as much as in the hook's own process)."""
        saved = dict(os.environb)
        os.environb.clear()
        os.environb.update(request.env)
        time.tzset()
        try:
            os.chdir(request.cwd)
        except OSError:
            os.chdir(self.root)
        try:
            yield
        finally:
            os.environb.clear()
            os.environb.update(saved)
            time.tzset()
            os.chdir(self.root)

    # -- what it says --

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "since": _when(self.since),
            "version": self.version,
            "package": self.package,
            "root": str(self.root),
            "store": str(self.location.root),
            "watcher": self.patcher.watcher(),
            "events": self.events,
            "idle_leaves_after": self.idle,
            "snapshots": dict(self.patcher.last),
            "latest_snapshot": self.patcher.latest_said(),
        }

    def say(self, state: dict[str, Any]) -> None:
        """Write the state file (``Place.state``)."""
        found = {
            "pid": os.getpid(),
            "since": _when(self.since),
            "version": self.version,
            "package": self.package,
            "root": str(self.root),
            **state,
        }
        path = self.place.path(".json")
        temporary = path.with_name(f"{path.name}.{os.getpid()}")
        with suppress(OSError):
            temporary.write_text(json.dumps(found))
            os.replace(temporary, path)

    def log(self, text: str) -> None:
        """A line (and details) in the store's recorder log."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        path = self.location.root / "logs" / "recorder.log"
        with suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a") as out:
                out.write(f"{stamp} [{os.getpid()}] {text.rstrip()}\n")


@dataclass(frozen=True)
class _Request:
    kind: bytes
    version: str
    package: str
    cwd: bytes
    started: float  # when the client's process started (wall clock; 0: unknown)
    deadline: float  # when the client stops waiting for the event to be taken (0: it waits)
    args: list[str]
    env: dict[bytes, bytes]
    raw: bytes

    @classmethod
    def parse(cls, data: bytes) -> _Request | None:
        from convgit.agents.live import client

        parts = data.split(b"\0", 8)
        if len(parts) < 9 or parts[0] != client.PROTOCOL:
            return None
        try:
            kind, version, package, cwd, started, deadline, count = parts[1:8]
            rest = parts[8]
            args: list[str] = []
            for _ in range(int(count)):
                arg, _, rest = rest.partition(b"\0")
                args.append(os.fsdecode(arg))
            names, _, rest = rest.partition(b"\0")
            env: dict[bytes, bytes] = {}
            for _ in range(int(names)):
                item, _, rest = rest.partition(b"\0")
                name, _, value = item.partition(b"=")
                env[name] = value
            return cls(
                kind,
                version.decode(),
                os.fsdecode(package),
                cwd,
                int(started) / 1e9,
                int(deadline) / 1e9,
                args,
                env,
                rest,
            )
        except ValueError:
            return None


def _send(conn: socket.socket, data: bytes) -> None:
    """Answer a client; one that is gone (it gave up waiting) is no matter."""
    with suppress(OSError):
        conn.sendall(data)


def _late(signum: int, frame: object) -> None:
    from convgit.agents.hook import LateError

    raise LateError("the recorder's event ran past its deadline")


def _lock(folder: bytes, key: bytes, wait: float = 0.0) -> int | None:
    """The lock of the recorder ``key``, held (the descriptor); None when another process holds
    it for longer than ``wait`` seconds. A lock file removed by the recorder that held it (it
    left) is made anew."""
    import fcntl

    path = os.path.join(folder, key + b".lock")
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)
            continue
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except OSError:
            same = False
        if same:
            return fd
        os.close(fd)  # removed, or made anew, while this process waited: take the new one


def _clear(folder: bytes, key: bytes, lock_fd: int, keep: tuple[str, ...] = ()) -> None:
    """Remove the files of the recorder ``key`` (its socket, state, start stamp, what a killed
    one left half-written; ``keep`` aside), then its lock file, while ``lock_fd`` holds it."""
    lock = key + b".lock"
    kept = {key + os.fsencode(suffix) for suffix in keep}
    with suppress(OSError):
        for name in os.listdir(folder):
            if name.startswith(key + b".") and name != lock and name not in kept:
                with suppress(OSError):
                    os.unlink(os.path.join(folder, name))
    with suppress(OSError):
        os.unlink(os.path.join(folder, lock))
    os.close(lock_fd)


def _sweep(folder: bytes, own: bytes) -> None:
    """Remove what recorders that are gone left in ``folder``: the files of every key but
    ``own`` whose lock no process holds (a recorder killed, or of a working tree since
    removed), and the half-written files of ``own``'s that died."""
    with suppress(OSError):
        names = os.listdir(folder)
        for key in {name.partition(b".")[0] for name in names} - {own}:
            fd = _lock(folder, key)
            if fd is not None:
                _clear(folder, key, fd)
        for name in names:
            rest = name[len(own) :]
            if name.startswith(own + b".") and rest.rpartition(b".")[2].isdigit():
                with suppress(OSError):
                    os.unlink(os.path.join(folder, name))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_ino, info.st_dev


def _own_files() -> tuple[int, int]:
    """The identity of this convgit's files (how many, the newest change): another value
    means it was replaced (reinstalled, upgraded, edited) under the running recorder."""
    import convgit

    count = newest = 0
    for top, _, names in os.walk(os.path.dirname(convgit.__file__)):
        for name in names:
            if name.endswith(".py"):
                with suppress(OSError):
                    info = os.stat(os.path.join(top, name))
                    count += 1
                    newest = max(newest, info.st_mtime_ns, info.st_ctime_ns)
    return count, newest


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def status(cwd: str | Path, store: Path | None = None) -> dict[str, Any]:
    """The recorder of the working tree at ``cwd``, as ``convgit status`` and ``convgit recorder
    status`` say it: ``running``, and its ``pid``, ``since``, ``version``, ``watcher`` (watchman's
    version, or why it has none), ``events``, ``snapshots`` (how the last snapshot of each
    private index was taken) and ``latest_snapshot`` (the last one it took, of whichever index:
    ``index``, ``how``, and ``number``, counted from 1 since it started) when it runs; ``why``
    there is none when it does not."""
    from convgit.agents.live import client

    found: dict[str, Any] = {
        "running": False, "pid": None, "since": None, "version": None, "watcher": None,
        "events": None, "snapshots": {}, "latest_snapshot": None, "why": None,
        "setting": _setting(cwd, store),
    }  # fmt: skip
    if os.environ.get(client.OFF) == "off":
        return {**found, "why": f"turned off ({client.OFF}=off)"}
    place = Place.of(cwd, store)
    if place is None:
        return {**found, "why": _no_place(cwd)}
    said = place.ask("status")
    if said is not None:
        keys = ("pid", "since", "version", "watcher", "events", "snapshots", "latest_snapshot")
        return {**found, "running": True, **{k: said.get(k) for k in keys}}
    state = place.state()
    if not state:
        left = _left(cwd, store)
        return {**found, "why": left or _none(found["setting"], cwd, store)}
    pid = state.get("pid")
    alive = isinstance(pid, int) and _alive(pid)
    if alive:
        return {**found, "why": f"it does not answer (pid {pid}): busy with an event, or stopped"}
    why = f"it died: its process is gone (pid {pid}); the next hook event starts another"
    return {**found, "why": why}


def _setting(cwd: str | Path, store: Path | None) -> dict[str, Any] | None:
    """Whether hooks use a recorder here, and what says so (``config.recorder_choice``):
    ``{"on", "because"}``; None when config.toml is refused (``_none`` says why)."""
    from convgit.store.config import recorder_choice
    from convgit.store.location import locate

    try:
        on, because = recorder_choice(locate(os.fspath(cwd), store))
    except Exception:  # a store that cannot be found or read: no recorder is started there
        return None
    return {"on": on, "because": because}


def _none(setting: dict[str, Any] | None, cwd: str | Path, store: Path | None) -> str:
    """Why no recorder was ever started here (``setting``: ``_setting``'s)."""
    from convgit.base.errors import CorruptStoreError, UsageError
    from convgit.store.config import recorder
    from convgit.store.location import locate

    if setting is None:
        try:
            recorder(locate(os.fspath(cwd), store))
        except (CorruptStoreError, UsageError) as exc:  # [hooks] or CONVGIT_RECORDER refused
            return exc.message
        except Exception:
            pass
        return "not turned on"
    if setting["on"]:
        return f"none started yet (the next hook event starts one: {setting['because']})"
    return (
        f"not turned on ({setting['because']}; [hooks] recorder = true in config.toml, or"
        " CONVGIT_RECORDER=on, turns it on)"
    )


def _left(cwd: str | Path, store: Path | None) -> str | None:
    """Why the last recorder of the store at ``cwd`` left, and when, from its log."""
    from convgit.store.location import locate

    try:
        path = locate(os.fspath(cwd), store).root / "logs" / "recorder.log"
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - (64 << 10)))
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except Exception:  # no store, no log: nothing said
        return None
    for line in reversed(lines):
        stamp, _, rest = line.partition(" ")
        said = rest.partition("] ")[2]
        if said.startswith(LEFT):
            return f"it left at {stamp}: {said.removeprefix(LEFT)}"
    return None


def stop(cwd: str | Path, store: Path | None = None, by: str = STOP) -> dict[str, Any] | None:
    """Ask the recorder of the working tree at ``cwd`` to leave: what it said of itself, or
    None when none was running. ``by``: the command that asks, which its log says."""
    place = Place.of(cwd, store)
    return None if place is None else place.ask("stop", by)


def _no_place(cwd: str | Path) -> str:
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return "GIT_DIR or GIT_WORK_TREE is set: hooks do the work themselves"
    if _in_git(cwd):
        return "no folder of this user's alone for its socket ($XDG_RUNTIME_DIR or /tmp)"
    return "outside a git working tree: hooks do the work themselves"


def _in_git(cwd: str | Path) -> bool:
    here = Path(cwd).resolve()
    return any((folder / ".git").exists() for folder in (here, *here.parents))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, which no parent waited for, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[0] != b"Z"
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

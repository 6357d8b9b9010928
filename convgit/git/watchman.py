"""watchman's client protocol, as the recorder speaks it (``convgit.git.patching``): one
connection to watchman's socket, BSER (its binary encoding) both ways, ``watch-project`` on the
working tree, a clock, and the paths changed since a clock.

watchman is started the way its own client starts it: the socket comes from ``WATCHMAN_SOCK``,
else from ``watchman get-sockname``, which starts its service when it is not running. Anything
that goes wrong is ``Failed`` with one sentence: the caller then stats every file, as it does
without a watcher, so a watcher that is missing, restarted or wrong never makes a snapshot wrong,
only slower.

What watchman cannot vouch for is said by the answer itself: a clock of another instance
(``is_fresh_instance``: watchman restarted, or the watch was dropped and made again), or a
recrawl (it lost events and read the tree again; its ``warning`` names it). ``blind_spots`` says
when a ``.watchmanconfig`` hides folders git sees.
"""

from __future__ import annotations

import os
import struct
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SYNC_MS = 10_000  # how long watchman may take to see every change made before a query
SETTLE_MS = 60_000  # the same for the first query of a watch (watchman reads the tree first)
TIMEOUT = 5.0  # seconds any answer may take beyond that
SPAWN = 8.0  # seconds watchman's client may take to tell its socket (starting its service)


class Failed(Exception):
    """watchman cannot answer: the caller stats every file."""


# -- BSER, watchman's binary encoding (version 1) ---------------------------------------------


def _encode(value: Any, out: bytearray) -> None:
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape")
    if isinstance(value, bytes):
        out += b"\x02"
        _encode_int(len(value), out)
        out += value
    elif isinstance(value, bool):
        out += b"\x08" if value else b"\x09"
    elif isinstance(value, int):
        _encode_int(value, out)
    elif isinstance(value, list):
        out += b"\x00"
        _encode_int(len(value), out)
        for item in value:
            _encode(item, out)
    elif isinstance(value, dict):
        out += b"\x01"
        _encode_int(len(value), out)
        for key, item in value.items():
            _encode(key, out)
            _encode(item, out)
    else:
        raise Failed(f"cannot encode {type(value).__name__}")


def _encode_int(value: int, out: bytearray) -> None:
    for tag, form in ((3, "<b"), (4, "<h"), (5, "<i"), (6, "<q")):
        try:
            out += bytes([tag]) + struct.pack(form, value)
            return
        except struct.error:
            continue
    raise Failed(f"integer out of range: {value}")


def encode_pdu(value: Any) -> bytes:
    body = bytearray()
    _encode(value, body)
    head = bytearray(b"\x00\x01")
    _encode_int(len(body), head)
    return bytes(head + body)


_INTS = {tag: struct.Struct(form) for tag, form in ((3, "<b"), (4, "<h"), (5, "<i"), (6, "<q"))}


def _decode(data: bytes, at: int) -> tuple[Any, int]:
    tag = data[at]
    if tag in _INTS:
        form = _INTS[tag]
        return form.unpack_from(data, at + 1)[0], at + 1 + form.size
    if tag in (0x02, 0x0D):  # a byte string, or (BSER v2) a UTF-8 one
        length, at = _decode(data, at + 1)
        if at + length > len(data):
            raise IndexError("a string past the end")
        return bytes(data[at : at + length]), at + length
    if tag == 0x00:
        count, at = _decode(data, at + 1)
        items = []
        for _ in range(count):
            item, at = _decode(data, at)
            items.append(item)
        return items, at
    if tag == 0x01:
        count, at = _decode(data, at + 1)
        found = {}
        for _ in range(count):
            key, at = _decode(data, at)
            found[key.decode("utf-8", "surrogateescape")], at = _decode(data, at)
        return found, at
    if tag == 0x0B:  # a template: the keys once, then each object's values (0x0C: missing)
        keys, at = _decode(data, at + 1)
        count, at = _decode(data, at)
        rows = []
        for _ in range(count):
            row = {}
            for key in keys:
                if data[at] == 0x0C:
                    at += 1
                    continue
                row[key.decode("utf-8", "surrogateescape")], at = _decode(data, at)
            rows.append(row)
        return rows, at
    if tag == 0x07:
        return struct.unpack_from("<d", data, at + 1)[0], at + 9
    if tag in (0x08, 0x09, 0x0A):
        return {0x08: True, 0x09: False, 0x0A: None}[tag], at + 1
    raise Failed(f"unknown BSER tag {tag:#x}")


# -- talking to watchman ------------------------------------------------------------------------


class Watchman:
    """One connection to watchman's socket, one command at a time."""

    def __init__(self, sockname: str, timeout: float = TIMEOUT) -> None:
        import socket

        self.sockname = sockname
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(sockname)
        except OSError:
            self.sock.close()
            raise
        self._buffer = b""

    def close(self) -> None:
        self.sock.close()

    def ask(self, *command: Any) -> dict[str, Any]:
        """watchman's answer to ``command``; Failed for an error it names, or when the
        connection breaks (watchman stopped)."""
        try:
            self.sock.sendall(encode_pdu(list(command)))
        except OSError as exc:
            raise Failed(f"the connection to watchman broke ({exc.strerror or exc})") from None
        while True:
            answer = self._pdu()
            if not isinstance(answer, dict):
                raise Failed("watchman's answer is not an object")
            if answer.get("unilateral"):  # a message of its own (a log line): not the answer
                continue
            if "error" in answer:
                raise Failed(f"watchman: {text(answer['error'])}")
            return answer

    def _pdu(self) -> Any:
        """The next message on the socket."""
        while True:
            data = self._buffer
            if len(data) >= 3:
                if data[:2] != b"\x00\x01":
                    raise Failed("watchman's answer is not BSER")
                try:
                    length, start = _decode(data, 2)
                except (IndexError, struct.error):
                    length, start = -1, 0
                if length >= 0 and len(data) >= start + length:
                    answer, _ = _decode(data, start)
                    self._buffer = data[start + length :]
                    return answer
            try:
                chunk = self.sock.recv(1 << 16)
            except OSError as exc:
                raise Failed(f"the connection to watchman broke ({exc.strerror or exc})") from None
            if not chunk:
                raise Failed("watchman closed the connection")
            self._buffer += chunk


def text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def sockname_from_cli() -> str:
    """watchman's socket, from its own client (which starts its service when it is not
    running). Only its first line of output is waited for: a service it starts may keep the
    client's output open long after the client has answered and gone. A client that does not
    answer within ``SPAWN`` seconds (its service was still going down as it started another)
    is stopped and asked once more."""
    for attempt in (1, 2):
        try:
            return _sockname(SPAWN)
        except _Hung:
            if attempt == 2:
                raise Failed(f"watchman did not answer within {SPAWN:.0f} s") from None
    raise AssertionError("unreachable")


class _Hung(Exception):
    pass


def _sockname(timeout: float) -> str:
    import json
    import select
    import subprocess
    import tempfile

    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(
                ["watchman", "--no-pretty", "get-sockname"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise Failed("watchman is not on PATH") from None
        assert proc.stdout is not None
        try:
            ready, _, _ = select.select([proc.stdout], [], [], timeout)
            line = proc.stdout.readline() if ready else b""
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            proc.stdout.close()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if code is None:
            raise _Hung
        errors.seek(0)
        said_errors = errors.read().decode(errors="replace").strip().splitlines()
    try:
        said = json.loads(line)
    except ValueError:
        said = {}
    if code != 0 or not isinstance(said, dict) or "sockname" not in said:
        raise Failed(f"watchman get-sockname failed: {(said_errors or ['no answer'])[-1]}")
    return str(said["sockname"])


def connect(known: str = "", timeout: float = TIMEOUT) -> Watchman:
    """A connection to watchman: at ``known`` (the socket it told before) or ``WATCHMAN_SOCK``,
    else at the one its client tells now (starting its service); each answer may take
    ``timeout`` seconds."""
    for sockname in (known, os.environ.get("WATCHMAN_SOCK", "")):
        if sockname:
            try:
                return Watchman(sockname, timeout)
            except OSError:
                continue
    fresh = sockname_from_cli()
    try:
        return Watchman(fresh, timeout)
    except OSError as exc:
        raise Failed(f"cannot reach watchman at its socket: {exc.strerror}") from None


def blind_spots(watch: bytes, config: dict[str, Any], root: bytes) -> str:
    """Why watchman would miss changes git sees below ``root`` ("" when it would not): folders
    it ignores (.watchmanconfig's ignore_dirs; its VCS folders other than .git at the root of
    the watch, which git would take as files of the tree)."""
    ignored = config.get("ignore_dirs") or []
    if ignored:
        return "watchman ignores folders (ignore_dirs in .watchmanconfig)"
    vcs = config.get("ignore_vcs", [b".git", b".svn", b".hg"])
    for name in vcs:
        name = name if isinstance(name, bytes) else str(name).encode()
        if name == b".git":
            continue
        path = os.path.join(watch, name)
        inside = path == root or path.startswith(root.rstrip(b"/") + b"/")
        if inside and os.path.lexists(path):
            return f"watchman ignores the folder {text(name)} (ignore_vcs)"
    return ""


@dataclass(frozen=True)
class Changed:
    """The answer to ``Watch.since``: the new clock, whether watchman can vouch that
    ``paths`` are every path changed since the clock asked (not when it is another instance's
    clock, or a recrawl happened), and the recrawl warning it gives, if any."""

    clock: str
    vouched: bool
    paths: tuple[bytes, ...]
    warning: str


class Watch:
    """watchman's watch of one working tree (``root``), through one connection (made within
    ``timeout`` seconds an answer: a new watch of a large tree takes watchman longer). ``added``:
    watchman watched no such root before this one asked (``watch-project`` made the watch), so
    ``drop`` may take it away again; a watch the user or another tool had is never dropped.
    ``mark``: a file that names the watch made (written before it is made), so that one
    killed before it could drop it leaves it named for the next (``Patcher``)."""

    def __init__(
        self,
        root: bytes,
        known_socket: str = "",
        mark: Path | None = None,
        timeout: float = TIMEOUT,
    ) -> None:
        self.root = root
        self.watchman = connect(known_socket, timeout)
        try:
            before = self.watchman.ask("watch-list").get("roots") or []
            had = [os.fsencode(r) if isinstance(r, str) else r for r in before]
            if mark is not None and root not in had:  # written before the watch is made: a
                _mark(mark, root)  # process killed as it makes it leaves it named
            found = self.watchman.ask("watch-project", root)
            watch = found.get("watch")
            if not isinstance(watch, bytes):
                raise Failed("watchman watch-project gave no root")
            self.watch = watch
            self.added = watch not in had
            if mark is not None and self.added and watch != root:
                _mark(mark, watch)
            self.relative = found.get("relative_path") or b""
            config = self.watchman.ask("get-config", watch).get("config") or {}
            why = blind_spots(watch, config if isinstance(config, dict) else {}, root)
            if why:
                raise Failed(why)
            self.version = text(self.watchman.ask("version").get("version", "?"))
            self.watchman.sock.settimeout(TIMEOUT)
        except BaseException:
            if getattr(self, "added", False):  # refused (a blind spot): the watch made goes
                with suppress(Failed, OSError):
                    self.drop()
            self.watchman.close()
            raise

    def close(self) -> None:
        self.watchman.close()

    def drop(self) -> None:
        """Take the watch of ``watch`` away (``watch-del``): watchman stops watching the tree
        and forgets it. Only for a watch this convgit made (``added``)."""
        self.watchman.ask("watch-del", self.watch)

    def clock(self, sync_ms: int = SYNC_MS) -> tuple[str, str]:
        """watchman's clock now, once it has seen every change made before this call (waiting
        ``sync_ms`` at most), and its recrawl warning ("" when none). Asked as a query since a
        clock of no instance, which watchman answers with nothing but its clock and its
        warnings."""
        query = {"since": "c:0:0", "fields": ["name"], "empty_on_fresh_instance": True}
        answer = self._query({**query, "sync_timeout": sync_ms})
        return _clock(answer), text(answer.get("warning") or "")

    def settle(self) -> None:
        """Wait until watchman has read the whole tree (its first crawl of a new watch)."""
        self.clock(SETTLE_MS)

    def since(self, clock: str) -> Changed:
        """The paths (relative to the working tree, outside its .git) changed since
        ``clock``, once watchman has seen every change made before this call."""
        query: dict[str, Any] = {
            "since": clock,
            "fields": ["name"],
            "expression": ["not", ["dirname", ".git"]],
            "empty_on_fresh_instance": True,
            "sync_timeout": SYNC_MS,
        }
        answer = self._query(query)
        paths: list[bytes] = []
        for item in answer.get("files", []):
            name = item.get("name") if isinstance(item, dict) else item
            if not isinstance(name, bytes) or not name:
                raise Failed("watchman's query gave a file without a name")
            paths.append(name)
        warning = text(answer.get("warning") or "")
        fresh = bool(answer.get("is_fresh_instance"))
        return Changed(_clock(answer), not fresh, tuple(paths), warning)

    def _query(self, query: dict[str, Any]) -> dict[str, Any]:
        """watchman's answer to ``query`` on this watch, waiting for its sync."""
        if self.relative:
            query["relative_root"] = self.relative
        sock = self.watchman.sock
        sock.settimeout(int(query.get("sync_timeout", SYNC_MS)) / 1000 + TIMEOUT)
        try:
            return self.watchman.ask("query", self.watch, query)
        finally:
            sock.settimeout(TIMEOUT)


def _mark(mark: Path, watch: bytes) -> None:
    """``mark`` names ``watch``; a mark that cannot be written costs only the leftover watch."""
    with suppress(OSError):
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.write_bytes(watch)


def _clock(answer: dict[str, Any]) -> str:
    clock = answer.get("clock")
    if not isinstance(clock, bytes) or not clock.startswith(b"c:"):
        raise Failed("watchman gave no clock")
    return clock.decode()

"""git's fsmonitor hook (protocol version 2) for convgit's private index, asking watchman.

git runs it as ``core.fsmonitor`` (only for convgit's own git commands on its private index:
``convgit.git.index.watcher``) with the version and the token the index keeps, in the working tree,
with GIT_INDEX_FILE set. It prints a new token, a NUL, and the paths changed since the token
(NUL-separated), or ``/`` for "everything may have changed" (git then stats every file, as it
does without a watcher). Any failure exits non-zero: git then stats every file too, so a
watcher that is missing, restarted or wrong never makes a snapshot wrong, only slower. Why it
failed is written beside the index (``<index>.watcher``) for ``convgit status``.

Tokens are ``convgit:<watchman clock>``: a token git got elsewhere (the user's index a private
index is seeded from, git's own timestamps) is never taken for one of ours.

Run as a script by path (``python -I -S``), so it imports as little as it can: it speaks BSER to
watchman's socket itself. Only when the socket is unknown or gone does it start ``watchman
get-sockname`` (which starts watchman's service, as watchman's own client does).
"""

from __future__ import annotations

import os
import struct
import sys

TYPE_CHECKING = False  # typing is not imported at run time: it would double the hook's start
if TYPE_CHECKING:
    from typing import Any

PREFIX = "convgit:"
NOTE = ".watcher"  # beside the index: why the last query failed
SOCKNAME = ".watchman-sock"  # beside the index: watchman's socket, as it last told it


class Failed(Exception):
    """The watcher cannot answer: git stats every file."""


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
    """One connection to watchman's socket."""

    def __init__(self, sockname: str) -> None:
        import _socket

        self.sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            self.sock.connect(sockname)
        except OSError:
            self.sock.close()
            raise

    def ask(self, *command: Any) -> dict[str, Any]:
        self.sock.sendall(encode_pdu(list(command)))
        data = b""
        while len(data) < 3 or data[:2] != b"\x00\x01":
            data += self._read()
        while True:  # the header: magic and the body's length, an encoded integer
            try:
                length, start = _decode(data, 2)
                break
            except (IndexError, struct.error):
                data += self._read()
        while len(data) < start + length:
            data += self._read()
        answer, _ = _decode(data, start)
        if not isinstance(answer, dict):
            raise Failed("watchman's answer is not an object")
        if "error" in answer:
            raise Failed(f"watchman: {_text(answer['error'])}")
        if answer.get("unilateral"):
            return self.ask(*command)
        return answer

    def _read(self) -> bytes:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise Failed("watchman closed the connection")
        return bytes(chunk)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def sockname_from_cli() -> str:
    """watchman's socket, from its own client (which starts its service when it is not
    running)."""
    import json
    import subprocess

    try:
        done = subprocess.run(
            ["watchman", "--no-pretty", "get-sockname"],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )
    except FileNotFoundError:
        raise Failed("watchman is not on PATH") from None
    except subprocess.TimeoutExpired:
        raise Failed("watchman did not answer within 60 s") from None
    try:
        said = json.loads(done.stdout)
    except ValueError:
        said = {}
    if done.returncode != 0 or not isinstance(said, dict) or "sockname" not in said:
        words = done.stderr.decode(errors="replace").strip().splitlines()
        raise Failed(f"watchman get-sockname failed: {(words or ['no answer'])[-1]}")
    return str(said["sockname"])


def connect(index: str) -> Watchman:
    """A connection to watchman: at the socket it last told (kept beside the index), else at
    the one its client tells now (starting its service)."""
    cached = f"{index}{SOCKNAME}" if index else ""
    known = os.environ.get("WATCHMAN_SOCK", "")
    if not known and cached:
        try:
            with open(cached) as handle:
                known = handle.read().strip()
        except OSError:
            known = ""
    if known:
        try:
            return Watchman(known)
        except OSError:
            pass
    fresh = sockname_from_cli()
    try:
        found = Watchman(fresh)
    except OSError as exc:
        raise Failed(f"cannot reach watchman at its socket: {exc.strerror}") from None
    if cached and fresh != known:
        with open(f"{cached}.tmp", "w") as handle:
            handle.write(fresh + "\n")
        os.replace(f"{cached}.tmp", cached)
    return found


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
            return f"watchman ignores the folder {_text(name)} (ignore_vcs)"
    return ""


def changes(token: str, root: bytes, index: str) -> tuple[str, list[bytes]]:
    """The new token and the paths changed since ``token`` (``[b"/"]``: any may have)."""
    watchman = connect(index)
    try:
        found = watchman.ask("watch-project", root)
        watch = found.get("watch")
        if not isinstance(watch, bytes):
            raise Failed("watchman watch-project gave no root")
        relative = found.get("relative_path") or b""
        config = watchman.ask("get-config", watch).get("config") or {}
        why = blind_spots(watch, config if isinstance(config, dict) else {}, root)
        if why:
            raise Failed(why)
        query: dict[str, Any] = {
            "fields": ["name", "type"],
            "expression": ["not", ["dirname", ".git"]],
            "empty_on_fresh_instance": True,
        }
        if relative:
            query["relative_root"] = relative
        clock = token[len(PREFIX) :] if token.startswith(PREFIX) else ""
        if clock.startswith("c:"):
            query["since"] = clock
            answer = watchman.ask("query", watch, query)
        else:  # not a token of ours: everything may have changed, from this clock on
            answer = watchman.ask("clock", watch, {"sync_timeout": 60000})
            clock = ""
    finally:
        watchman.sock.close()
    new = answer.get("clock")
    if not isinstance(new, bytes):
        raise Failed("watchman's query gave no clock")
    if not clock or answer.get("is_fresh_instance"):
        return PREFIX + new.decode(), [b"/"]
    paths: list[bytes] = []
    for item in answer.get("files", []):
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, bytes) or not name:
            raise Failed("watchman's query gave a file without a name")
        paths.append(name)
        if isinstance(item, dict) and item.get("type") == b"d":
            paths.append(name + b"/")  # git then looks at everything it holds below
    return PREFIX + new.decode(), paths


def note(index: str, words: str) -> None:
    """Say why the watcher failed (or, with "", that it answered) beside the index."""
    if not index:
        return
    path = f"{index}{NOTE}"
    try:
        if not words:
            if os.path.lexists(path):
                os.unlink(path)
            return
        with open(f"{path}.tmp", "w") as handle:
            handle.write(words + "\n")
        os.replace(f"{path}.tmp", path)
    except OSError:
        pass


def main(argv: list[str]) -> int:
    index = os.environ.get("GIT_INDEX_FILE", "")
    if len(argv) < 2 or argv[0] != "2":
        return 1  # git then tries version 1, which this hook does not speak, and stats all
    try:
        token, paths = changes(argv[1], os.fsencode(os.getcwd()), index)
    except Failed as failed:
        note(index, str(failed))
        return 1
    except OSError as exc:
        note(index, f"watchman: {exc.strerror or exc}")
        return 1
    except (IndexError, KeyError, ValueError, struct.error) as exc:
        note(index, f"watchman's answer could not be read ({type(exc).__name__})")
        return 1
    note(index, "")
    out = sys.stdout.buffer
    out.write(token.encode() + b"\0" + b"\0".join(paths))
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

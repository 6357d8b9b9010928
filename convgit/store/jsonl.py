"""The append-only JSONL files: the lock, append with catch-up, reading, torn-line handling, and
repair's one write. No git here.

Guarantees:
* a record is written as one whole line by ``os.write`` calls on an ``O_APPEND`` descriptor while
  an exclusive lock is held, so concurrent writers never interleave bytes;
* a torn last line (a writer died mid-line) is ignored by readers and, under the lock, moved to
  ``<sid>.quarantine.jsonl`` and cut off by the next writer, so nothing is silently lost;
* nothing is rewritten in place; ``repair`` writes a new file and keeps the old one as a backup.
"""

from __future__ import annotations

import codecs
import os
import stat
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path
from typing import Any

from convgit.base import codec, faults, locks
from convgit.base.errors import (
    CorruptStoreError,
    InvalidEntryError,
    NotFoundError,
    RefusedError,
    StoreLockedError,
    denied,
)
from convgit.base.valueclass import valueclass

BOM = codecs.BOM_UTF8
LOCK_TIMEOUT = 60.0
_CHUNK = 1 << 20
_HEADER_PEEK = 1 << 16


# -- reading ----------------------------------------------------------------------------------


@valueclass
class Lines:
    """What a read found: one parsed value per complete line (an ``Unparsable`` for a bad one),
    the first of them being line ``first``, and a torn tail if any."""

    records: list[Any] = field(default_factory=list)
    first: int = 1
    raw: list[bytes] = field(default_factory=list)
    torn: bytes | None = None
    bom: bool = False
    crlf: list[int] = field(default_factory=list)
    unterminated: bool = False  # the last record is complete but has no final newline

    @property
    def parsed(self) -> list[tuple[int, Any]]:
        """The records with their 1-based line numbers."""
        return list(enumerate(self.records, self.first))


def parse_lines(data: bytes, first_line: int = 1) -> Lines:
    """Split and parse; a last piece with no newline is torn only if it does not parse."""
    return parse_split(split_lines(data, first_line))


def split_lines(data: bytes, first_line: int = 1) -> Lines:
    """The first half of ``parse_lines``: the raw lines, with ``torn`` holding the piece after
    the last newline until ``parse_split`` decides. The lines are copies, so a reader of a big
    file can let ``data`` go before parsing."""
    result = Lines(first=first_line)
    if first_line == 1 and data.startswith(BOM):
        data = data[len(BOM) :]
        result.bom = True
    pieces = data.split(b"\n")
    result.torn = pieces.pop() or None
    if b"\r" in data:  # one fast search spares a look at every line of the usual file
        result.crlf = [n for n, line in enumerate(pieces, first_line) if line.endswith(b"\r")]
    result.raw = pieces
    return result


def parse_split(result: Lines) -> Lines:
    """The second half of ``parse_lines``: parse the lines ``split_lines`` found."""
    records = result.records = codec.decode_lines(result.raw)
    last = result.torn
    if last is not None:
        try:
            record = codec.decode(last)
        except ValueError:
            pass  # torn: a writer stopped mid-line
        else:
            # a complete record whose newline is missing: keep it, the next writer adds "\n"
            records.append(record)
            result.raw.append(last)
            result.torn = None
            result.unterminated = True
    return result


def read_bytes(path: Path, what: str = "session") -> bytes:
    """The whole file, with every way the file system can refuse turned into one sentence."""
    try:
        # non-blocking, so a FIFO in the file's place cannot hang every command
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError
            if not stat.S_ISREG(mode):
                raise CorruptStoreError(f"The {what} file {path.name} is not a regular file.")
            with os.fdopen(os.dup(fd), "rb") as f:
                return f.read()
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise NotFoundError(f"There is no {what} file {path.name}.", "convgit sessions") from None
    except IsADirectoryError:
        raise CorruptStoreError(f"The {what} file {path.name} is a directory.") from None
    except OSError as exc:
        msg = f"The {what} file {path.name} cannot be read ({exc.strerror})."
        raise denied(exc, msg, path) or CorruptStoreError(msg) from None


def read_header(path: Path) -> dict[str, Any] | None:
    """The header of a session file, read from its first line only (None: none readable)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(_HEADER_PEEK)
    except OSError:
        return None
    if first.startswith(BOM):
        first = first[len(BOM) :]
    try:
        record = codec.decode(first)
    except ValueError:
        return None
    return record if type(record) is dict and record.get("type") == "session" else None


# -- writing ----------------------------------------------------------------------------------


@contextmanager
def exclusive(lock_path: Path, what: str) -> Iterator[None]:
    """Hold the exclusive lock at ``lock_path`` (guarding ``what``) for the block."""
    try:
        with locks.held(lock_path, LOCK_TIMEOUT):
            yield
    except locks.LockTimeout:
        waited = locks.limit(LOCK_TIMEOUT)
        raise StoreLockedError(
            f"Another convgit process has held the lock on {what} for over {waited:.0f} s.",
            "a convgit process is still running (a lock goes with its process)",
        ) from None


class JsonlFile:
    """One append-only JSONL file and its lock. Remembers how far it has read, so a writer can
    see, under the lock, exactly the lines other processes appended since."""

    def __init__(
        self, path: Path, lock_path: Path, *, fsync: bool = False, names: bool = False
    ) -> None:
        """``names``: the records carry file names, which may not be UTF-8 (they are written as
        ``codec.shown`` writes them); anything else must be UTF-8 text or is refused."""
        self.path = path
        self.lock_path = lock_path
        self.fsync = fsync
        self.encode = codec.encode_names if names else codec.encode
        self.size = 0  # bytes read and understood (complete lines only)
        self.lines = 0  # complete lines read
        self.identity: tuple[int, int] | None = None  # (device, inode) of the file read
        # CRC-32 of those ``size`` bytes, for a process that keeps the file read between two
        # reads (``keep_digest``): what was read or written is still there. None: not kept
        self.digest: int | None = None

    @property
    def quarantine_path(self) -> Path:
        return self.path.with_name(self.path.name.replace(".jsonl", ".quarantine.jsonl"))

    def read(self) -> Lines:
        """Read the whole file from the start (no lock: appends are whole lines)."""
        data = read_bytes(self.path)
        size = len(data)
        lines = split_lines(data)
        if self.digest is not None:
            self.digest = zlib.crc32(memoryview(data)[: size - len(lines.torn or b"")])
        del data  # parse without holding the whole file as well as its lines
        parse_split(lines)
        self.size = size - (len(lines.torn) if lines.torn is not None else 0)
        self.lines = len(lines.records)
        self.identity = self._identity()
        return lines

    def read_appended(self) -> Lines | None:
        """The whole lines appended since this file was last read or written (no lock: appends
        are whole lines); None when it was anything but appended to by whole, plain lines since
        (replaced, shortened, its bytes read or written changed in place, ended mid-line, a line
        with CRLF or one that does not parse): the caller reads it whole (``read``), which says
        what it found. The bytes read before are read again and compared by their CRC-32 (an
        editor that writes in place keeps the inode, and may keep the size)."""
        if self.identity is None or self.digest is None:
            return None
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self.identity or not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size < self.size:
                return None
            with os.fdopen(os.dup(fd), "rb") as f:
                whole = f.read(st.st_size)
        except OSError:
            return None
        finally:
            os.close(fd)
        read = memoryview(whole)[: self.size]
        if len(read) < self.size or (self.size and read[-1] != 10):
            return None
        if zlib.crc32(read) != self.digest:
            return None  # changed in place since
        data = whole[self.size :]
        if data and not data.endswith(b"\n"):
            return None
        news = parse_lines(data, self.lines + 1)
        bad = any(type(record) is codec.Unparsable for record in news.records)
        if news.torn is not None or news.crlf or bad:
            return None
        self.size += len(data)
        self.lines += len(news.records)
        self.follow(data)
        return news

    def keep_digest(self) -> None:
        """Keep the CRC-32 of what is read and written from the next whole read on, which
        ``read_appended`` checks; every other reader pays nothing for it."""
        if self.digest is None:
            self.digest = 0

    def follow(self, data: bytes) -> None:
        """``data`` read or written after the ``size`` bytes the digest covers."""
        if self.digest is not None:
            self.digest = zlib.crc32(data, self.digest)

    def _identity(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    @contextmanager
    def lock(self) -> Iterator[None]:
        with exclusive(self.lock_path, self.path.name):
            yield

    @contextmanager
    def appending(self) -> Iterator[Appender]:
        """Hold the lock; yield what others appended since our last read, and a writer."""
        with self.lock():
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
            try:
                fd = os.open(self.path, flags, 0o644)
            except OSError as exc:
                msg = f"The file {self.path.name} cannot be opened for writing ({exc.strerror})."
                raise denied(exc, msg, self.path) or CorruptStoreError(msg) from None
            try:
                appender = Appender(self, fd)
                appender.catch_up()
                yield appender
                if self.fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)

    def append(self, records: list[dict[str, Any]]) -> Lines:
        """Append records with no precondition; returns the lines others appended meanwhile."""
        with self.appending() as appender:
            appender.write(records)
            return appender.news


class Appender:
    """The writer half of ``JsonlFile.appending``; exists only while the lock is held."""

    def __init__(self, owner: JsonlFile, fd: int) -> None:
        self.owner = owner
        self.fd = fd
        self.news = Lines()

    def catch_up(self) -> None:
        owner, fd = self.owner, self.fd
        st = os.fstat(fd)
        if owner.identity is not None and owner.identity != (st.st_dev, st.st_ino):
            raise RefusedError(
                f"{owner.path.name} was replaced (repaired?) since it was read.",
                "run the command again",
            )
        if st.st_size < owner.size:
            raise RefusedError(
                f"{owner.path.name} is shorter than when it was read; it was changed by hand.",
                "convgit fsck",
            )
        if owner.size > 0 and os.pread(fd, 1, owner.size - 1) != b"\n":
            # the last record was complete but its newline never made it to the disk
            if st.st_size == owner.size:
                os.write(fd, b"\n")
                st = os.fstat(fd)
            if os.pread(fd, 1, owner.size) == b"\n":  # ended by us, or by another writer
                owner.size += 1
                owner.follow(b"\n")
        if st.st_size > owner.size:
            data = os.pread(fd, st.st_size - owner.size, owner.size)
            self.news = parse_lines(data, owner.lines + 1)
            owner.size += len(data)
            owner.lines += len(self.news.records)
            torn = self.news.torn
            owner.follow(data[: len(data) - len(torn or b"")])
            if torn is not None:
                self._quarantine_torn(torn)
            elif data and not data.endswith(b"\n"):
                os.write(fd, b"\n")  # a complete last record written without its newline
                owner.size += 1
                owner.follow(b"\n")
        owner.identity = (st.st_dev, st.st_ino)

    def _quarantine_torn(self, torn: bytes) -> None:
        owner = self.owner
        owner.size -= len(torn)
        note = quarantine_record(
            owner.lines + 1, torn, "torn last line (a writer stopped mid-line)"
        )
        _append_durably(owner.quarantine_path, [note])
        os.ftruncate(self.fd, owner.size)

    def write(self, records: list[dict[str, Any]]) -> None:
        """Write whole lines; every record is encoded before the first byte is written."""
        try:
            lines = list(map(self.owner.encode, records))
        except TypeError:
            raise InvalidEntryError(_unwritable(records)) from None
        buffer: list[bytes] = []
        pending = 0
        for line in lines:
            buffer.append(line)
            pending += len(line)
            if pending >= _CHUNK:
                self._write(b"".join(buffer))
                buffer.clear()
                pending = 0
        if buffer:
            self._write(b"".join(buffer))
        self.owner.lines += len(records)

    def _write(self, data: bytes) -> None:
        faults.point("append:before-write")
        faults.torn_write(self.fd, data)
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]
        self.owner.size += len(data)
        self.owner.follow(data)
        faults.point("append:after-write")


def _unwritable(records: list[dict[str, Any]]) -> str:
    for number, record in enumerate(records, 1):
        try:
            codec.encode(record)  # the session's own entries: strict
        except TypeError as exc:
            return f"Entry {number} cannot be written as JSON ({exc}); nothing was appended."
    return "An entry cannot be written as JSON; nothing was appended."


def quarantine_record(line: int | None, raw: bytes, reason: str) -> dict[str, Any]:
    """A quarantined line, kept exactly (``schema.quarantined``)."""
    from convgit import schema  # only a writer that found a torn line needs the schema

    return schema.quarantined(line, raw, reason)


def _append_durably(path: Path, records: list[dict[str, Any]]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"".join(codec.encode(r) for r in records))
        os.fsync(fd)
    finally:
        os.close(fd)


def create(path: Path, header: dict[str, Any]) -> None:
    """Write a new session file; refuses to overwrite one that exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise RefusedError(f"A session file {path.name} already exists.") from None
    try:
        os.write(fd, codec.encode(header))
    finally:
        os.close(fd)


def replace_with(file: JsonlFile, keep: list[bytes], moved: list[dict[str, Any]]) -> Path:
    """Repair's only write: keep the original as a timestamped backup, append ``moved`` to the
    quarantine, and put a file made of the ``keep`` lines (exact bytes) in its place. Call with
    the lock held."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    backup = file.path.with_name(f"{file.path.name}.bak-{stamp}")
    n = 1
    while backup.exists():
        n += 1
        backup = file.path.with_name(f"{file.path.name}.bak-{stamp}-{n}")
    try:
        os.link(file.path, backup)
    except OSError:  # a file system without hard links
        import shutil

        shutil.copy2(file.path, backup)
    if moved:
        _append_durably(file.quarantine_path, moved)
    tmp = file.path.with_name(file.path.name + ".repair-tmp")
    with open(tmp, "wb") as out:
        out.write(b"".join(line + b"\n" for line in keep))
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, file.path)
    return backup

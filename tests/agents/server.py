"""A scripted model server on 127.0.0.1: the agents' real CLIs talk to it instead of a model.

Every request is logged (`Request`) before it is answered. A request to a model endpoint that
offers tools is the agent's own loop and gets the next scripted `Reply`, in order; one without
tools (titles, summaries, warm-ups), token counting, model listings and unknown endpoints get a
sensible answer and are logged apart (`side`). A proxied request (an absolute URL or CONNECT)
means the agent tried to reach another host: it is refused and logged as an escape. A scripted
request that finds the script exhausted is answered with an error and recorded as a problem;
`check()` fails on problems, escapes and replies never asked for.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from tests.agents.dialects import BY_NAME, dialect_for
from tests.agents.script import Item, JsonObject, Reply


@dataclass
class Request:
    """One request the server received, in arrival order (``index`` from 0)."""

    index: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: JsonObject | None
    dialect: str = ""
    reply: Reply | None = None
    status: int = 200
    note: str = ""

    @property
    def scripted(self) -> bool:
        return self.reply is not None

    def items(self) -> list[Item]:
        """The conversation the model was sent, in order (see `Item`)."""
        dialect = BY_NAME.get(self.dialect)
        return [] if dialect is None or self.body is None else dialect.items(self.body)

    def prompts(self) -> list[str]:
        """The user's prompts the model was sent (injected context left out)."""
        return [i.text for i in self.items() if i.kind == "prompt"]

    def replies(self) -> list[str]:
        """The assistant texts the model was sent back."""
        return [i.text for i in self.items() if i.kind == "text"]

    def calls(self) -> list[Item]:
        return [i for i in self.items() if i.kind == "call"]

    def results(self) -> list[Item]:
        return [i for i in self.items() if i.kind == "result"]

    def describe(self) -> str:
        prompts = self.prompts()
        last = repr(prompts[-1][:200]) if prompts else "none"
        return f"request #{self.index} {self.method} {self.path} (last prompt: {last})"


@dataclass
class _State:
    turns: list[Reply] = field(default_factory=list)
    given: int = 0
    requests: list[Request] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    max_requests: int = 200
    lock: threading.Lock = field(default_factory=threading.Lock)


class ModelServer:
    """The server, bound to a free port of 127.0.0.1 while used as a context manager."""

    def __init__(self, *, max_requests: int = 200) -> None:
        self._state = _State(max_requests=max_requests)
        self._http = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._http.state = self._state
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def expect(self, *replies: Reply) -> None:
        """Queue replies for the next scripted requests, in order."""
        with self._state.lock:
            self._state.turns.extend(replies)

    @property
    def requests(self) -> list[Request]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def scripted(self) -> list[Request]:
        """The requests that were given a scripted reply, in order."""
        return [r for r in self.requests if r.scripted]

    @property
    def side(self) -> list[Request]:
        """Requests the script did not cover (side requests, other endpoints, escapes)."""
        return [r for r in self.requests if not r.scripted]

    @property
    def escapes(self) -> list[Request]:
        """Requests that asked this server to proxy them to another host."""
        return [r for r in self.requests if r.note == "escape"]

    @property
    def problems(self) -> list[str]:
        with self._state.lock:
            return list(self._state.problems)

    @property
    def unused(self) -> list[Reply]:
        """Scripted replies no request has asked for yet."""
        with self._state.lock:
            return self._state.turns[self._state.given :]

    def check(self) -> None:
        """Fail unless every request was expected and every scripted reply was asked for."""
        faults = self.problems
        faults += [f"the agent tried to reach another host: {r.path}" for r in self.escapes]
        if self.unused:
            faults.append(
                f"{len(self.unused)} scripted replies were never asked for: {self.unused}"
            )
        assert not faults, "scripted model server: " + "; ".join(faults)

    def __enter__(self) -> ModelServer:
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    state: _State

    def handle_error(self, request: object, client_address: object) -> None:
        """An agent that drops its connection is no fault of the script; anything else is."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            with self.state.lock:
                self.state.problems.append(f"the server failed on a request: {error!r}")


def _error(dialect_path: str, message: str) -> bytes:
    dialect = dialect_for(dialect_path)
    if dialect is not None:
        return dialect.error(message)
    return json.dumps({"error": {"message": message, "type": "not_found_error"}}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60  # an idle keep-alive connection ends its thread
    server: _HTTPServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_CONNECT(self) -> None:
        self._handle()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return b"".join(self._chunks())
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _chunks(self) -> Iterator[bytes]:
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            yield self.rfile.read(size)
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass

    def _handle(self) -> None:
        raw = b"" if self.command in ("GET", "HEAD", "CONNECT") else self._body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        request = Request(
            index=-1,
            method=self.command,
            path=self.path if self.command == "CONNECT" or parts.netloc else parts.path,
            query=parts.query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body if isinstance(body, dict) else None,
        )
        code, ctype, payload = self._answer(request)
        request.status = code
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(payload)))
        if code >= 400:
            self.send_header("x-should-retry", "false")  # the SDKs' own retry loops stop here
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _answer(self, request: Request) -> tuple[int, str, bytes]:
        """Log the request, then decide its answer (under the lock: turns are given in order)."""
        state, path, body = self.server.state, request.path, request.body or {}
        with state.lock:
            request.index = len(state.requests)
            state.requests.append(request)
            dialect = dialect_for(path)
            if self.command == "CONNECT" or "://" in path:
                request.note = "escape"
                return 403, "text/plain", b"the scripted model server proxies nothing\n"
            if request.index >= state.max_requests:
                state.problems.append(
                    f"more than {state.max_requests} requests: {request.describe()}"
                )
                return 429, "application/json", _error(path, "too many requests for a test")
            if path.endswith(("/count_tokens", ":countTokens")):
                request.note = "count_tokens"
                return 200, "application/json", b'{"input_tokens": 10, "totalTokens": 10}'
            if dialect is None or self.command != "POST":
                return self._other(request)
            request.dialect = dialect.name
            if not body.get("tools"):
                request.note = "side request (no tools)"
                ctype, payload = dialect.side(body, request.index, path)
                return 200, ctype, payload
            if state.given == len(state.turns):
                state.problems.append(
                    f"the script is exhausted ({state.given} replies given) but the agent sent "
                    + request.describe()
                )
                return 400, "application/json", dialect.error("the script is exhausted")
            if not dialect.streams(path, body):
                state.problems.append(
                    f"a scripted request did not ask to stream: {request.describe()}"
                )
            request.reply = state.turns[state.given]
            state.given += 1
            model = dialect.model(path, body)
            return 200, "text/event-stream", dialect.stream(request.reply, request.index, model)

    def _other(self, request: Request) -> tuple[int, str, bytes]:
        if self.command == "GET" and request.path == "/v1/models":
            request.note = "model listing"
            return 200, "application/json", b'{"object": "list", "data": []}'
        if request.headers.get("upgrade", "").lower() == "websocket":
            request.note = "websocket refused"  # Codex then falls back to plain HTTP at once
            return 426, "text/plain", b""
        request.note = "unknown endpoint"
        return 404, "application/json", _error("", f"no such endpoint: {request.path}")

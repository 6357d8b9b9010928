"""convgit's MCP server for pi, which has no MCP client of its own ("No MCP": its extensions add
what it lacks): a file of convgit's own, ``convgit-mcp.ts``, in the project's
``.pi/extensions/`` or the user's ``~/.pi/agent/extensions/``, which starts ``convgit mcp``
when pi starts, asks it for its tools over MCP (the ``initialize`` handshake, ``tools/list``)
and registers each as a pi tool, ``convgit_<tool>``, whose call is the server's
``tools/call``. The file is convgit's alone, as the hooks' extension is
(``convgit.agents.own_file``): a file of that name without its marker is refused; uninstalling
removes it and the folders the install made. Whatever happens, pi goes on: a server that does
not start or answer gives no tools."""

from __future__ import annotations

import json
from pathlib import Path

from convgit.agents import mcp
from convgit.agents.hooks import Change
from convgit.agents.own_file import OwnFile
from convgit.agents.pi import NAME
from convgit.agents.pi import live as pi_live
from convgit.agents.pi.hooks import agent_dir
from convgit.base.errors import UsageError

AGENT = NAME
DEFAULT_SCOPE = "project"
SCOPES = pi_live.SCOPES
PROJECT_SCOPES = frozenset({"project"})  # its file is kept out of git, as the hooks' one is
FILE = "convgit-mcp.ts"
MARKER = "// convgit-pi-mcp "
TIMEOUT_MS = 120_000


def extension_file(scope: str, project: Path) -> Path:
    base = agent_dir() if scope == "user" else project / ".pi"
    return base / "extensions" / FILE


def _events(tools: bool = False) -> list[str]:
    return mcp.REGISTERED


def source(program: str | None, tools: bool, project: Path | None = None) -> str:
    """The extension's text: the marker (the server's command), then the module pi loads."""
    words, _ = mcp.command(program, project)
    return (
        MARKER
        + json.dumps({"command": words})
        + "\n"
        + _BODY.replace("@COMMAND@", json.dumps(words)).replace("@TIMEOUT@", str(TIMEOUT_MS))
    )


_BODY = """\
// Written by `convgit hooks install pi --mcp`; `convgit hooks uninstall pi --mcp` removes it.
// pi has no MCP client: this one starts convgit's MCP server (read-only tools over the
// project's sessions) and gives its tools to pi. It never stops pi: a server that does not
// start or answer gives no tools.
import { spawn } from "node:child_process";

const COMMAND: string[] = @COMMAND@;

export default async function (pi: any) {
  let child: any;
  try {
    child = spawn(COMMAND[0], COMMAND.slice(1), { stdio: ["pipe", "pipe", "ignore"] });
  } catch {
    return;
  }
  child.on("error", () => {});
  child.stdin.on("error", () => {});
  // pi may end at any time (print mode): the server never keeps it running
  child.unref();
  child.stdin.unref?.();
  child.stdout.unref?.();
  let buffer = "";
  let next = 1;
  const waiting = new Map<number, (answer: any) => void>();
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    let at: number;
    while ((at = buffer.indexOf("\\n")) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      try {
        const answer = JSON.parse(line);
        const waiter = waiting.get(answer.id);
        if (waiter) {
          waiting.delete(answer.id);
          waiter(answer);
        }
      } catch {
        // not a line of the protocol
      }
    }
  });
  const request = (method: string, params: unknown, ms: number) =>
    new Promise<any>((resolve) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve({ error: { message: "convgit's MCP server did not answer in time" } });
      }, ms);
      waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      try {
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\\n");
      } catch {
        waiting.delete(id);
        clearTimeout(timer);
        resolve({ error: { message: "convgit's MCP server is not running" } });
      }
    });
  const hello = {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "pi (convgit-mcp.ts)", version: "1" },
  };
  const started = await request("initialize", hello, 30000);
  if (started.error) {
    child.kill();
    return;
  }
  const ready = { jsonrpc: "2.0", method: "notifications/initialized" };
  child.stdin.write(JSON.stringify(ready) + "\\n");
  const listed = await request("tools/list", {}, 30000);
  for (const tool of (listed.result && listed.result.tools) || []) {
    pi.registerTool({
      name: `convgit_${tool.name}`,
      label: `convgit ${tool.name}`,
      description: tool.description || "",
      parameters: tool.inputSchema || { type: "object", properties: {} },
      async execute(_id: string, params: any) {
        const call = { name: tool.name, arguments: params || {} };
        const done = await request("tools/call", call, @TIMEOUT@);
        const result = done.result || {};
        const text = done.error
          ? String(done.error.message)
          : (result.content || [])
              .filter((part: any) => part.type === "text")
              .map((part: any) => part.text)
              .join("\\n");
        if (done.error || result.isError) throw new Error(text);
        return { content: [{ type: "text", text }], details: {} };
      },
    });
  }
  pi.on("session_shutdown", async () => {
    try {
      child.kill();
    } catch {
      // gone already
    }
  });
}
"""


def _file(project: Path | None) -> OwnFile:
    return OwnFile(
        agent=AGENT,
        kind="extension",
        marker=MARKER,
        scopes=SCOPES,
        path=extension_file,
        events=_events,
        source=lambda program, tools: source(program, tools, project),
    )


def install(scope: str, project: Path, backups: Path, program: str | None) -> Change:
    """Write convgit's MCP extension for ``scope`` (the project's names the project: ``-C``)."""
    _check(scope)
    where = project if scope in PROJECT_SCOPES else None
    return _file(where).install(scope, project, backups, program, False)


def uninstall(scope: str, project: Path, backups: Path) -> Change:
    _check(scope)
    return _file(None).uninstall(scope, project, backups)


def _check(scope: str) -> None:
    if scope not in SCOPES:
        known = ", ".join(SCOPES)
        raise UsageError(f"There is no scope '{scope}' for pi's --mcp: use one of {known}.")

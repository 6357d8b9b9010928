"""convgit's pi extension: one file, ``convgit.ts``, in the project's ``.pi/extensions/`` or the
user's ``~/.pi/agent/extensions/`` (``PI_CODING_AGENT_DIR`` honoured), which pi loads at start.

* The file is convgit's alone: its first line is a marker naming the events it passes on and
  the command it runs (``convgit hook pi``, ``hook_command``). A file of that name without the
  marker is the user's: it is refused and left as it is. Every other extension is untouched.
* Installing again replaces convgit's file when it differs (another convgit, other events).
* Uninstalling removes the file and the folders the install made, when nothing else is in them
  (the install notes which it made, beside the backups), so the project is as it was.
* The extension hands each event to the recorder of its working tree itself, when one runs
  (``convgit.agents.live.inprocess``: no process is started for it); otherwise it runs the
  hook synchronously with the event on stdin. Either way pi waits for the event to be recorded,
  the hook's stdout is read back (a message about failed events, shown with pi's notice, or on
  stderr in print mode) and its stderr dropped; whatever happens, pi goes on (every call is
  guarded, 30 s at most).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from convgit.agents.live import inprocess
from convgit.agents.own_file import OwnFile
from convgit.agents.pi import live as pi_live
from convgit.base.errors import UsageError

NAME = "convgit.ts"
MARKER = "// convgit-pi-extension "
TIMEOUT_MS = 30_000


def agent_dir(env: os._Environ[str] | dict[str, str] = os.environ) -> Path:
    """pi's own folder: ``PI_CODING_AGENT_DIR``, else ``~/.pi/agent``."""
    chosen = env.get("PI_CODING_AGENT_DIR")
    return Path(chosen).expanduser() if chosen else Path("~/.pi/agent").expanduser()


def extension_file(scope: str, project: Path) -> Path:
    if scope not in pi_live.SCOPES:
        known = ", ".join(pi_live.SCOPES)
        raise UsageError(f"There is no scope '{scope}' for pi: use one of {known}.")
    base = agent_dir() if scope == "user" else project / ".pi"
    return base / "extensions" / NAME


def events(tools: bool = False) -> list[str]:
    return list(pi_live.EVENTS)


def source(program: str | None, tools: bool) -> str:
    """The extension's text: the marker, then the module pi loads."""
    from convgit.agents import hook_command

    command = hook_command.command(pi_live.AGENT, program)
    marker = {"events": events(tools), "command": command, "tool_snapshots": tools}
    wanted = "null" if tools else json.dumps(list(pi_live.FILE_TOOLS))
    return (
        MARKER
        + json.dumps(marker)
        + "\n"
        + _BODY.replace("@COMMAND@", json.dumps(command))
        .replace("@EVENTS@", json.dumps(events(tools)))
        .replace("@TOOLS@", wanted)
        .replace("@TIMEOUT@", str(TIMEOUT_MS))
        .replace("@RECORDER@\n", inprocess.fragment(pi_live.AGENT, program))
    )


_BODY = """\
// Written by `convgit hooks install pi`; `convgit hooks uninstall pi` removes it.
// Records this pi session in convgit, turn by turn. It never stops pi: every call is guarded.
import { spawnSync } from "node:child_process";
@RECORDER@

const COMMAND: string = @COMMAND@;
const EVENTS: string[] = @EVENTS@; // the events passed on to convgit
const TOOLS: string[] | null = @TOOLS@; // null: every tool (per-tool snapshots)

export default function (pi: any) {
  let prompts = 0;
  const paths = new Map<string, string>();
  const run = (event: string, ctx: any, more: Record<string, unknown> = {}) => {
    if (!EVENTS.includes(event)) return;
    try {
      const sessions = ctx.sessionManager;
      const payload = {
        event,
        session_id: sessions.getSessionId(),
        transcript_path: sessions.getSessionFile() ?? null,
        leaf: sessions.getLeafId() ?? null,
        cwd: ctx.cwd,
        ...more,
      };
      const input = JSON.stringify(payload);
      let out = CONVGIT_RECORDER.hand(ctx.cwd, input); // null: the recorder did not record it
      if (out === null) {
        const done = spawnSync("sh", ["-c", COMMAND], {
          cwd: ctx.cwd,
          input,
          stdio: ["pipe", "pipe", "ignore"],
          encoding: "utf8",
          timeout: @TIMEOUT@,
        });
        out = String(done.stdout || "");
      }
      const said = out.trim();
      if (!said) return;
      const message = JSON.parse(said).systemMessage;
      if (typeof message !== "string") return;
      if (ctx.hasUI) ctx.ui.notify(message, "warning");
      else process.stderr.write(message + "\\n");
    } catch {
      // convgit's problem, never pi's
    }
  };
  pi.on("session_start", async (event: any, ctx: any) => {
    run("session_start", ctx, { source: event.reason });
  });
  pi.on("agent_start", async (_event: any, ctx: any) => {
    prompts += 1;
    run("agent_start", ctx, { prompt_id: `${process.pid}-${Date.now()}-${prompts}` });
  });
  pi.on("tool_execution_start", async (event: any) => {
    const path = event.args && event.args.path;
    if (typeof path === "string") paths.set(event.toolCallId, path);
  });
  pi.on("tool_execution_end", async (event: any, ctx: any) => {
    const path = paths.get(event.toolCallId);
    paths.delete(event.toolCallId);
    if (TOOLS !== null && !TOOLS.includes(event.toolName)) return;
    const tool = { tool_name: event.toolName, tool_use_id: event.toolCallId, path };
    run("tool_execution_end", ctx, tool);
  });
  pi.on("agent_end", async (_event: any, ctx: any) => run("agent_end", ctx));
  pi.on("session_shutdown", async (_event: any, ctx: any) => run("session_shutdown", ctx));
}
"""


_FILE = OwnFile(
    agent=pi_live.AGENT,
    kind="extension",
    marker=MARKER,
    scopes=pi_live.SCOPES,
    path=extension_file,
    events=events,
    source=source,
)
install, uninstall, status = _FILE.install, _FILE.uninstall, _FILE.status

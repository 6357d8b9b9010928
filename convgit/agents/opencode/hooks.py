"""convgit's OpenCode plugin: one file, ``convgit.js``, in the project's ``.opencode/plugins/``
or the user's ``~/.config/opencode/plugins/`` (``XDG_CONFIG_HOME`` honoured), which OpenCode
loads at start.

* The file is convgit's alone: its first line is a marker naming the events it passes on and
  the command it runs (``convgit hook opencode``, ``hook_command``). A file of that name
  without the marker is the user's: it is refused and left as it is. Every other plugin and
  the user's ``opencode.json`` are untouched.
* Installing again replaces convgit's file when it differs (another convgit, other events).
* Uninstalling removes the file and the folders the install made, when nothing else is in them
  (the install notes which it made, beside the backups). OpenCode itself installs its plugin
  package into a config folder that holds plugins (``package.json``, ``node_modules``, and a
  ``.gitignore`` that hides them from git); what OpenCode wrote there stays.
* The plugin hands each event to the recorder of its working tree itself, when one runs
  (``convgit.agents.live.inprocess``: no process is started for it), else runs the hook; both
  synchronously (OpenCode does not wait for a plugin's ``event`` handler: an asynchronous
  process or connection would die when ``opencode run`` exits), the hook with the event on
  stdin, its stdout (or the recorder's answer) read back (a message about failed events: a
  toast in the TUI, stderr elsewhere, as in ``opencode run``) and its stderr dropped; whatever
  happens, OpenCode goes on (every call is guarded, 30 s at most). The module exports the
  plugin alone: OpenCode takes every export for one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from convgit.agents.live import inprocess
from convgit.agents.opencode import live as oc_live
from convgit.agents.own_file import OwnFile
from convgit.base.errors import UsageError

NAME = "convgit.js"
MARKER = "// convgit-opencode-plugin "
TIMEOUT_MS = 30_000


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    """OpenCode's folder of the user's: ``$XDG_CONFIG_HOME/opencode``, else
    ``~/.config/opencode``."""
    base = env.get("XDG_CONFIG_HOME")
    return (Path(base).expanduser() if base else Path("~/.config").expanduser()) / "opencode"


def plugin_file(scope: str, project: Path) -> Path:
    if scope not in oc_live.SCOPES:
        known = ", ".join(oc_live.SCOPES)
        raise UsageError(f"There is no scope '{scope}' for OpenCode: use one of {known}.")
    base = config_dir() if scope == "user" else project / ".opencode"
    return base / "plugins" / NAME


def events(tools: bool = False) -> list[str]:
    return list(oc_live.EVENTS)


def source(program: str | None, tools: bool) -> str:
    """The plugin's text: the marker, then the module OpenCode loads."""
    from convgit.agents import hook_command

    command = hook_command.command(oc_live.AGENT, program)
    marker = {"events": events(tools), "command": command, "tool_snapshots": tools}
    wanted = "null" if tools else json.dumps(list(oc_live.FILE_TOOLS))
    return (
        MARKER
        + json.dumps(marker)
        + "\n"
        + _BODY.replace("@COMMAND@", json.dumps(command))
        .replace("@EVENTS@", json.dumps(events(tools)))
        .replace("@TOOLS@", wanted)
        .replace("@TIMEOUT@", str(TIMEOUT_MS))
        .replace("@RECORDER@\n", inprocess.fragment(oc_live.AGENT, program))
    )


_BODY = """\
// Written by `convgit hooks install opencode`; `convgit hooks uninstall opencode` removes it.
// Records this OpenCode session in convgit, turn by turn. It never stops OpenCode: every call
// is guarded, and convgit runs synchronously (OpenCode does not wait for an `event` handler).
import { spawnSync } from "node:child_process"
@RECORDER@

const COMMAND = @COMMAND@
const EVENTS = @EVENTS@ // the events passed on to convgit
const TOOLS = @TOOLS@ // null: every tool (per-tool snapshots)

export const ConvgitRecorder = async ({ client, directory }) => {
  const subagents = new Set() // sessions of the task tool: not recorded
  // OpenCode's screen (the TUI) shows a toast; `opencode run` and the rest, stderr
  const command = process.argv.slice(2).find((word) => !word.startsWith("-"))
  const tui = process.stdout.isTTY && !["run", "serve", "acp", "web"].includes(command)
  const run = (event, sessionID, more) => {
    if (!EVENTS.includes(event) || typeof sessionID !== "string") return
    if (subagents.has(sessionID)) return
    try {
      const payload = { event, session_id: sessionID, cwd: directory, ...more }
      const input = JSON.stringify(payload)
      let out = CONVGIT_RECORDER.hand(directory, input) // null: the recorder did not record it
      if (out === null) {
        const done = spawnSync("sh", ["-c", COMMAND], {
          cwd: directory,
          input,
          stdio: ["pipe", "pipe", "ignore"],
          encoding: "utf8",
          timeout: @TIMEOUT@,
        })
        out = String(done.stdout || "")
      }
      const said = out.trim()
      if (!said) return
      const message = JSON.parse(said).systemMessage
      if (typeof message !== "string") return
      if (tui) client.tui.showToast({ body: { message, variant: "warning" } }).catch(() => {})
      else process.stderr.write(message + "\\n")
    } catch {
      // convgit's problem, never OpenCode's
    }
  }
  return {
    "chat.message": async (input, output) => {
      run("chat.message", input?.sessionID, { prompt_id: output?.message?.id })
    },
    "tool.execute.after": async (input) => {
      if (TOOLS !== null && !TOOLS.includes(input?.tool)) return
      const path = input?.args?.filePath
      run("tool.execute.after", input?.sessionID, {
        tool_name: input?.tool,
        tool_use_id: input?.callID,
        path: typeof path === "string" ? path : undefined,
      })
    },
    event: async ({ event }) => {
      const info = event?.properties?.info
      if (event?.type === "session.created" && info?.parentID) subagents.add(info.id)
      if (event?.type === "session.idle") run("session.idle", event.properties?.sessionID, {})
    },
  }
}
"""


_FILE = OwnFile(
    agent=oc_live.AGENT,
    kind="plugin",
    marker=MARKER,
    scopes=oc_live.SCOPES,
    path=plugin_file,
    events=events,
    source=source,
)
install, uninstall, status = _FILE.install, _FILE.uninstall, _FILE.status

"""The live rig: the agents' real CLIs (installed by ``npm ci --prefix tools/agents``) against a
scripted model server on 127.0.0.1.

Fixtures (conftest.py), all per test:

* ``model_server`` (`server.ModelServer`): ``expect(*replies)`` queues replies; ``requests``,
  ``scripted`` (requests that got a reply, in order), ``side`` (all others), ``escapes``
  (requests aimed at another host), ``problems``. When the test ends it fails if the agent asked
  for more replies than scripted, left scripted replies unasked, or tried to reach another host.
* ``project`` (`GitRepo` from tests/workspace/gitrepo.py): a real repository whose git state
  must be byte-identical at the end; ``agent_home``: the HOME all agents of the test share.
* ``claude_code``, ``pi``, ``codex``, ``gemini``, ``opencode``, ``copilot``, ``qwen``
  (`runners.Agent`): ``run(prompt, *args, resume=None, cwd=None, env=None, timeout=None,
  check=True)`` runs one prompt with stdin closed and returns a `runners.Run`: ``session_id``,
  ``transcript`` (the session file the agent wrote), ``output`` (its final reply),
  ``returncode``, ``stdout``, ``stderr``, ``seconds``. ``resume`` is a session id for Claude
  Code (``claude -r``), Codex (``codex exec resume``), Gemini CLI (``--resume``), GitHub Copilot
  CLI (``--resume=ID``) and Qwen Code (``--resume``), a session file for pi (``--session``).
  ``env()`` is the
  environment the agent (and so its hooks) runs with, for running convgit as a hook would; the
  venv's bin folder leads its PATH.
  ``Codex(..., sandbox="danger-full-access")`` sets Codex's sandbox (the default,
  ``workspace-write``, keeps ``.git`` read-only for the model's commands).

A script is a list of `script.Reply`: ``say(text)``, ``call(name, input)``, or
``Reply(text, calls=(Call(...), ...))``. Each request that offers tools takes the next reply.

* Claude Code: ``call("Write", {"file_path": ABSOLUTE, "content": ...})``,
  ``call("Edit", {"file_path", "old_string", "new_string"})``, ``call("Bash", {"command": ...})``.
* pi: ``call("write", {"path": RELATIVE, "content": ...})``,
  ``call("edit", {"path", "edits": [{"oldText", "newText"}]})``, ``call("bash", {"command"})``.
* Gemini CLI: ``call("write_file", {"file_path": RELATIVE, "content"})``,
  ``call("replace", {"file_path", "old_string", "new_string"})``,
  ``call("run_shell_command", {"command"})``. It is looked for in tools/agents' node_modules,
  then in the folders ``AGENT_NODE_MODULES`` names.
* Codex: ``call("apply_patch", "*** Begin Patch\\n*** Add File: a.txt\\n+a\\n*** End Patch\\n")``
  (a string input is a custom tool call), ``call("exec_command", {"cmd": ...})``.
* GitHub Copilot CLI (a Claude model id): ``call("create", {"path": ABSOLUTE, "file_text"})``,
  ``call("edit", {"path", "old_str", "new_str"})``, ``call("bash", {"command"})``; with a GPT
  id, ``call("apply_patch", PATCH)`` (a custom tool over chat completions).
* Qwen Code: ``call("write_file", {"file_path": ABSOLUTE, "content"})``, ``call("read_file",
  {"file_path"})`` (its ``edit`` refuses a file the process has not read),
  ``call("edit", {"file_path", "old_string", "new_string"})``,
  ``call("run_shell_command", {"command"})``.

Each logged `server.Request` reads its conversation the same way for all three wire formats:
``prompts()``, ``replies()``, ``calls()`` and ``results()`` (`script.Item`s with ``call_id``).

What the pinned versions send in print mode: Claude Code only ``POST /v1/messages?beta=true``
(a ``system``-role message and ``<system-reminder>`` blocks sit among its ``messages``; on an
error it retries, with other tools, about six times), pi only ``POST /v1/chat/completions``, Codex
only ``POST /v1/responses`` (developer and ``<environment_context>`` messages open its
``input``). None sent a title, summary, token count or warm-up request; the server answers them
anyway.
"""

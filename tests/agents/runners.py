"""The agents' real CLIs, run in print mode against a `ModelServer`, one prompt per process.

Each runner owns a temporary HOME with the agent's configuration pointing at the server, and
builds the child's environment from scratch: no API key, proxy or setting of the developer's
leaks in. Every HTTP proxy variable names the server, so a request for any host but 127.0.0.1
lands there as an escape (`ModelServer.escapes`) instead of leaving the machine; each agent's
nonessential traffic is switched off by its own configuration as well.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests import gitenv
from tests.agents.script import JsonObject
from tests.agents.server import ModelServer
from tests.missing_tools import missing
from tests.polling import poll

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / "tools" / "agents" / "node_modules"
INSTALL = "npm ci --prefix tools/agents"
# more node_modules folders to look in after MODULES (os.pathsep between them): an agent
# installed elsewhere while tools/agents is shared
MORE_MODULES = "AGENT_NODE_MODULES"


@dataclass(frozen=True)
class Run:
    """One finished agent process. ``transcript`` is the session file the agent wrote (None if it
    wrote none); ``output`` the final reply as the agent printed it."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    session_id: str
    transcript: Path | None
    output: str


class Agent:
    """One agent CLI bound to a server, a working directory and a HOME of the test's own."""

    name = ""
    timeout = 60.0

    def __init__(self, server: ModelServer, cwd: Path, home: Path) -> None:
        self.server, self.cwd, self.home = server, cwd, home
        self.home.mkdir(parents=True, exist_ok=True)
        self.configure()

    def binary(self) -> list[str]:
        """The command that starts the agent; fails the test, naming the install, when absent."""
        raise NotImplementedError

    def configure(self) -> None:
        """Write the agent's configuration under ``home``."""

    def agent_env(self) -> dict[str, str]:
        return {}

    def command(self, prompt: str, args: list[str], resume: str | Path | None) -> list[str]:
        raise NotImplementedError

    def parse(self, stdout: str) -> tuple[str, str]:
        """(session id, final reply) from the agent's stdout."""
        raise NotImplementedError

    def transcript(self, session_id: str, resume: str | Path | None, cwd: Path) -> Path | None:
        """The session file the run wrote or appended to, if it exists."""
        raise NotImplementedError

    def _installed(self, pattern: str, what: str) -> Path:
        more = [Path(p) for p in os.environ.get(MORE_MODULES, "").split(os.pathsep) if p]
        found = next((f for m in (MODULES, *more) if (f := sorted(m.glob(pattern)))), [])
        if not found:
            missing(f"{what} (tools/agents/{MODULES.name}/{pattern})", INSTALL)
        return found[0]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The child's whole environment."""
        tmp = self.home / "tmp"
        tmp.mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k.startswith("GIT_")}
        gitenv.give_identity(self.home)  # the run's git identity, in the agent's own HOME
        if "PYTHONPATH" in os.environ:  # the convgit under test, for the hooks' `convgit`
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        if "CONVGIT_RECORDER" in os.environ:  # off in the tests, unless one turns it on
            env["CONVGIT_RECORDER"] = os.environ["CONVGIT_RECORDER"]
        path = os.environ.get("PATH", "/usr/bin:/bin")
        env.update(
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{path}",
            PYTHONPATH=str(ROOT),  # a `convgit` the agent's hooks start is this checkout's
            HOME=str(self.home),
            TMPDIR=str(tmp),
            LANG="C.UTF-8",
            TZ="UTC",
            TERM="dumb",
            NO_COLOR="1",
        )
        for name in ("http_proxy", "https_proxy", "all_proxy"):
            env[name] = env[name.upper()] = self.server.url
        env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"
        env.update(self.agent_env())
        env.update(extra or {})
        return env

    def run(
        self,
        prompt: str,
        *args: str,
        resume: str | Path | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> Run:
        """Run one prompt to the end with stdin closed. ``resume`` continues a session (an id,
        or for pi a session file); ``args`` go before the prompt. With ``check``, a non-zero
        exit, a missing transcript or a problem the server saw fails the test."""
        argv = self.command(prompt, list(args), resume)
        cwd = cwd or self.cwd
        start = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=self.env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        limit = timeout or self.timeout
        try:
            stdout, stderr = proc.communicate(timeout=limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            _stop(proc)
            stdout, stderr = proc.communicate()
            timed_out = True
        _kill_group(proc.pid)  # what the agent left in its group ends with it
        seconds = time.monotonic() - start
        session_id, output = self.parse(stdout)
        path = self.transcript(session_id, resume, cwd) if session_id else None
        run = Run(argv, proc.returncode, stdout, stderr, seconds, session_id, path, output)
        if timed_out:
            raise AssertionError(self._report(run, f"did not finish within {limit:.0f} s"))
        if check:
            if problems := self.server.problems:
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                raise AssertionError(
                    self._report(run, f"made the server fail: {problems[0]}{more}")
                )
            if run.returncode != 0:
                raise AssertionError(self._report(run, f"exited with status {run.returncode}"))
            if run.transcript is None or not run.transcript.is_file():
                raise AssertionError(self._report(run, "wrote no transcript"))
        return run

    def version(self) -> str:
        """The agent's own ``--version`` line."""
        proc = subprocess.run(
            [*self.binary(), "--version"],
            env=self.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return (proc.stdout or proc.stderr).strip()  # pi prints it on stderr

    def _report(self, run: Run, what: str) -> str:
        return (
            f"{self.name} {what}\n  command: {run.args}\n  stderr: {run.stderr[-2000:]}\n"
            f"  stdout: {run.stdout[-2000:]}"
        )


def _stop(proc: subprocess.Popen[str]) -> None:
    """End a run past its time: SIGTERM first, so that the agent can undo what it set up (Codex
    removes the mount points its sandbox made in the working tree), then SIGKILL for whatever of
    it is left, its group and every process it started (the agents run their tools' shells in
    sessions of their own, out of reach of the group)."""
    family = _descendants(proc.pid)
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(3)
    # its helpers may still be tidying up
    poll(lambda: not [pid for pid in family if _exists(pid)], 3)
    family = [pid for pid in family if _exists(pid)]
    for victim in family if proc.returncode is not None else [proc.pid, *family]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(victim, signal.SIGKILL)
    _kill_group(proc.pid)


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _descendants(pid: int) -> list[int]:
    listing = subprocess.run(
        ["ps", "-A", "-o", "pid=", "-o", "ppid="], capture_output=True, text=True
    )
    children: dict[int, list[int]] = {}
    for line in listing.stdout.splitlines():
        child, parent = (int(n) for n in line.split())
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _json_lines(text: str) -> list[JsonObject]:
    found = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def claude_project_dir(home: Path, cwd: Path) -> Path:
    """Where Claude Code keeps the transcripts of a working directory: every character that is
    not a letter or digit becomes ``-``."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


class ClaudeCode(Agent):
    """``claude -p PROMPT --output-format json`` with edits accepted and Bash allowed (root may
    not bypass permissions). ``resume`` is a session id: ``claude -r ID -p PROMPT``."""

    name = "Claude Code"

    def binary(self) -> list[str]:
        # the platform package's binary: what the skipped postinstall would copy into bin/
        return [str(self._installed("@anthropic-ai/claude-code-*/claude", "Claude Code"))]

    def agent_env(self) -> dict[str, str]:
        return {
            "ANTHROPIC_BASE_URL": self.server.url,
            "ANTHROPIC_API_KEY": "scripted-test-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

    def command(self, prompt: str, args: list[str], resume: str | Path | None) -> list[str]:
        flags = ["--output-format", "json", "--permission-mode", "acceptEdits"]
        flags += ["--allowedTools", "Bash"]
        resuming = ["-r", str(resume)] if resume else []
        return [*self.binary(), *flags, *resuming, *args, "-p", prompt]

    def parse(self, stdout: str) -> tuple[str, str]:
        for record in reversed(_json_lines(stdout)):
            if record.get("type") == "result":
                return str(record.get("session_id", "")), str(record.get("result", ""))
        return "", ""

    def transcript(self, session_id: str, resume: str | Path | None, cwd: Path) -> Path | None:
        path = claude_project_dir(self.home, cwd.resolve()) / f"{session_id}.jsonl"
        return path if path.is_file() else None


class Pi(Agent):
    """``pi --provider scripted --model scripted --mode json -p PROMPT``, the provider speaking
    OpenAI chat completions with retries off. ``resume`` is a session file: ``--session FILE``."""

    name = "pi"

    def binary(self) -> list[str]:
        cli = self._installed("@mariozechner/pi-coding-agent/dist/cli.js", "pi")
        return ["node", str(cli)]

    @property
    def agent_dir(self) -> Path:
        return self.home / ".pi" / "agent"

    def configure(self) -> None:
        self.agent_dir.mkdir(parents=True, exist_ok=True)
        provider = {
            "baseUrl": f"{self.server.url}/v1",
            "api": "openai-completions",
            "apiKey": "scripted-test-key",
            "models": [{"id": "scripted"}],
        }
        models = {"providers": {"scripted": provider}}
        (self.agent_dir / "models.json").write_text(json.dumps(models, indent=1))
        settings = {
            "defaultProvider": "scripted",
            "defaultModel": "scripted",
            "retry": {"enabled": False, "provider": {"maxRetries": 0}},
        }
        (self.agent_dir / "settings.json").write_text(json.dumps(settings, indent=1))

    def agent_env(self) -> dict[str, str]:
        return {"PI_OFFLINE": "1"}

    def command(self, prompt: str, args: list[str], resume: str | Path | None) -> list[str]:
        flags = ["--provider", "scripted", "--model", "scripted", "--mode", "json"]
        resuming = ["--session", str(resume)] if resume else []
        return [*self.binary(), *flags, *resuming, *args, "-p", prompt]

    def parse(self, stdout: str) -> tuple[str, str]:
        session_id, output = "", ""
        for event in _json_lines(stdout):
            if event.get("type") == "session":
                session_id = str(event.get("id", ""))
            message = event.get("message") or {}
            if event.get("type") == "message_end" and message.get("role") == "assistant":
                blocks = message.get("content") or []
                output = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        return session_id, output

    def transcript(self, session_id: str, resume: str | Path | None, cwd: Path) -> Path | None:
        if resume:
            return Path(resume) if Path(resume).is_file() else None
        found = sorted((self.agent_dir / "sessions").glob(f"*/*_{session_id}.jsonl"))
        return found[0] if found else None


class Codex(Agent):
    """``codex exec --json PROMPT`` with a ``scripted`` provider (Responses API, no retries),
    plugins and analytics off. ``resume`` is a thread id: ``codex exec resume --json ID PROMPT``.
    ``sandbox`` is Codex's ``sandbox_mode``."""

    name = "Codex"

    def __init__(
        self, server: ModelServer, cwd: Path, home: Path, *, sandbox: str = "workspace-write"
    ) -> None:
        self.sandbox = sandbox
        super().__init__(server, cwd, home)

    def binary(self) -> list[str]:
        self._installed("@openai/codex-*/vendor/*/bin/codex", "Codex's platform binary")
        return [str(self._installed("@openai/codex/bin/codex.js", "Codex"))]

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def configure(self) -> None:
        self.codex_home.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(
            f"""model = "gpt-5.5"
model_provider = "scripted"
sandbox_mode = "{self.sandbox}"
check_for_update_on_startup = false
analytics.enabled = false

[features]
unbounded_connection_retries = false
plugins = false

[sandbox_workspace_write]
exclude_slash_tmp = true


[model_providers.scripted]
name = "scripted"
base_url = "{self.server.url}/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""
        )

    def agent_env(self) -> dict[str, str]:
        return {"CODEX_HOME": str(self.codex_home)}

    def command(self, prompt: str, args: list[str], resume: str | Path | None) -> list[str]:
        resuming = ["resume"] if resume else []
        ids = [str(resume)] if resume else []
        return [*self.binary(), "exec", *resuming, "--json", *args, *ids, prompt]

    def parse(self, stdout: str) -> tuple[str, str]:
        session_id, output = "", ""
        for event in _json_lines(stdout):
            item = event.get("item")
            if event.get("type") == "thread.started":
                session_id = str(event.get("thread_id", ""))
            elif isinstance(item, dict) and item.get("type") == "agent_message":
                output = str(item.get("text", ""))
        return session_id, output

    def transcript(self, session_id: str, resume: str | Path | None, cwd: Path) -> Path | None:
        found = sorted((self.codex_home / "sessions").glob(f"*/*/*/rollout-*-{session_id}.jsonl"))
        return found[0] if found else None


class Gemini(Agent):
    """``gemini --approval-mode yolo -o json -p PROMPT`` (yolo: headless runs offer the tools
    that write only then) against the server as the Gemini API (``GOOGLE_GEMINI_BASE_URL``),
    with the settings that keep it offline and its session files where they are: an API key's
    auth, no usage statistics or telemetry, no session retention (its cleanup deletes session
    files), one attempt per request, a fixed model (no router request). ``resume`` is a
    session id: ``--resume ID``."""

    name = "Gemini CLI"

    def binary(self) -> list[str]:
        return ["node", str(self._installed("@google/gemini-cli/bundle/gemini.js", "Gemini CLI"))]

    @property
    def gemini_dir(self) -> Path:
        return self.home / ".gemini"

    def settings(self) -> JsonObject:
        general = {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "sessionRetention": {"enabled": False},
            "maxAttempts": 1,
            "retryFetchErrors": False,
        }
        return {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": general,
            "model": {"name": "gemini-2.5-pro"},
        }

    def configure(self) -> None:
        self.gemini_dir.mkdir(parents=True, exist_ok=True)
        (self.gemini_dir / "settings.json").write_text(json.dumps(self.settings(), indent=1))

    def agent_env(self) -> dict[str, str]:
        return {
            "GEMINI_API_KEY": "scripted-test-key",
            "GOOGLE_GEMINI_BASE_URL": self.server.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }

    def command(self, prompt: str, args: list[str], resume: str | Path | None) -> list[str]:
        flags = ["--approval-mode", "yolo", "-o", "json"]
        resuming = ["--resume", str(resume)] if resume else []
        return [*self.binary(), *flags, *resuming, *args, "-p", prompt]

    def parse(self, stdout: str) -> tuple[str, str]:
        for record in reversed(_json_lines(stdout)):
            if "session_id" in record:
                return str(record["session_id"]), str(record.get("response", ""))
        try:
            whole = json.loads(stdout)
        except ValueError:
            return "", ""
        if not isinstance(whole, dict):
            return "", ""
        return str(whole.get("session_id", "")), str(whole.get("response", ""))

    def sessions(self, session_id: str) -> list[Path]:
        """The chat files holding session ``session_id`` (a resume's stray copy among them)."""
        found = []
        for path in sorted(self.gemini_dir.glob("tmp/*/chats/session-*.json*")):
            first = path.read_bytes().split(b"\n", 1)[0]
            with contextlib.suppress(ValueError):
                if json.loads(first).get("sessionId") == session_id:
                    found.append(path)
        return found

    def transcript(self, session_id: str, resume: str | Path | None, cwd: Path) -> Path | None:
        """The chat file of the session: of those holding it, the one with the most in it."""
        found = self.sessions(session_id)
        return max(found, key=lambda p: p.stat().st_size) if found else None


# what OpenCode's config folders need so that it does not npm-install its plugin package into
# them at start (offline: about 75 s before any plugin loads); convgit's plugin needs no package
OPENCODE_PLUGIN_PACKAGE = {"@opencode-ai/plugin": "1.18.33"}


def seed_opencode_config_dir(folder: Path) -> None:
    """Mark ``folder`` (an OpenCode config folder: ``~/.config/opencode``, a project's
    ``.opencode``) as having its plugin package, as OpenCode's own install leaves it (its
    ``.gitignore`` too), so that OpenCode skips the install."""
    (folder / "node_modules").mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"dependencies": OPENCODE_PLUGIN_PACKAGE}))
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": OPENCODE_PLUGIN_PACKAGE}}}
    (folder / "package-lock.json").write_text(json.dumps(lock))
    (folder / ".gitignore").write_text(
        "node_modules\npackage.json\npackage-lock.json\n.gitignore\n"
    )


class OpenCode(Agent):
    """``opencode run --format json WORD...`` with a ``fake`` provider speaking OpenAI chat
    completions (``@ai-sdk/openai-compatible``, bundled), edits, the shell and writes anywhere
    allowed, the models catalog and auto-update off, a title given (no title request), the
    config folders (the user's, the project's ``.opencode``) seeded as OpenCode's own install of
    its plugin package leaves them (offline, it would wait about 75 s at every start). The
    prompt goes as words (OpenCode quotes an argument with a space). ``PWD`` is the working
    directory (OpenCode takes its project from it). ``resume`` is a session id:
    ``--session ID``. Its sessions are rows of a SQLite database: ``transcript`` is that."""

    name = "OpenCode"

    def binary(self) -> list[str]:
        # the platform package's binary: what the skipped postinstall would link into bin/
        return [str(self._installed("opencode-*/bin/opencode", "OpenCode"))]

    @property
    def config_dir(self) -> Path:
        return self.home / ".config" / "opencode"

    @property
    def database(self) -> Path:
        return self.home / ".local" / "share" / "opencode" / "opencode.db"

    def configure(self) -> None:
        seed_opencode_config_dir(self.config_dir)
        seed_opencode_config_dir(self.cwd / ".opencode")  # where a project's plugins go
        provider = {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted",
            "options": {"baseURL": f"{self.server.url}/v1", "apiKey": "scripted-test-key"},
            "models": {"scripted": {"name": "Scripted"}},
        }
        config = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {"fake": provider},
            "model": "fake/scripted",
            "small_model": "fake/scripted",
            "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"},
            "autoupdate": False,
            "share": "disabled",
        }
        (self.config_dir / "opencode.json").write_text(json.dumps(config, indent=1))

    def agent_env(self) -> dict[str, str]:
        return {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"}

    def run(
        self,
        prompt: str,
        *args: str,
        resume: str | Path | None = None,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> Run:
        where = {"PWD": str(cwd or self.cwd), **(env or {})}
        return super().run(
            prompt, *args, resume=resume, cwd=cwd, env=where, timeout=timeout, check=check
        )

    def command(self, prompt: str, args: list[str], resume: str | Path | None) -> list[str]:
        resuming = ["--session", str(resume)] if resume else ["--title", "scripted"]
        return [*self.binary(), "run", "--format", "json", *resuming, *args, *prompt.split()]

    def parse(self, stdout: str) -> tuple[str, str]:
        session_id, output = "", ""
        for event in _json_lines(stdout):
            session_id = str(event.get("sessionID") or session_id)
            part = event.get("part")
            if event.get("type") == "text" and isinstance(part, dict):
                output = str(part.get("text", ""))
        return session_id, output

    def transcript(self, session_id: str, resume: str | Path | None, cwd: Path) -> Path | None:
        return self.database if self.database.is_file() else None


class Copilot(Agent):
    """``copilot --output-format json -p PROMPT`` against the server as a provider of the user's
    own (``COPILOT_PROVIDER_BASE_URL``: OpenAI chat completions, no GitHub sign-in), offline
    (``COPILOT_OFFLINE``: no telemetry, update or GitHub service), every tool allowed and the
    folder trusted (``COPILOT_ALLOW_ALL=true``: the project's ``.github/hooks`` load in print
    mode only in a trusted folder). The model is a Claude id (the CLI then offers ``create`` and
    ``edit`` as function tools; a GPT id gets ``apply_patch`` as a custom tool instead). The CLI
    unpacks its package into ``$XDG_CACHE_HOME/copilot`` at its first start (235 MB, about 2 s):
    ``cache`` is one folder for the tests of a run. ``resume`` is a session id:
    ``--resume=ID``."""

    name = "GitHub Copilot CLI"
    model = "claude-sonnet-4.6"

    def __init__(
        self, server: ModelServer, cwd: Path, home: Path, *, cache: Path | None = None
    ) -> None:
        self.cache = cache if cache is not None else home / ".cache"
        super().__init__(server, cwd, home)

    def binary(self) -> list[str]:
        # the platform package's binary: what the npm loader would start
        return [str(self._installed("@github/copilot-*/copilot", "GitHub Copilot CLI"))]

    @property
    def copilot_home(self) -> Path:
        return self.home / ".copilot"

    def agent_env(self) -> dict[str, str]:
        return {
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": f"{self.server.url}/v1",
            "COPILOT_PROVIDER_API_KEY": "scripted-test-key",
            "COPILOT_MODEL": self.model,
            "COPILOT_ALLOW_ALL": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "XDG_CACHE_HOME": str(self.cache),
        }

    def command(self, prompt: str, args: list[str], resume: str | Path | None) -> list[str]:
        resuming = [f"--resume={resume}"] if resume else []
        flags = ["--output-format", "json", "--allow-all"]  # paths outside the folder too
        return [*self.binary(), *flags, *resuming, *args, "-p", prompt]

    def parse(self, stdout: str) -> tuple[str, str]:
        session_id, output = "", ""
        for event in _json_lines(stdout):
            data = event.get("data") if isinstance(event.get("data"), dict) else {}
            if event.get("type") == "result":
                session_id = str(event.get("sessionId", ""))
            elif event.get("type") == "assistant.message" and data.get("content"):
                output = str(data["content"])
        return session_id, output

    def transcript(self, session_id: str, resume: str | Path | None, cwd: Path) -> Path | None:
        path = self.copilot_home / "session-state" / session_id / "events.jsonl"
        return path if path.is_file() else None


class Qwen(Agent):
    """``qwen --auth-type openai --approval-mode yolo -o json PROMPT`` against the server as an
    OpenAI-compatible provider (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_MODEL``), with
    the settings that keep it offline and quiet: no usage statistics or telemetry (each start
    would reach Alibaba's RUM service), no auto-update, no background memory extraction or
    consolidation, no follow-up suggestions or tool-use summaries (each a model request of its
    own, with tools: they would take scripted replies), no retries. Yolo: print mode runs the
    tools that write only so. The folder needs no trust (``security.folderTrust`` is off unless
    enabled). ``resume`` is a session id: ``--resume ID``; with ``output = "text"`` a run names
    no session (run it with ``check=False``)."""

    name = "Qwen Code"
    output = "json"  # ``text``: the final reply alone, and what Qwen tells the user on stderr

    def binary(self) -> list[str]:
        return ["node", str(self._installed("@qwen-code/qwen-code/cli.js", "Qwen Code"))]

    @property
    def qwen_dir(self) -> Path:
        return self.home / ".qwen"

    def configure(self) -> None:
        self.qwen_dir.mkdir(parents=True, exist_ok=True)
        settings = {
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False},
            "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
            "ui": {"enableFollowupSuggestions": False},
            "experimental": {"emitToolUseSummaries": False},
            "model": {"generationConfig": {"maxRetries": 0}},
            # its bundled rg is made executable by an install script, which tools/agents does
            # not run (.npmrc): Qwen then warns on stderr at a search, beside convgit's words
            "tools": {"useRipgrep": False},
        }
        (self.qwen_dir / "settings.json").write_text(json.dumps(settings, indent=1))

    def agent_env(self) -> dict[str, str]:
        return {
            "OPENAI_BASE_URL": f"{self.server.url}/v1",
            "OPENAI_API_KEY": "scripted-test-key",
            "OPENAI_MODEL": "scripted",
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
            # in one process: the CLI starts itself again otherwise, about 6 s more on a loaded
            # machine
            "QWEN_CODE_NO_RELAUNCH": "true",
        }

    def command(self, prompt: str, args: list[str], resume: str | Path | None) -> list[str]:
        flags = ["--auth-type", "openai", "--approval-mode", "yolo", "-o", self.output]
        resuming = ["--resume", str(resume)] if resume else []
        return [*self.binary(), *flags, *resuming, *args, prompt]

    def parse(self, stdout: str) -> tuple[str, str]:
        if self.output == "text":
            return "", stdout.strip()
        try:
            found = json.loads(stdout)
        except ValueError:
            found = _json_lines(stdout)
        session_id, output = "", ""
        for event in found if isinstance(found, list) else []:
            if not isinstance(event, dict):
                continue
            session_id = str(event.get("session_id") or session_id)
            if event.get("type") == "result":
                output = str(event.get("result", ""))
        return session_id, output

    def chats(self, cwd: Path) -> Path:
        """Where Qwen keeps the chat files of a working directory: every character that is not a
        letter or digit becomes ``-``."""
        return self.qwen_dir / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd)) / "chats"

    def transcript(self, session_id: str, resume: str | Path | None, cwd: Path) -> Path | None:
        path = self.chats(cwd.resolve()) / f"{session_id}.jsonl"
        return path if path.is_file() else None

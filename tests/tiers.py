"""The tiers of the test suite, one pytest marker each, given to every test when it is collected
(a pytest plugin, loaded by tests/conftest.py) and checked while it runs:

* ``unit``: pure, in this process, starting no process (tests/unit/);
* ``session``: in this process on real files and real git (git itself may run);
* ``cli``: runs the command line, ``python -m convgit`` (tests/clirun.py);
* ``live``: runs an agent's real CLI (tests/agents/runners.py);
* ``slow``: the randomized and long tests, run apart with a fixed seed (written on the test).

Each test has exactly one, so ``pytest -m unit`` (or ``session``, ``cli``, ``live``, ``slow``)
runs one tier alone and the five together are the whole suite. A test's tier is found from what
it can reach: its code, the fixtures it uses and the helpers of tests/ they call (followed
through their code); a tier written on a test or its module wins. While a test runs, every
process started from this one is seen (an audit hook): a test that started more than its tier
says (a ``unit`` test any process, a ``session`` test the CLI or an agent, a ``cli`` test an
agent) fails and says which, so a tier is never a guess."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import sys
import types
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
UNIT = TESTS / "unit"
ROOT = TESTS.parent
TIERS = ("unit", "session", "cli", "live", "slow")  # registered in pyproject.toml
ORDER = ["unit", "session", "cli", "live"]  # each one may do what the ones before it do
CLI_MODULE = "tests.clirun"  # the tests' one CLI runner
CLI_WORDS = frozenset({"-m", "convgit"})  # or the command written out
AGENT_MODULE = "tests.agents.runners"  # the agents' real CLIs
PROCESSES = ("subprocess", "multiprocessing", "pty", "pexpect", "ptyprocess", "playwright")
OS_PROCESSES = frozenset({"system", "fork", "forkpty", "posix_spawn", "execv", "execvp", "popen"})
AGENT_FIXTURES = frozenset({"claude_code", "pi", "codex", "gemini", "opencode", "copilot", "qwen"})


# -- finding a test's tier from what it can reach ----------------------------------------------


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _functions(obj: object) -> Iterator[Any]:
    """The functions whose code ``obj`` runs: itself, or a class's methods and properties."""
    if isinstance(obj, (types.FunctionType, types.MethodType)):
        yield inspect.unwrap(obj)
    elif isinstance(obj, type):
        for member in vars(obj).values():
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if isinstance(member, property):
                member = member.fget
            if isinstance(member, types.FunctionType):
                yield inspect.unwrap(member)


class Reach:
    """What the code of tests/ reaches, followed through the helpers of tests/ (cached)."""

    def __init__(self) -> None:
        self._seen: dict[object, frozenset[str]] = {}

    def of(self, obj: object) -> frozenset[str]:
        """The kinds of thing ``obj`` can do: "cli", "agent", "process"."""
        key = obj
        if key in self._seen:
            return self._seen[key]
        self._seen[key] = frozenset()  # a cycle adds nothing
        found: set[str] = set()
        for function in _functions(obj):
            found |= self._function(function)
        self._seen[key] = frozenset(found)
        return self._seen[key]

    def _function(self, function: Any) -> set[str]:
        found: set[str] = set()
        module = getattr(function, "__module__", "") or ""
        if module == CLI_MODULE:
            found.add("cli")
        if module == AGENT_MODULE:
            found.add("agent")
        code = getattr(function, "__code__", None)
        if code is None:
            return found
        codes = list(_codes(code))
        if {c for code in codes for c in code.co_consts if isinstance(c, str)} >= CLI_WORDS:
            found.add("cli")  # [sys.executable, "-m", "convgit", ...] written out
        names = {name for c in codes for name in c.co_names}
        space = getattr(function, "__globals__", {})
        for name in names:
            if name in space:
                found |= self._value(space[name], names)
            elif name.split(".")[0] == "tests":  # `from tests.x import y` inside the function
                with contextlib.suppress(ImportError):
                    found |= self._value(importlib.import_module(name), names)
        return found

    def _value(self, value: object, names: set[str]) -> set[str]:
        if isinstance(value, types.ModuleType):
            if value.__name__.split(".")[0] in PROCESSES:
                return {"process"}
            if value is os and names & OS_PROCESSES:
                return {"process"}
            if value.__name__ == CLI_MODULE:
                return {"cli"}
            if value.__name__ == AGENT_MODULE:
                return {"agent"}
            if value.__name__.split(".")[0] == "tests":  # module.helper: follow the names used
                found: set[str] = set()
                for name in names & set(vars(value)):
                    found |= self._value(vars(value)[name], set())
                return found
            return set()
        if isinstance(value, dict):
            value = [*value.keys(), *value.values()]
        if isinstance(value, (list, tuple, set, frozenset)):  # a table of runners, of helpers
            words = {word for word in value if isinstance(word, str)}
            found = {"cli"} if words >= CLI_WORDS else set()
            for element in value:
                found |= self._value(element, set())
            return found
        owner = getattr(value, "__module__", None) or ""
        if owner.split(".")[0] in PROCESSES:
            return {"process"}
        if owner == CLI_MODULE:
            return {"cli"}
        if owner == AGENT_MODULE:
            return {"agent"}
        if owner.startswith("tests.") and isinstance(value, (type, types.FunctionType)):
            return set(self.of(value))
        return set()


def _fixtures(item: pytest.Item) -> Iterable[Any]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [d.func for defs in info.name2fixturedefs.values() for d in defs]


def found_tier(item: pytest.Item, reach: Reach) -> str:
    """The tier of a test without one written on it."""
    function = getattr(item, "function", None)
    kinds: set[str] = set(reach.of(function)) if function is not None else set()
    for fixture in _fixtures(item):
        if getattr(fixture, "__module__", "").startswith("tests."):
            kinds |= reach.of(fixture)
        elif fixture.__name__ in ("pytester", "testdir"):
            kinds.add("process")
    if "agent" in kinds or AGENT_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "live"
    if "cli" in kinds:
        return "cli"
    if kinds or not _in_unit(Path(str(item.path)).resolve()):
        return "session"
    return "unit"


# -- checking it while the test runs ------------------------------------------------------------


def _agent_folders() -> list[str]:
    folders = [ROOT / "tools" / "agents" / "node_modules"]
    folders += [Path(p) for p in os.environ.get("AGENT_NODE_MODULES", "").split(os.pathsep) if p]
    return sorted({str(f) for f in folders} | {str(f.resolve()) for f in folders})


def started_kind(argv: list[str]) -> str:
    """What a started process is: "live" (an agent's CLI), "cli" (convgit's), else "session"."""
    words = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in argv]
    if any(w.startswith(folder) for w in words for folder in _agent_folders()):
        return "live"
    for i, word in enumerate(words[:-1]):
        if word == "-m" and words[i + 1] == "convgit":
            return "cli"
    if words and Path(words[0]).name == "convgit":
        return "cli"
    return "session"


class Watch:
    """The processes started from this one while a test runs (an audit hook: it sees
    ``subprocess``, ``os.system``, ``os.fork`` and the rest, whoever calls them)."""

    EVENTS = frozenset(
        {"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.fork", "os.forkpty"}
    )

    def __init__(self) -> None:
        self.started: list[tuple[str, list[str]]] | None = None
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self.started is None or event not in self.EVENTS:
            return
        if event == "subprocess.Popen":
            argv = args[1] if isinstance(args[1], (list, tuple)) else [args[1]]
            self.started.append((event, list(argv)))
        elif event == "os.system":
            self.started.append((event, [str(args[0])]))
        elif event in ("os.posix_spawn", "os.exec"):
            self.started.append((event, list(args[1])))
        else:
            self.started.append((event, []))


WATCH = pytest.StashKey[Watch]()


def tier_of(item: pytest.Item) -> str | None:
    tiers = [m.name for m in item.iter_markers() if m.name in TIERS]
    return tiers[0] if tiers else None


def beyond(tier: str, started: list[tuple[str, list[str]]]) -> str | None:
    """Why processes a test of ``tier`` started are more than its tier allows, or None."""
    if tier == "slow" or not started:
        return None
    if tier == "unit":
        event, argv = started[0]
        return f"a unit test started a process ({event}: {' '.join(map(str, argv))[:200]})"
    for _event, argv in started:
        kind = started_kind(argv) if argv else "session"
        if ORDER.index(kind) > ORDER.index(tier):
            shown = " ".join(map(str, argv))[:200]
            return f"a {tier} test started what its tier does not ({kind}: {shown})"
    return None


# -- the plugin ---------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.stash[WATCH] = Watch()


def _in_unit(path: Path) -> bool:
    return path == UNIT or UNIT in path.parents


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m unit`` reads only tests/unit/, where the unit tier lives alone: a run of seconds,
    not a minute of importing every test module to keep a tenth of them."""
    if config.option.markexpr.strip() != "unit":
        return None
    path = collection_path.resolve()
    if _in_unit(path) or path in UNIT.parents or TESTS not in path.parents:
        return None
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reach = Reach()
    for item in items:
        written = [m.name for m in item.iter_markers() if m.name in TIERS]
        if "unit" in written and not _in_unit(Path(str(item.path)).resolve()):
            raise pytest.UsageError(f"{item.nodeid}: a unit test lives in tests/unit/")
        if "slow" in written:
            continue  # the slow tier is written on the test, and it is its only one
        if written:
            item.add_marker(written[0])  # own marker, first in iter_markers order
            continue
        item.add_marker(found_tier(item, reach))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    item.config.stash[WATCH].started = []
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    watch = item.config.stash[WATCH]
    try:
        result = yield
    finally:
        started, watch.started = watch.started or [], None
    tier = tier_of(item)
    if tier is not None and (why := beyond(tier, started)):
        pytest.fail(f"{why}: its tier is wrong (tests/tiers.py)", pytrace=False)
    return result

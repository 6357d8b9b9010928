"""tools/agents' lock is one ``npm ci`` accepts on any machine: every package the lock's
packages name among their dependencies (optional ones too: the platform binaries npm leaves out
on this machine's platform) has an entry of its own. ``npm install`` on a registry that serves
one platform's packages writes a lock without the others, and ``npm ci`` then refuses it."""

from __future__ import annotations

import json
from pathlib import Path

LOCK = Path(__file__).resolve().parents[2] / "tools" / "agents" / "package-lock.json"


def _entry_for(packages: dict[str, dict[str, object]], holder: str, name: str) -> bool:
    """Whether npm's resolution from ``holder`` finds ``name``: in the holder's own
    node_modules or in any node_modules above it."""
    place = holder
    while True:
        if f"{place}/node_modules/{name}".lstrip("/") in packages:
            return True
        if not place:
            return False
        cut = place.rfind("/node_modules/")
        place = place[:cut] if cut >= 0 else ""


def test_every_dependency_the_lock_names_has_an_entry_npm_ci_can_check() -> None:
    packages: dict[str, dict[str, object]] = json.loads(LOCK.read_text())["packages"]
    missing = []
    for holder, entry in packages.items():
        for kind in ("dependencies", "optionalDependencies"):
            named = entry.get(kind) or {}
            assert isinstance(named, dict)
            for name in named:
                if not _entry_for(packages, holder, name):
                    missing.append(f"{name} (named by {holder or 'the root'})")
    assert missing == [], "npm ci would refuse the lock, missing: " + ", ".join(missing)

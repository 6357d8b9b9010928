"""Context exporters: the replayed context in the shape a provider's API takes."""

from __future__ import annotations

from typing import Any

from convgit.errors import UsageError
from convgit.tree import Context


def export(ctx: Context, format: str) -> dict[str, Any]:
    if format == "openai":
        from convgit.formats.openai import to_openai

        return to_openai(ctx)
    if format == "anthropic":
        from convgit.formats.anthropic import to_anthropic

        return to_anthropic(ctx)
    raise UsageError(f"Unknown format '{format}': use openai, anthropic or text.")

"""Context exporters: the replayed context as the request body a provider's API takes, and the
list of what that body leaves out (never left out silently)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from convgit.base.errors import UsageError

if TYPE_CHECKING:  # an importer (every hook event) never replays
    from convgit.conversation.replay import Context

FORMATS = ("openai", "anthropic")


def export(
    ctx: Context, format: str, *, max_tokens: int | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(body, dropped)``: the request body for ``format`` and ``replay.dropped`` items."""
    if format == "openai":
        from convgit.providers.openai import to_openai

        return to_openai(ctx, max_tokens=max_tokens)
    if format == "anthropic":
        from convgit.providers.anthropic import to_anthropic

        return to_anthropic(ctx, max_tokens=max_tokens)
    raise UsageError(f"Unknown format '{format}': use openai, anthropic or text.")

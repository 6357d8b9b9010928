"""The kinds of line Claude Code writes (a line's ``type``), and the label under which the
import's report counts a line it keeps without interpreting it."""

from __future__ import annotations

from typing import Any

from convgit.agents.claude_code import blocks

# a line of any other kind is kept too, and noted as unknown
KNOWN = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "file-history-delta",  # 2.1.220+
        "queue-operation",
        "pr-link",
        "custom-title",
        "agent-name",
        "ai-title",
        "last-prompt",
        "permission-mode",
        "progress",
        "attachment",
        "system",
        "assistant",
        "user",
        # written by 2.1.3xx between the lines above: request and cost bookkeeping
        "mode",
        "atis-latch",
        "tools-used",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "cost-state",
    }
)


def kind_of(value: dict[str, Any]) -> str:
    """The line's ``type``, or ``(no type)``."""
    kind = value.get("type")
    return kind if isinstance(kind, str) else "(no type)"


def kept_label(value: dict[str, Any]) -> str:
    """``<type>/<subtype>`` for a line kept whole (a system line's subtype, the type of a
    progress line's ``data`` or of an ``attachment``), or its type when it has none."""
    label = kind_of(value)
    sub = value.get("subtype") or blocks.field_of(value, "data", "type")
    sub = sub or blocks.field_of(value, "attachment", "type")
    return f"{label}/{sub}" if isinstance(sub, str) else label

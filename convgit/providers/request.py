"""What both request bodies share: the placeholders, the thinking-level table, and the report of
what a body leaves out.

Thinking levels: ``off``/``none`` (or 0) turn thinking off; ``minimal``, ``low``, ``medium``,
``high``, ``xhigh`` and ``max`` are efforts; a whole number of 1024 or more is a token budget.
OpenAI takes an effort as ``reasoning_effort`` (off is ``"none"``). Anthropic takes an effort as
adaptive thinking with ``output_config.effort`` (``minimal`` becomes ``low``, the least it has),
except that a Claude model before 4.6, which knows budgets only, gets the budget ``BUDGETS``
gives the effort; a budget as ``thinking.budget_tokens``; off by leaving ``thinking`` out (it is
opt-in on every model). A level a provider has no setting for is reported, not guessed.
"""

from __future__ import annotations

from typing import Any

from convgit.conversation.replay import dropped

# the APIs refuse a body that starts with the assistant, and empty text blocks
START_PLACEHOLDER = "(The conversation begins with the assistant's message that follows.)"
NO_OUTPUT = "(no output)"
OFF = ("off", "none")
EFFORTS = ("minimal", "low", "medium", "high", "xhigh", "max")
MIN_BUDGET = 1024
BUDGETS = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 24576,
    "max": 32768,
}


class LeftOut:
    """What one body leaves out, as ``replay.dropped`` items."""

    def __init__(self, provider: str, earlier: list[dict[str, Any]]) -> None:
        self.provider = provider
        self.items: list[dict[str, Any]] = list(earlier)

    def drop(self, message: dict[str, Any] | None, what: str, why: str) -> None:
        self.items.append(dropped(None if message is None else message.get("id"), what, why))

    def blank(self, message: dict[str, Any]) -> None:
        self.drop(message, "blank text", "the APIs refuse empty or whitespace-only text")

    def empty(self, message: dict[str, Any]) -> None:
        self.drop(
            message,
            f"{message['role']} message",
            f"nothing in it can be sent to {self.provider}, and the API refuses an empty turn",
        )


def blank(text: Any) -> bool:
    return not isinstance(text, str) or not text.strip()


def level(value: Any) -> str | int | None:
    """A recorded thinking level as ``"off"``, an effort, a budget (int), or None (unknown)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "off" if value == 0 else value if value >= MIN_BUDGET else None
    if isinstance(value, str):
        word = value.strip().lower()
        if word in OFF:
            return "off"
        if word in EFFORTS:
            return word
    return None


def model_for(ctx_model: dict[str, Any] | None, provider: str, report: LeftOut) -> str | None:
    """The recorded model, when it is one of ``provider``'s; otherwise reported."""
    if ctx_model is None:
        return None
    if ctx_model.get("provider") == provider:
        return str(ctx_model["model"])
    report.drop(
        None,
        f"model {ctx_model.get('provider')}/{ctx_model.get('model')}",
        f"it is not an {report.provider} model; the caller chooses one",
    )
    return None

"""``guarded(runnable, guard, ...)``: serve only what the guard lets through.

The wrapper is a ``Runnable`` that invokes the wrapped one with the guard among its callbacks and a
fresh top-level ``run_id``, reads the guard's audit of that run, and when the final answer is not
grounded serves, instead of it:

- ``strip``: the answer without the sentences that hold unsupported, contradicted or unjudged claims,
  followed by a note saying so; when no supported claim would remain, the refusal;
- ``refuse``: the refusal text (``refusal=``);
- ``fallback``: what ``fallback(input, audit)`` returns (``audit`` is None when the audit failed);
  a string is put where the answer was, so the caller gets the chain's own output shape (a state
  dict's last message, an ``AIMessage``), and any other value is served as it is.

Fail closed: a run the guard could not audit, or an :class:`UngroundedAnswerError` from a guard in
``raise`` mode, is treated as ungrounded (``strip`` then refuses, having nothing it can vouch for).
A run that produced no answer at all (nothing to judge) is passed through.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config

from auditor.errors import AuditorError
from auditor.results import AnswerOut
from auditor_langchain.guard import (
    DEFAULT_REFUSAL,
    STRIP_NOTE,
    GroundednessGuard,
    UngroundedAnswerError,
    final_text,
    replace_text,
    strip_unsupported,
)

WrapMode = Literal["strip", "refuse", "fallback"]
Fallback = Callable[[Any, AnswerOut | None], Any]


def _with_guard(config: RunnableConfig, guard: GroundednessGuard, run_id: uuid.UUID) -> RunnableConfig:
    callbacks = config.get("callbacks")
    if callbacks is None:
        merged: Any = [guard]
    elif isinstance(callbacks, list):
        merged = callbacks if guard in callbacks else [*callbacks, guard]
    elif isinstance(callbacks, BaseCallbackManager):
        merged = callbacks.copy()
        if guard not in merged.handlers:
            merged.add_handler(guard, inherit=True)
    else:  # pragma: no cover - LangChain accepts only these
        merged = [guard]
    return {**config, "callbacks": merged, "run_id": run_id}


class GuardedRunnable(Runnable[Any, Any]):
    """See :func:`guarded`."""

    def __init__(
        self,
        runnable: Runnable[Any, Any],
        guard: GroundednessGuard,
        on_ungrounded: WrapMode,
        refusal: str,
        fallback: Fallback | None,
        note: str,
    ) -> None:
        if on_ungrounded not in ("strip", "refuse", "fallback"):
            raise AuditorError(f"on_ungrounded must be strip, refuse or fallback, not {on_ungrounded!r}.")
        if on_ungrounded == "fallback" and fallback is None:
            raise AuditorError("on_ungrounded='fallback' needs fallback=a function (input, audit) -> output.")
        self.runnable = runnable
        self.guard = guard
        self.on_ungrounded: WrapMode = on_ungrounded
        self.refusal = refusal
        self.fallback = fallback
        self.note = note

    @property
    def InputType(self) -> Any:
        return self.runnable.InputType

    @property
    def OutputType(self) -> Any:
        return self.runnable.OutputType

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        run_id = uuid.uuid4()
        try:
            output = self.runnable.invoke(
                input, _with_guard(ensure_config(config), self.guard, run_id), **kwargs
            )
        except UngroundedAnswerError as err:
            return self._handle(input, None, err.audit, run_id)
        return self._handle(input, output, None, run_id)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        run_id = uuid.uuid4()
        try:
            output = await self.runnable.ainvoke(
                input, _with_guard(ensure_config(config), self.guard, run_id), **kwargs
            )
        except UngroundedAnswerError as err:
            return self._handle(input, None, err.audit, run_id)
        return self._handle(input, output, None, run_id)

    def _handle(self, input: Any, output: Any, raised: AnswerOut | None, run_id: uuid.UUID) -> Any:
        if output is not None:
            audits = self.guard.audits_for(run_id)
            if audits is not None and not audits:
                return output  # no answer in the run: nothing to judge
            audit = audits[-1] if audits else None
            if audit is not None and audit.grounded is not False:
                return output  # grounded, or a refusal
        else:
            audit = raised
        if self.on_ungrounded == "fallback":
            if self.fallback is None:  # checked in __init__; kept for a fallback removed afterwards
                raise UngroundedAnswerError("Ungrounded answer and no fallback to serve.", audit)
            replacement = self.fallback(input, audit)
            if isinstance(replacement, str) and output is not None:
                return self._in_shape(output, replacement)
            return replacement
        served = self.refusal
        text = final_text(output) if output is not None else None
        if self.on_ungrounded == "strip" and audit is not None and text is not None:
            served = strip_unsupported(text, audit, self.note) or self.refusal
        if output is None:
            return served
        return self._in_shape(output, served)

    @staticmethod
    def _in_shape(output: Any, text: str) -> Any:
        """``text`` in place of the answer in ``output``, or ``text`` alone when the shape is unknown."""
        try:
            return replace_text(output, text)
        except TypeError:
            return text


def guarded(
    runnable: Runnable[Any, Any],
    guard: GroundednessGuard,
    *,
    on_ungrounded: WrapMode = "strip",
    refusal: str = DEFAULT_REFUSAL,
    fallback: Fallback | None = None,
    note: str = STRIP_NOTE,
) -> GuardedRunnable:
    """Wrap ``runnable`` so an ungrounded final answer is stripped, refused or replaced by a fallback.

    Args:
        runnable: the agent or chain; its output may be a string, a message, ``{"messages": [...]}``
            (LangGraph) or ``{"output": str}``.
        guard: the guard that audits each run (its own ``on_ungrounded`` should be ``flag``).
        on_ungrounded: ``strip``, ``refuse`` or ``fallback`` (module docstring).
        refusal: what ``refuse`` serves, and ``strip`` when nothing supported remains.
        fallback: ``fallback(input, audit) -> output`` for ``fallback``.
        note: the note ``strip`` appends; ``{n}`` is the number of sentences removed.
    """
    return GuardedRunnable(runnable, guard, on_ungrounded, refusal, fallback, note)

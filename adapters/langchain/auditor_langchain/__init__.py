"""LangChain adapters for trace-auditor.

:mod:`auditor_langchain.runtree` reads run trees exported as JSON (registered as the ``langchain``
adapter); it needs no LangChain install. Parsing is split by data flow: ``buffers`` (bounded reads),
``layouts`` (the file layouts), ``records`` (unnesting, merging, parents), ``collect`` (streaming,
a trace handed on once whole), ``assemble`` (records to traces), ``runs`` (one run to one span),
``messages`` (serialised messages and documents).

The live parts need ``langchain-core`` (``pip install 'auditor-langchain[live]'``) and are imported
on first use, so ``import auditor_langchain`` (and the file adapter) works without it:
``live`` (record a run as LangSmith exports it), ``guard`` (:class:`GroundednessGuard`,
:class:`UngroundedAnswerError`) and ``wrap`` (:func:`guarded`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from auditor_langchain.runtree import RunTreeAdapter

if TYPE_CHECKING:
    from auditor_langchain.guard import GroundednessGuard, UngroundedAnswerError
    from auditor_langchain.wrap import GuardedRunnable, guarded

__all__ = ["GroundednessGuard", "GuardedRunnable", "RunTreeAdapter", "UngroundedAnswerError", "guarded"]

_LAZY = {
    "GroundednessGuard": "auditor_langchain.guard",
    "UngroundedAnswerError": "auditor_langchain.guard",
    "GuardedRunnable": "auditor_langchain.wrap",
    "guarded": "auditor_langchain.wrap",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'auditor_langchain' has no attribute {name!r}")
    try:
        imported = __import__(module, fromlist=[name])
    except ImportError as err:
        raise ImportError(
            f"auditor_langchain.{name} needs langchain-core: pip install 'auditor-langchain[live]' ({err})"
        ) from err
    return getattr(imported, name)

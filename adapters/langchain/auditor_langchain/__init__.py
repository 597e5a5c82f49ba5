"""LangChain adapters for trace-auditor.

:mod:`auditor_langchain.runtree` reads run trees exported as JSON (registered as the ``langchain``
adapter); it needs no LangChain install. Parsing is split by data flow: ``runtree`` (file layouts,
grouping by trace), ``runs`` (one run to one span), ``messages`` (serialised messages and documents).
"""

from auditor_langchain.runtree import RunTreeAdapter

__all__ = ["RunTreeAdapter"]

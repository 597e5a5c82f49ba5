"""Which live traces are audited: a declared share, chosen by trace id, and a filter on the spans.

A live deployment (``auditor serve``, the OpenTelemetry span processor) may audit only a share of
its traces, and only those of some services, agents or span attributes. The choice must be the
same on every replica and after every restart, so it depends on nothing but the trace: a trace is
in the sample when the first 64 bits of the SHA-256 of its id (lower-case hex, as OTLP writes it),
read as a fraction of 2**64, are below the share. Two servers with the same share audit exactly
the same traces; a larger share audits a superset of a smaller one's.

The filter's terms (``service=NAME``, ``agent=NAME``, ``attribute:KEY=VALUE``) must all hold;
several terms of one kind (two services) hold when any of them does. A term holds when some span
of the trace carries it: ``service`` is the span's resource ``service.name``, ``agent`` its
``gen_ai.agent.name`` (GenAI conventions) or ``agent.name`` (OpenInference), ``attribute`` any span
attribute, compared as text.

:meth:`TraceSampling.recorded` is what a run stores beside its figures, so a rate is never quoted
without the sample it was measured on.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from auditor.errors import UsageError

#: Span attributes that name the agent a span belongs to.
AGENT_KEYS = ("gen_ai.agent.name", "agent.name")
FILTER_FORMS = "service=NAME, agent=NAME or attribute:KEY=VALUE, comma-separated"


@dataclass(frozen=True)
class SpanFacts:
    """What the filter looks at in one span: its service and its attributes (as text)."""

    service: str | None
    attributes: Mapping[str, str]


def sample_point(trace_id: str) -> float:
    """The trace's place in ``[0, 1)``: the first 64 bits of SHA-256 of its lower-case id."""
    digest = hashlib.sha256(trace_id.strip().lower().encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class TraceSampling:
    """A share of traces (by trace id) and a filter; the default audits every trace."""

    share: float = 1.0
    services: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    attributes: tuple[tuple[str, str], ...] = ()

    @property
    def everything(self) -> bool:
        """True when every trace is audited (the whole share, no filter)."""
        return self.share >= 1.0 and not self.filtered

    @property
    def filtered(self) -> bool:
        return bool(self.services or self.agents or self.attributes)

    def sampled(self, trace_id: str) -> bool:
        """Whether the trace is in the share (the same answer on every replica)."""
        return self.share >= 1.0 or sample_point(trace_id) < self.share

    def matches(self, spans: Iterable[SpanFacts]) -> bool:
        """Whether the trace's spans satisfy every term of the filter (True without a filter)."""
        if not self.filtered:
            return True
        services: set[str] = set()
        agents: set[str] = set()
        pairs: set[tuple[str, str]] = set()
        wanted = {key for key, _ in self.attributes}
        for span in spans:
            if span.service is not None:
                services.add(span.service)
            for key in AGENT_KEYS:
                if key in span.attributes:
                    agents.add(span.attributes[key])
            pairs.update((key, span.attributes[key]) for key in wanted if key in span.attributes)
        return (
            (not self.services or not services.isdisjoint(self.services))
            and (not self.agents or not agents.isdisjoint(self.agents))
            and all(pair in pairs for pair in self.attributes)
        )

    def filter_text(self) -> str | None:
        """The filter in the form it is written (None without one)."""
        terms = [
            *(f"service={s}" for s in self.services),
            *(f"agent={a}" for a in self.agents),
            *(f"attribute:{k}={v}" for k, v in self.attributes),
        ]
        return ", ".join(terms) or None

    def recorded(self) -> dict[str, Any]:
        """What a run stores with its figures: ``{"share": 0.1, "filter": "service=checkout"}``."""
        return {"share": self.share, "filter": self.filter_text()}


def parse_sampling(share: str | float | None, filter_text: str | None, *, source: str = "") -> TraceSampling:
    """A :class:`TraceSampling` from a share (``0.1``, ``10%``) and a filter (:data:`FILTER_FORMS`).

    Args:
        share: a fraction in (0, 1] or a percentage (``"10%"``); None: every trace.
        filter_text: the filter's terms; None or empty: no filter.
        source: the settings the values came from, for the messages.

    Raises:
        UsageError: a share outside (0, 1], or a term not in one of the forms.
    """
    where = f"{source}: " if source else ""
    return TraceSampling(_share(share, where), *_terms(filter_text or "", where))


def _share(given: str | float | None, where: str) -> float:
    if given is None or (isinstance(given, str) and not given.strip()):
        return 1.0
    text = str(given).strip()
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= 1):
        raise UsageError(
            f"{where}the sample share {text!r} is not a fraction in (0, 1] or a percentage (e.g. 0.1 or 10%)."
        )
    return value


def _terms(text: str, where: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]:
    services: list[str] = []
    agents: list[str] = []
    attributes: list[tuple[str, str]] = []
    for raw in text.split(","):
        term = raw.strip()
        if not term:
            continue
        name, sep, value = term.partition("=")
        name, value = name.strip(), value.strip()
        if sep and value and name == "service":
            services.append(value)
        elif sep and value and name == "agent":
            agents.append(value)
        elif sep and value and name.startswith("attribute:") and name[len("attribute:") :].strip():
            attributes.append((name[len("attribute:") :].strip(), value))
        else:
            raise UsageError(f"{where}the filter term {term!r} is not one of {FILTER_FORMS}.")
    return tuple(services), tuple(agents), tuple(attributes)

"""Resolving citation markers to the evidence items they name.

A claim's markers (``Claim.citations``, as written) are looked up among its answer's evidence,
admitted and excluded alike: the policy decides later whether a cited item may support anything.
Each part of a marker (:class:`~auditor.claims._markers.Target`) is resolved in this order, the
first rule that finds an item winning:

1. **definition**: a footnote or reference label defined in the answer (``[^2]: https://...``)
   resolves as its definition's URLs and ids;
2. **id**: a name equal (case-insensitive) to an item's ``evidence_id``, ``document_id`` or a
   metadata id (``id``, ``doc_id``, ``document_id``, ``source``, ``file_name``, ``filename``);
3. **url**: a URL equal to an item's URL (``url``, or a metadata URL or id that is one) once both
   are normalised: scheme (http = https), case of the host, default port, trailing slash and
   fragment ignored;
4. **position**: a number (``[3]``, ``【3】``, ``[^3]`` with no definition, ``[doc-3]`` with no such
   id) names the n-th item (1-based) of the answer's *retrieval order*: the documents of the *last
   retrieval before the answer* (the retriever span that became available last), in the order it
   returned them; or, when the answer saw no retrieved document (an agent whose tools return its
   sources), the tool results of the answer's turn (those that became available after the user's
   last message before it) in the order they became available.

A marker resolves to zero or more items; one that resolves to none carries the reason. See
``docs/metrics.md``, "Citations".
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from auditor.claims._markers import Target, body_targets, definitions, parse_marker
from auditor.claims._model import Claim
from auditor.evidence import Answer, Evidence, EvidenceKind

_ID_KEYS = ("id", "doc_id", "document_id", "source", "file_name", "filename")
_URL_KEYS = ("url", "source_url", "source", "uri", "link", "id", "doc_id", "document_id")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class MarkerResolution(BaseModel):
    """What one marker of a claim resolves to.

    ``evidence_ids`` are the items named, in evidence order (admitted or excluded); ``resolved_by``
    says how (``definition``, ``id``, ``url``, ``position``, comma-joined when parts differ) and is
    None when nothing was found, in which case ``reason`` says why.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    marker: str
    evidence_ids: tuple[str, ...] = ()
    resolved_by: str | None = None
    reason: str = ""


def normalise_url(url: str) -> str | None:
    """A URL in comparable form (``acme.com/warranty?x=1``), or None when it is not an http(s) URL."""
    text = url.strip().rstrip(".,;:!?")
    if text.lower().startswith("www."):
        text = "http://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host += f":{port}"
    path = parts.path.rstrip("/")
    return host + path + (f"?{parts.query}" if parts.query else "")


def item_names(item: Evidence) -> set[str]:
    """What a marker may call an item by: its ids (:func:`_ids`) and its title, lower case."""
    title = item.metadata.get("title")
    return _ids(item) | ({title.strip().casefold()} if isinstance(title, str) and title.strip() else set())


def _ids(item: Evidence) -> set[str]:
    names = [item.evidence_id, item.document_id, *(item.metadata.get(k) for k in _ID_KEYS)]
    return {str(n).strip().lower() for n in names if isinstance(n, str | int) and str(n).strip()}


def _urls(item: Evidence) -> set[str]:
    raw = [item.url, item.document_id, *(item.metadata.get(k) for k in _URL_KEYS)]
    return {u for r in raw if isinstance(r, str) and (u := normalise_url(r)) is not None}


def last_retrieval(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The documents of the last retrieval before the answer, in the order it returned them.

    The last retrieval is the retriever span whose documents became available last (ties: the
    one listed last); its documents keep the order the retriever returned them in.
    """
    docs = [e for e in evidence if e.kind is EvidenceKind.RETRIEVED_DOCUMENT]
    if not docs:
        return []
    timed = [(e.available_at, k) for k, e in enumerate(docs) if e.available_at is not None]
    last = docs[max(timed)[1]] if timed else docs[-1]
    return [e for e in docs if (e.trace_id, e.span_id) == (last.trace_id, last.span_id)]


def turn_tool_results(evidence: Sequence[Evidence]) -> list[Evidence]:
    """The tool results of the answer's turn in the order they became available (ties: as listed):
    those after the user's last message before the answer, or all of them when no message is timed.
    """
    said = [e.available_at for e in evidence if e.kind is EvidenceKind.USER_MESSAGE and e.available_at]
    since = max(said) if said else None
    tools = [
        (e.available_at, k, e)
        for k, e in enumerate(evidence)
        if e.kind is EvidenceKind.TOOL_RESULT
        and (since is None or e.available_at is None or e.available_at >= since)
    ]
    if any(at is None for at, _, _ in tools):
        return [e for _, _, e in tools]  # untimed: as listed
    return [e for _, _, e in sorted(tools, key=lambda t: (t[0], t[1]))]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class MarkerResolver:
    """Resolves the markers of one answer's claims (module docstring for the rules)."""

    def __init__(self, answer: Answer) -> None:
        self.evidence = list(answer.evidence)
        self.defined = definitions(answer.text)
        self.retrieval = last_retrieval(self.evidence)
        self.counted = "the last retrieval before the answer returned {n} document(s)"
        if not self.retrieval:
            self.retrieval = turn_tool_results(self.evidence)
            self.counted = "the answer saw no retrieved document and {n} tool result(s) in its turn"
        self._ids = [(e, _ids(e)) for e in self.evidence]
        self._urls = [(e, _urls(e)) for e in self.evidence]

    def resolve(self, marker: str) -> MarkerResolution:
        found: dict[str, Evidence] = {}
        methods: list[str] = []
        misses: list[str] = []
        targets = parse_marker(marker)
        for target in targets:
            items, method, miss = self._target(target)
            for item in items:
                found.setdefault(item.evidence_id, item)
            if method and method not in methods:
                methods.append(method)
            if miss:
                misses.append(miss)
        ordered = tuple(e.evidence_id for e in self.evidence if e.evidence_id in found)
        if not targets:
            misses.append(f"{marker} names nothing the auditor can look up")
        return MarkerResolution(
            marker=marker,
            evidence_ids=ordered,
            resolved_by=", ".join(methods) or None,
            reason="; ".join(misses) if not ordered or misses else "",
        )

    def _target(self, target: Target) -> tuple[list[Evidence], str | None, str | None]:
        if target.label is not None and target.label in self.defined:
            body = self.defined[target.label]
            items = [i for t in body_targets(body) for i in self._named(t)[0]]
            if items:
                return items, "definition", None
            return [], None, f"[{target.label}] is defined as {body[:80]!r}, which names no evidence item"
        items, method = self._named(target)
        if items:
            return items, method, None
        if target.position is not None:
            return self._positional(target.position)
        if target.label is not None and target.label.startswith("^"):
            return [], None, f"footnote [{target.label}] has no definition in the answer"
        what = "URL" if target.urls else "id, document id or URL"
        return [], None, f"no evidence item of the answer has the {what} {target.shown}"

    def _named(self, target: Target) -> tuple[list[Evidence], str | None]:
        ids = set(target.ids)
        by_id = [e for e, names in self._ids if names & ids] or [
            e
            for e in self.evidence
            if item_names(e) & ids  # a title ("[Returns FAQ]")
        ]
        if by_id:
            return by_id, "id"
        urls = {u for u in (normalise_url(x) for x in target.urls) if u is not None}
        by_url = [e for e, names in self._urls if names & urls]
        return by_url, "url" if by_url else None

    def _positional(self, n: int) -> tuple[list[Evidence], str | None, str | None]:
        if not self.retrieval:
            return (
                [],
                None,
                f"no item has the id {n}, and no retrieval or tool result before the answer to count {n} in",
            )
        if not 1 <= n <= len(self.retrieval):
            return [], None, f"{self.counted.format(n=len(self.retrieval))}; {n} names the {_ordinal(n)}"
        return [self.retrieval[n - 1]], "position", None


def resolve_markers(answer: Answer, claims: Sequence[Claim]) -> dict[str, tuple[MarkerResolution, ...]]:
    """Each claim's markers resolved against its answer's evidence, by claim id (claims with markers only)."""
    resolver = MarkerResolver(answer)
    return {c.claim_id: tuple(resolver.resolve(m) for m in c.citations) for c in claims if c.citations}

"""Per-convention readers: from decoded attributes and events to the fields of a span.

Each module reads one convention and returns an :class:`~auditor_otel.conventions.common.Extraction`.
Which one applies to a span is decided in :mod:`auditor_otel.spans`.
"""

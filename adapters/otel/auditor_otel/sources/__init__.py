"""Trace sources (the core's ``auditor.sources`` entry points): backends that already hold
OpenTelemetry traces, pulled as OTLP JSON lines so that the file adapter reads them, and given the
verdicts back. :mod:`auditor_otel.sources.phoenix` serves ``phoenix://`` and
:mod:`auditor_otel.sources.mlflow` ``mlflow://``; :mod:`.otlp_file`
writes the pulled spans in the form the ``otlp-json`` adapter reads."""

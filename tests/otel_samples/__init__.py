"""Small builders for OTLP inputs used by the ``tests/test_otel_*.py`` tests."""

"""Benchmarks for speed, cost and accuracy: ``python -m benchmarks [--quick] [--out results.json]``.

Nothing here is a timed test. Every figure is printed as a table and written to a JSON file with
the date and the machine, so a later run can be compared with an earlier one (``docs/benchmarks.md``).

Modules: :mod:`benchmarks.ingest` (adapter throughput against ``json.loads``, peak memory at two file
sizes), :mod:`benchmarks.judge` (offline judge speed and accuracy on the labelled dev set),
:mod:`benchmarks.llm` (the LLM pipeline against the local fake OpenAI-compatible server).
"""

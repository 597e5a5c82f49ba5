"""The peers harness: RAGAS and DeepEval faithfulness against a local fake server, beside the auditor.

``python -m benchmarks.peers --python /tmp/peers-venv/bin/python`` (the peers live in a venv of
their own, ``benchmarks/peers/requirements.txt``; not in CI) audits the LLM benchmark's generated
records (:func:`benchmarks.llm.write_records`) with the auditor against the test suite's fake server
(:mod:`benchmarks.server`), then scores the same records with RAGAS ``Faithfulness`` and DeepEval
``FaithfulnessMetric`` against :mod:`benchmarks.peers.server`, which answers any structured-output
request with the same latency and the same token estimate (characters / 4 of everything sent,
the JSON schema included). It prints calls, prompt tokens per answer and answers/s as a ratio to
C / latency for each system.
"""

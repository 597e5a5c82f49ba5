"""The records adapter: RAG evaluation records (dev-set shape and RAGAS columns) as traces."""

from __future__ import annotations

import io
import json
from pathlib import Path

from click.testing import CliRunner

from auditor.cli import cli
from auditor.pipeline import collect_evidence
from auditor.trace import Problem, RecordsAdapter, SpanKind, Trace
from auditor.trace._records import sniff_records

DEV = {
    "id": "RAGTruth:11",
    "dataset": "ragtruth",
    "task_type": "QA",
    "unit": "answer",
    "question": "How long is the refund window?",
    "sources": [
        {
            "id": "p1",
            "text": "Refunds are accepted within 30 days of purchase.",
            "metadata": {"url": "https://x.test/r"},
        },
        {"id": "p2", "text": "Shipping takes 5 days.", "metadata": {}},
    ],
    "answer": "Refunds are accepted within 30 days of purchase.",
    "labels": [],
    "answer_label": "grounded",
}
RAGAS = {
    "user_input": "What ships?",
    "retrieved_contexts": ["Shipping takes 5 days.", "Returns are free."],
    "response": "Shipping takes 5 days.",
}
OLD_RAGAS = {"question": "Q?", "contexts": ["C one."], "answer": "C one."}


def parse(lines: list[bytes]) -> list[Trace | Problem]:
    return list(RecordsAdapter().parse(io.BytesIO(b"".join(lines)), "in.jsonl"))


def line(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def test_dev_shape_becomes_retriever_then_llm() -> None:
    [trace] = parse([line(DEV)])
    assert isinstance(trace, Trace)
    assert trace.trace_id == "ragtruth:11"
    kinds = [s.kind for s in trace.spans]
    assert kinds == [SpanKind.CHAIN, SpanKind.RETRIEVER, SpanKind.LLM]
    retriever, llm = trace.spans[1], trace.spans[2]
    assert [d.id for d in retriever.documents] == ["p1", "p2"]
    assert retriever.documents[0].metadata == {"url": "https://x.test/r"}
    assert retriever.end <= llm.start
    assert llm.input_messages[0].content == DEV["question"]
    assert llm.output_messages[0].content == DEV["answer"]
    assert llm.attributes["record.id"] == "RAGTruth:11"
    assert llm.attributes["record.task_type"] == "QA"


def test_ragas_columns_both_generations() -> None:
    first, second = parse([line(RAGAS), line(OLD_RAGAS)])
    assert isinstance(first, Trace) and isinstance(second, Trace)
    assert [d.text for d in first.spans[1].documents] == RAGAS["retrieved_contexts"]
    assert [d.id for d in first.spans[1].documents] == ["context_1", "context_2"]
    assert first.spans[2].output_messages[0].content == "Shipping takes 5 days."
    assert second.spans[2].input_messages[0].content == "Q?"


def test_ids_without_record_id_are_stable_and_distinct() -> None:
    a = parse([line(RAGAS), line(OLD_RAGAS)])
    b = parse([line(RAGAS), line(OLD_RAGAS)])
    ids = [t.trace_id for t in a if isinstance(t, Trace)]
    assert ids == [t.trace_id for t in b if isinstance(t, Trace)]
    assert ids[0].startswith("line-1-") and ids[1].startswith("line-2-")


def test_bad_lines_are_problems_with_file_and_line() -> None:
    items = parse(
        [
            line(DEV),
            b"{not json\n",
            b"\n",
            line([1, 2]),
            line({"question": "q", "sources": []}),
            line(DEV),
            line(RAGAS),
        ]
    )
    problems = [i for i in items if isinstance(i, Problem)]
    traces = [i for i in items if isinstance(i, Trace)]
    assert len(traces) == 2
    assert [(p.file, p.line) for p in problems] == [
        ("in.jsonl", 2),
        ("in.jsonl", 4),
        ("in.jsonl", 5),
        ("in.jsonl", 6),
    ]
    assert "not valid JSON" in problems[0].reason
    assert "JSON object" in problems[1].reason
    assert "no answer" in problems[2].reason
    assert "repeats line 1" in problems[3].reason


def test_missing_sources_is_a_warning_and_the_record_is_kept() -> None:
    problem, trace = parse([line({"id": "x", "answer": "A."})])
    assert isinstance(problem, Problem) and problem.severity.value == "warning"
    assert isinstance(trace, Trace) and trace.spans[1].documents == ()


def test_sniff_accepts_records_even_when_the_first_line_is_cut_off() -> None:
    long = dict(DEV, sources=[{"id": "p", "text": "word " * 2000}])
    head = line(long)[:4096]
    assert sniff_records(head)
    assert sniff_records(line(RAGAS))
    assert not sniff_records(line({"resourceSpans": []}))
    assert not sniff_records(line({"id": "r", "run_type": "llm", "inputs": {}, "outputs": {"answer": "x"}}))
    assert not sniff_records(line({"answer": "no sources here"}))
    assert not sniff_records(b"\x00\x01binary")


def test_default_policy_admits_the_sources(tmp_path: Path) -> None:
    path = tmp_path / "rag.jsonl"
    path.write_bytes(line(DEV) + line(RAGAS))
    result = collect_evidence([path])
    assert [i.format for i in result.run.inputs] == ["records"]
    first = result.answers[0]
    assert first.question == DEV["question"]
    docs = [e for e in first.evidence if e.kind == "retrieved_document"]
    assert [e.document_id for e in docs] == ["p1", "p2"]
    assert all(e.admitted for e in docs)
    assert docs[0].url == "https://x.test/r"
    assert not any(e.admitted for e in first.evidence if e.kind == "user_message")


def test_the_cli_reads_records_for_evidence_and_audit(tmp_path: Path) -> None:
    path = tmp_path / "rag.jsonl"
    path.write_bytes(line(DEV) + line(RAGAS))
    runner = CliRunner()
    shown = runner.invoke(cli, ["evidence", str(path)])
    assert shown.exit_code == 0, shown.output
    assert "Refunds are accepted" in shown.output
    audited = runner.invoke(cli, ["audit", str(path), "--format", "records", "--json", "-"])
    assert audited.exit_code == 0, audited.output
    result = json.loads(audited.stdout)
    verdicts = [c["verdict"] for a in result["answers"] for c in a["claims"] if not c["screened"]]
    assert verdicts == ["supported", "supported"]


# --- bad values: repaired or named, never silent -------------------------------------------------


def problems_and_traces(items: list[Trace | Problem]) -> tuple[list[Problem], list[Trace]]:
    return [i for i in items if isinstance(i, Problem)], [i for i in items if isinstance(i, Trace)]


def test_a_lone_surrogate_is_repaired_and_the_result_is_writable(tmp_path: Path) -> None:
    path = tmp_path / "rag.jsonl"
    # "\ud800" is valid JSON, and CESU-8 bytes (a surrogate pair spelt as two 3-byte sequences) decode
    # to surrogates; either used to crash the JSON output with "surrogates not allowed".
    cesu_bytes = "\ud83d\ude00".encode("utf-8", "surrogatepass")  # CESU-8 for U+1F600
    escaped = line(dict(DEV, answer="Refunds are accepted within 30 days \ud800 of purchase."))
    raw = json.dumps(dict(RAGAS, response="Shipping takes 5 days. X")).encode().replace(b"X", cesu_bytes)
    path.write_bytes(escaped + raw + b"\n")
    result = collect_evidence([path])
    assert result.to_json().encode("utf-8")  # no PydanticSerializationError
    assert result.answers[0].text == "Refunds are accepted within 30 days \ufffd of purchase."
    assert result.answers[1].text == "Shipping takes 5 days. \U0001f600"  # the pair is joined
    repaired = [p for p in result.run.problems if "surrogates" in p.reason]
    assert {(p.file, p.line, p.severity) for p in repaired} == {
        (str(path), 1, "warning"),
        (str(path), 2, "warning"),
    }
    assert all(p.span_id and "repaired with U+FFFD" in p.reason for p in repaired)
    shown = CliRunner().invoke(cli, ["evidence", str(path), "--json", "-"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["answers"][0]["text"].endswith("\ufffd of purchase.")


def test_invalid_utf8_is_replaced_not_the_line_lost() -> None:
    raw = line(DEV).replace(
        b"Refunds are accepted within 30 days of purchase.", b"Refunds \xff within 30 days."
    )
    problems, traces = problems_and_traces(parse([raw]))
    assert [(p.line, p.severity.value) for p in problems] == [(1, "warning")]
    assert "invalid UTF-8" in problems[0].reason
    assert traces[0].spans[1].documents[0].text == "Refunds \ufffd within 30 days."


def test_a_line_nested_1000_deep_is_one_problem_and_the_rest_is_read() -> None:
    deep = b'{"id": "deep", "answer": "A.", "sources": ' + b"[" * 1000 + b"]" * 1000 + b"}\n"
    problems, traces = problems_and_traces(parse([line(DEV), deep, line(RAGAS)]))
    assert traces[0].trace_id == "ragtruth:11" and len(traces) == 2
    assert [(p.line, p.severity.value) for p in problems] == [(2, "error")]
    assert "nested too deeply" in problems[0].reason


def test_metadata_nested_past_the_bound_is_cut_and_named(tmp_path: Path) -> None:
    metadata: object = "leaf"
    for _ in range(400):  # readable JSON, but deeper than the output serialisers accept
        metadata = {"m": metadata}
    record = dict(
        DEV, sources=[{"id": "p1", "text": "Refunds are accepted within 30 days.", "metadata": metadata}]
    )
    path = tmp_path / "deep.jsonl"
    path.write_bytes(line(record))
    result = collect_evidence([path])
    assert result.to_json()
    [problem] = [p for p in result.run.problems if "nested more than 64 levels" in p.reason]
    assert (problem.line, problem.severity) == (1, "warning") and "documents" in problem.reason
    [doc] = [e for e in result.answers[0].evidence if e.kind == "retrieved_document"]
    depth, value = 0, doc.metadata
    while isinstance(value, dict) and value:
        depth, value = depth + 1, value.get("m")
    assert 50 < depth < 70


def test_values_of_the_wrong_type_are_named() -> None:
    items = parse(
        [
            line({"id": "q", "question": 5, "sources": ["S."], "answer": "S."}),
            line({"id": "s", "question": "Q?", "sources": {"a": 1}, "answer": "A."}),
            line(
                {"id": "m", "question": "Q?", "sources": [{"text": "T.", "metadata": [1]}, 7], "answer": "T."}
            ),
            line({"id": "a", "question": "Q?", "sources": [], "answer": 5}),
            line({"id": "n", "question": "Q?", "sources": None, "contexts": ["C."], "answer": "C."}),
        ]
    )
    problems, traces = problems_and_traces(items)
    reasons = {(p.trace_id, p.reason) for p in problems}
    assert reasons == {
        ("q", "question is a number, not text; the record has no question"),
        ("s", "sources is an object, not a list; the record has no evidence"),
        ("m", "sources item 1 metadata is a list, not an object; ignored"),
        ("m", "sources item 2 is a number, not text or an object; skipped"),
        ("a", "answer is a number, not text; line skipped"),
    }
    assert [t.trace_id for t in traces] == ["q", "s", "m", "n"]
    assert traces[0].spans[2].input_messages == ()  # no question, rather than the text "5"
    assert [d.text for d in traces[3].spans[1].documents] == ["C."]  # null sources: the next key counts


def test_records_are_built_as_validation_builds_them_and_checked_in_full_when_they_may_hold_surrogates() -> (
    None
):
    # The reader builds its models with ``trusted`` (no validation) and vouches to the repair check
    # for a line with no JSON escape and no byte 0xED: the traces must be the validated ones.
    from auditor.trace import _records

    records = [
        DEV,
        RAGAS,
        dict(
            DEV,
            id=7,
            question=None,
            sources=["plain text", {"text": "t", "metadata": {"a": [1, {"b": None}]}}],
        ),
        dict(RAGAS, retrieved_contexts=[{"id": 3, "content": "x", "metadata": "not an object"}]),
        dict(DEV, answer="Caf\u00e9 \ud55c\uad6d", dataset=3),  # 0xED leads Hangul's bytes: checked in full
    ]
    escaped = line(records[-1] | {"id": "esc"})  # json.dumps spells "\u00e9" and the Hangul as escapes
    hangul = json.dumps(records[-1], ensure_ascii=False).encode() + b"\n"  # raw UTF-8: 0xED bytes
    lines = [line(r) for r in records[:-1]] + [escaped, hangul]
    for raw in lines:
        [trace] = [t for t in parse([raw]) if isinstance(t, Trace)]
        assert Trace.model_validate(trace.model_dump()) == trace  # tuples stay tuples, models models
        for span in trace.spans:
            assert type(span.attributes) is dict and all(type(d.metadata) is dict for d in span.documents)
    assert _records._no_surrogates(line(DEV))
    assert b"\\u" not in hangul and b"\xed" in hangul and b"\\u" in escaped
    assert not _records._no_surrogates(escaped) and not _records._no_surrogates(hangul)

"""Inputs as people have them: directories and globs, and records as a JSON array, CSV and Parquet.

The CSV and Parquet fixtures are written here with the real libraries (the csv module, NumPy's
print form as ``datasets.Dataset.to_csv`` writes list columns, and pyarrow), so a change in the
readers is checked against what those tools produce, not against hand-typed bytes.
"""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from auditor.cli import cli
from auditor.errors import NothingReadError, UsageError
from auditor.pipeline import collect_evidence
from auditor.trace import RecordsAdapter, detect_adapter, expand_inputs, read_traces

RAGAS = [
    {
        "user_input": "How long is the refund window?",
        "retrieved_contexts": ["Refunds are accepted within 30 days of purchase.", "Shipping takes 5 days."],
        "response": "Refunds are accepted within 30 days of purchase.",
    },
    {
        "user_input": "Who founded Acme?",
        "retrieved_contexts": ["Acme was founded by Jane Roe in 1999."],
        "response": "Acme was founded by John Doe in 1999.",
    },
]
HF = [
    {"question": r["user_input"], "contexts": r["retrieved_contexts"], "answer": r["response"]} for r in RAGAS
]


def _evidence(traces: list[Any]) -> list[tuple[str | None, list[str], str | None]]:
    """(question, documents, answer) per trace, from the spans the records adapter builds."""
    out = []
    for trace in traces:
        root = trace.spans[0]
        docs = [d.text for s in trace.spans for d in s.documents]
        out.append((root.input_text, docs, root.output_text))
    return out


EXPECTED = [(r["user_input"], r["retrieved_contexts"], r["response"]) for r in RAGAS]


def _write_csv(path: Path, header: list[str], rows: list[list[str]], delimiter: str = ",") -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


# -- discovery ----------------------------------------------------------------------------------


def _tree(root: Path) -> None:
    line = json.dumps({"id": "x", **RAGAS[0]}) + "\n"
    for name in ("b/two.jsonl", "a/one.jsonl", "a/deep/three.jsonl.gz", "top.json", ".hidden/no.jsonl"):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = line.replace('"x"', json.dumps(name)).encode()
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    (root / "a" / "notes.md").write_text("# not data\n")
    (root / "a" / ".skip.jsonl").write_text(line)


def test_a_directory_is_searched_recursively_in_sorted_order(tmp_path: Path) -> None:
    _tree(tmp_path)
    found = [p.relative_to(tmp_path).as_posix() for p in expand_inputs([tmp_path])]
    assert found == ["a/deep/three.jsonl.gz", "a/one.jsonl", "b/two.jsonl", "top.json"]
    result = read_traces([tmp_path])
    assert [t.trace_id for t in result.traces] == found
    assert [Path(i.path).name for i in result.inputs] == [
        "three.jsonl.gz",
        "one.jsonl",
        "two.jsonl",
        "top.json",
    ]


def test_a_recursive_glob_is_sorted_and_each_file_is_read_once(tmp_path: Path) -> None:
    _tree(tmp_path)
    pattern = str(tmp_path / "**" / "*.jsonl")
    found = [
        p.relative_to(tmp_path).as_posix() for p in expand_inputs([pattern, tmp_path / "b" / "two.jsonl"])
    ]
    assert found == ["a/one.jsonl", "b/two.jsonl"]  # hidden entries left out, the repeat dropped
    one_level = [p.name for p in expand_inputs([str(tmp_path / "*" / "*.jsonl")])]
    assert one_level == ["one.jsonl", "two.jsonl"]


def test_a_literal_name_with_glob_characters_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "run[1].jsonl"
    path.write_text(json.dumps(RAGAS[0]) + "\n")
    assert expand_inputs([path]) == [path]


def test_a_glob_matching_nothing_and_an_empty_directory_are_one_line_each(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no file matches this pattern") as err:
        expand_inputs([str(tmp_path / "**" / "*.jsonl")])
    assert "\n" not in str(err.value)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "README.md").write_text("hi")
    with pytest.raises(UsageError, match=r"empty: the directory holds no data file"):
        read_traces([tmp_path / "empty"])


def test_the_cli_takes_directories_and_globs_and_fails_cleanly_on_an_empty_glob(tmp_path: Path) -> None:
    _tree(tmp_path)
    runner = CliRunner()
    ok = runner.invoke(
        cli, ["evidence", str(tmp_path / "**" / "*.jsonl"), str(tmp_path / "top.json"), "--json", "-"]
    )
    assert ok.exit_code == 0, ok.output
    assert [a["trace_id"] for a in json.loads(ok.output)["answers"]] == [
        "a/one.jsonl",
        "b/two.jsonl",
        "top.json",
    ]
    bad = runner.invoke(cli, ["audit", "--no-store", str(tmp_path / "nothing" / "*.jsonl")])
    assert bad.exit_code == 2
    assert "no file matches this pattern" in bad.output
    assert "Traceback" not in bad.output and len(bad.output.strip().splitlines()) == 1


# -- JSON array ---------------------------------------------------------------------------------


@pytest.mark.parametrize("indent", [None, 2])
def test_a_json_array_of_records_is_read_row_by_row(tmp_path: Path, indent: int | None) -> None:
    path = tmp_path / "ragas.json"
    path.write_text(json.dumps(RAGAS, indent=indent))
    result = read_traces([path])
    assert result.inputs[0].format == "records"
    assert _evidence(result.traces) == EXPECTED
    assert not result.problems


def test_a_json_array_is_decoded_across_chunk_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import auditor.trace._record_rows as rows

    monkeypatch.setattr(rows, "_CHUNK", 7)  # every element and number straddles a chunk
    records = [
        {"id": i, "question": f"Q{i}?", "contexts": [f"C {i}."], "answer": f"C {i}.", "n": 12345}
        for i in range(30)
    ]
    path = tmp_path / "hf.json"
    path.write_text(json.dumps(records, indent=1))
    traces = read_traces([path]).traces
    assert [t.trace_id for t in traces] == [str(i) for i in range(30)]


def test_bad_json_array_rows_name_the_line_and_the_good_rows_are_read(tmp_path: Path) -> None:
    path = tmp_path / "mixed.json"
    good = json.dumps(RAGAS[0])
    path.write_text(
        f'[\n{good},\n"just text",\n{{"user_input": "Q?", "retrieved_contexts": []}},\n{good[:-1]}, "id": 2}}\n'
    )
    result = read_traces([path])
    assert len(result.traces) == 2
    reasons = [(p.line, p.reason) for p in result.problems if p.severity == "error"]
    assert reasons[0] == (3, "expected a JSON object, got str; row skipped")
    assert reasons[1][0] == 4 and "no answer text (expected 'answer' or 'response')" in reasons[1][1]


def test_a_cut_off_json_array_keeps_the_rows_before_the_cut(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    text = json.dumps(RAGAS, indent=2)
    path.write_text(text[: text.rindex("Acme was founded by John")])
    result = read_traces([path])
    assert _evidence(result.traces) == EXPECTED[:1]
    assert "cut off (truncated file?)" in result.problems[-1].reason


# -- CSV ----------------------------------------------------------------------------------------


def test_ragas_csv_with_python_literal_lists(tmp_path: Path) -> None:
    # pandas' to_csv (RAGAS EvaluationDataset.to_csv) writes a list cell as its Python repr.
    rows = [[r["user_input"], repr(r["retrieved_contexts"]), r["response"]] for r in RAGAS]
    path = _write_csv(tmp_path / "ragas.csv", ["user_input", "retrieved_contexts", "response"], rows)
    result = read_traces([path])
    assert _evidence(result.traces) == EXPECTED
    assert not result.problems


def test_datasets_csv_with_numpy_printed_lists(tmp_path: Path) -> None:
    # datasets' to_csv goes through pandas with NumPy arrays: "['a' 'b']", no commas, line breaks.
    rows = [[r["question"], str(np.array(r["contexts"], dtype=object)), r["answer"]] for r in HF]
    assert "' '" in rows[0][1] or "'\n '" in rows[0][1]
    path = _write_csv(tmp_path / "hf.csv", ["question", "contexts", "answer"], rows)
    result = read_traces([path])
    assert _evidence(result.traces) == EXPECTED  # two contexts, not one joined string


def test_csv_json_lists_plain_text_contexts_and_tsv(tmp_path: Path) -> None:
    rows = [
        [HF[0]["question"], json.dumps(HF[0]["contexts"]), HF[0]["answer"]],
        ["Q?", "A single passage, not a list.", "A single passage."],
    ]
    path = _write_csv(tmp_path / "mixed.tsv", ["question", "contexts", "answer"], rows, delimiter="\t")
    traces = read_traces([path]).traces
    assert _evidence(traces) == [EXPECTED[0], ("Q?", ["A single passage, not a list."], "A single passage.")]


def test_a_bad_csv_row_names_file_line_and_column_and_the_rest_is_audited(tmp_path: Path) -> None:
    rows = [
        [RAGAS[0]["user_input"], repr(RAGAS[0]["retrieved_contexts"]), RAGAS[0]["response"]],
        ["Q?", "['unterminated", "An answer."],
        ["Q?", "['ok']", ""],
        [RAGAS[1]["user_input"], repr(RAGAS[1]["retrieved_contexts"]), RAGAS[1]["response"]],
    ]
    path = _write_csv(tmp_path / "bad.csv", ["user_input", "retrieved_contexts", "response"], rows)
    result = read_traces([path])
    assert _evidence(result.traces) == EXPECTED
    shown = [str(p) for p in result.problems]
    assert shown[0].startswith(f"{path}:3: error: column 'retrieved_contexts' starts like a list")
    assert shown[1].startswith(f"{path}:4: error: the record has no answer text")
    out = CliRunner().invoke(cli, ["audit", "--no-store", str(path), "--json", "-"])
    assert out.exit_code in (0, 3), out.output  # 3: the judge left a claim unjudged
    document = json.loads(out.stdout)
    assert [a["question"] for a in document["answers"]] == [r["user_input"] for r in RAGAS]
    assert [(p["line"], p["reason"][:28]) for p in document["run"]["problems"]] == [
        (3, "column 'retrieved_contexts' "),
        (4, "the record has no answer tex"),
    ]


def test_a_csv_header_that_is_not_valid_csv_is_a_problem_and_the_good_file_is_read(tmp_path: Path) -> None:
    # A stray carriage return inside the header (a fault-corpus mutant) made the csv module raise.
    broken = tmp_path / "broken.csv"
    broken.write_bytes(b'user_input,retrieved_co\rntexts,response\n"Q?","[\'a\']","An answer."\n')
    good = _write_csv(
        tmp_path / "good.csv",
        ["user_input", "retrieved_contexts", "response"],
        [[r["user_input"], repr(r["retrieved_contexts"]), r["response"]] for r in RAGAS],
    )
    result = read_traces([broken, good], "records")
    assert _evidence(result.traces) == EXPECTED
    assert result.problems and all(p.file == str(broken) for p in result.problems)
    assert result.problems[0].line == 1


def test_literal_eval_is_used_never_eval(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    cell = f"[__import__('pathlib').Path({str(marker)!r}).touch()]"
    path = _write_csv(tmp_path / "evil.csv", ["question", "contexts", "answer"], [["Q?", cell, "A."]])
    with pytest.raises(NothingReadError, match="No trace could be read"):
        read_traces([path])
    assert not marker.exists()


# -- Parquet ------------------------------------------------------------------------------------


def test_ragas_and_datasets_parquet(tmp_path: Path) -> None:
    ragas = tmp_path / "ragas.parquet"
    pq.write_table(pa.Table.from_pylist(RAGAS), ragas)
    hf = tmp_path / "hf.parquet"
    pq.write_table(pa.Table.from_pylist(HF), hf, row_group_size=1)
    result = read_traces([ragas, hf])
    assert [i.format for i in result.inputs] == ["records", "records"]
    assert _evidence(result.traces) == EXPECTED + EXPECTED
    assert [t.trace_id.split("-")[0] for t in result.traces] == ["row"] * 4


def test_parquet_with_ids_structured_contexts_and_a_bad_row(tmp_path: Path) -> None:
    table = pa.Table.from_pylist(
        [
            {
                "id": "Q-1",
                "question": "Q?",
                "contexts": [{"id": "kb1", "text": "C one.", "metadata": {"s": "a"}}],
                "answer": "C one.",
            },
            {
                "id": "Q-2",
                "question": "Q?",
                "contexts": [{"id": "kb2", "text": "C two.", "metadata": {"s": "b"}}],
                "answer": None,
            },
        ]
    )
    path = tmp_path / "kb.parquet.gz"
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    path.write_bytes(gzip.compress(buffer.getvalue().to_pybytes()))
    result = read_traces([path])
    assert [t.trace_id for t in result.traces] == ["q-1"]
    doc = result.traces[0].spans[1].documents[0]
    assert (doc.id, doc.text, doc.metadata) == ("kb1", "C one.", {"s": "a"})
    assert [str(p) for p in result.problems] == [
        f"{path}: error: row 2: the record has no answer text (expected 'answer' or 'response'); row skipped (trace q-2)"
    ]


def test_parquet_without_pyarrow_is_one_line_saying_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(RAGAS), path)
    monkeypatch.setitem(__import__("sys").modules, "pyarrow.parquet", None)
    runner = CliRunner()
    out = runner.invoke(cli, ["audit", "--no-store", str(path)])
    assert out.exit_code == 2
    assert "pip install 'trace-auditor[parquet]'" in out.output
    assert "Traceback" not in out.output


def test_datasets_exports_when_datasets_is_installed(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")  # optional: not a dependency of the tests
    data = datasets.Dataset.from_list(HF)
    data.to_json(tmp_path / "hf.jsonl")
    data.to_json(tmp_path / "hf.json", lines=False)
    data.to_csv(tmp_path / "hf.csv", index=False)
    data.to_parquet(tmp_path / "hf.parquet")
    result = read_traces([tmp_path])
    assert _evidence(result.traces) == EXPECTED * 4


# -- detection ----------------------------------------------------------------------------------


def test_other_formats_are_not_taken_for_records(tmp_path: Path) -> None:
    otlp = Path(__file__).parent / "fixtures" / "handmade" / "genai_current.otlp.jsonl"
    assert detect_adapter(otlp.read_bytes()[:4096], str(otlp)).name == "otlp-json"
    adapter = RecordsAdapter()
    assert not adapter.sniff(b"id,question,label\n1,Q?,yes\n")  # a CSV without records columns
    assert not adapter.sniff(b'[{"resourceSpans": []}]')
    assert not adapter.sniff(b"[1, 2, 3]")
    assert adapter.sniff(b"\xef\xbb\xbfquestion,contexts,answer\n")
    buffer = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(HF), buffer)
    head = buffer.getvalue().to_pybytes()[:4096]
    assert detect_adapter(head, "x.parquet").name == "records"


def test_forms_give_the_same_answers_as_jsonl(tmp_path: Path) -> None:
    jsonl = tmp_path / "r.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in RAGAS))
    array = tmp_path / "r.json"
    array.write_text(json.dumps(RAGAS))
    parquet = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(RAGAS), parquet)
    texts = [
        [(a.question, a.text, [e.text for e in a.evidence]) for a in collect_evidence([p]).answers]
        for p in (jsonl, array, parquet)
    ]
    assert texts[0] == texts[1] == texts[2]
    assert len(texts[0]) == 2


def test_the_gate_takes_a_glob(tmp_path: Path) -> None:
    golden = Path(__file__).parent.parent / "examples" / "golden"
    runner = CliRunner()
    args = ["--labels", str(golden / "labels.jsonl"), "--policy", str(golden.parent / "gate-policy.toml")]
    ok = runner.invoke(cli, ["gate", str(golden / "*.json"), *args, "--db", f"sqlite:///{tmp_path / 's.db'}"])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(cli, ["gate", str(golden / "*.nope")])
    assert bad.exit_code == 2
    assert "*.nope: no file matches this pattern" in " ".join(bad.output.split())


# -- URLs, through fsspec's own memory:// and file:// filesystems ---------------------------------


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[str]:
    """A fresh directory in fsspec's (process-wide) memory filesystem, removed afterwards."""
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    root = f"/{tmp_path.name}"
    line = json.dumps({"id": "x", **RAGAS[0]}) + "\n"
    for name in ("b/two.jsonl", "a/one.jsonl", "a/deep/three.jsonl.gz", ".hidden/no.jsonl", "docs/notes.md"):
        data = line.replace('"x"', json.dumps(name)).encode()
        fs.pipe(f"{root}/{name}", gzip.compress(data) if name.endswith(".gz") else data)
    yield f"memory://{root}"
    fs.rm(root, recursive=True)


def test_a_url_is_read_through_fsspec_like_a_local_file(memory: str, tmp_path: Path) -> None:
    result = read_traces([f"{memory}/a/one.jsonl"])
    assert [t.trace_id for t in result.traces] == ["a/one.jsonl"]
    assert result.inputs[0].path == f"{memory}/a/one.jsonl"  # the URL as given, not folded by Path
    local = tmp_path / "one.jsonl"
    local.write_bytes(json.dumps({"id": "a/one.jsonl", **RAGAS[0]}).encode() + b"\n")
    assert result.inputs[0].sha256 == read_traces([local]).inputs[0].sha256
    assert _evidence(result.traces) == _evidence(read_traces([local]).traces)


def test_a_url_glob_and_a_url_directory_expand_sorted_without_hidden_entries(memory: str) -> None:
    found = expand_inputs([f"{memory}/**/*.jsonl*"])
    assert found == [f"{memory}/{n}" for n in ("a/deep/three.jsonl.gz", "a/one.jsonl", "b/two.jsonl")]
    assert expand_inputs([memory]) == found  # a directory: its data files, recursively
    result = read_traces([f"{memory}/*/*.jsonl", f"{memory}/a/deep/three.jsonl.gz"])
    assert [t.trace_id for t in result.traces] == ["a/one.jsonl", "b/two.jsonl", "a/deep/three.jsonl.gz"]
    assert _evidence(result.traces)[2] == EXPECTED[0]  # gzip inside a URL is decompressed


def test_a_file_url_is_read(tmp_path: Path) -> None:
    pytest.importorskip("fsspec")
    path = tmp_path / "r.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in RAGAS).encode()))
    url = path.as_uri()
    assert url.startswith("file:///")
    assert _evidence(read_traces([url]).traces) == EXPECTED
    assert expand_inputs([f"file://{tmp_path}/*.gz"]) == [url]


def test_bad_urls_are_one_line_each(memory: str) -> None:
    cases = [
        (f"{memory}/missing.jsonl", r"missing.jsonl: no such file\."),
        (f"{memory}/nothing/**/*.jsonl", r"no file matches this pattern"),
        (f"{memory}/docs", r"docs: the directory holds no data file"),
        ("nosuchfs://bucket/x.jsonl", r"nosuchfs://bucket/x.jsonl: this URL cannot be read: .*nosuchfs"),
    ]
    for url, message in cases:
        with pytest.raises(UsageError, match=message) as err:
            read_traces([url])
        assert "\n" not in str(err.value), url


def test_without_fsspec_a_url_is_one_line_naming_what_to_install() -> None:
    code = (
        "import sys; sys.modules['fsspec'] = None\n"
        "from auditor.trace import read_traces\n"
        "from auditor.errors import UsageError\n"
        "try:\n"
        "    read_traces(['s3://bucket/x/*.otlp.jsonl.gz'])\n"
        "except UsageError as err:\n"
        "    print(err)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stderr == ""
    assert done.stdout.splitlines() == [
        "s3://bucket/x/*.otlp.jsonl.gz: reading URLs needs fsspec and the filesystem's package "
        "(e.g. s3fs); install them (pip install fsspec s3fs) or copy the files to a local disk."
    ]


def test_the_cli_keeps_a_url_whole(memory: str) -> None:
    runner = CliRunner()
    done = runner.invoke(cli, ["audit", f"{memory}/a/*.jsonl", "--no-store", "--json", "-"])
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert [i["path"] for i in result["run"]["inputs"]] == [f"{memory}/a/one.jsonl"]
    assert [a["text"] for a in result["answers"]] == [RAGAS[0]["response"]]

"""LangSmith ingest bodies (``auditor_langchain.langsmith``): ``{"post", "patch"}`` JSON and multipart.

The real bodies the Python and JS SDKs send are in ``tests/fixtures/frameworks/langsmith_sdk`` and
``langsmith_js`` (checked by ``tests/test_frameworks.py``); these small ones pin the rules.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from auditor_langchain.runtree import RunTreeAdapter

from auditor.trace import Problem, SpanKind, Trace, expand_inputs, read_traces

ROOT = "01a24c91-31bc-7bd4-972b-9874874c43d3"
TOOL = "01a24c91-329a-7674-a83f-57ac5d667a38"
DOTTED_ROOT = "20261206T181513596787Z" + ROOT
DOTTED_TOOL = DOTTED_ROOT + ".20261206T181513818145Z" + TOOL


def parse(data: bytes) -> tuple[list[Trace], list[Problem]]:
    traces: list[Trace] = []
    problems: list[Problem] = []
    for item in RunTreeAdapter().parse(io.BytesIO(data), "bodies"):
        (traces if isinstance(item, Trace) else problems).append(item)
    return traces, problems


def root_post(**fields: Any) -> dict[str, Any]:
    return {
        "id": ROOT,
        "trace_id": ROOT,
        "dotted_order": DOTTED_ROOT,
        "name": "support_agent",
        "run_type": "chain",
        "start_time": "2026-12-06T18:15:13.596787+00:00",
        "inputs": {"question": "Weather in Paris?"},
        **fields,
    }


def tool_run() -> dict[str, Any]:
    return {
        "id": TOOL,
        "trace_id": ROOT,
        "parent_run_id": ROOT,
        "dotted_order": DOTTED_TOOL,
        "name": "get_weather",
        "run_type": "tool",
        "start_time": "2026-12-06T18:15:13.818145+00:00",
        "end_time": 1796581513818,  # the JS SDK's epoch milliseconds
        "inputs": {"city": "Paris"},
        "outputs": {"outputs": '{"conditions": "light rain"}'},  # the JS SDK's traceable
    }


def test_batch_body_posts_and_later_patches_merge_into_runs() -> None:
    first = {"post": [root_post()]}
    second = {
        "post": [tool_run()],
        "patch": [
            {
                "id": ROOT,
                "trace_id": ROOT,
                "dotted_order": DOTTED_ROOT,
                "end_time": "2026-12-06T18:15:13.837905+00:00",
                "outputs": {"output": "Light rain."},
            }
        ],
    }
    data = b"".join(json.dumps(body).encode() + b"\n" for body in (first, second))
    assert RunTreeAdapter().sniff(data[:4096])
    traces, problems = parse(data)
    assert [p.reason for p in problems] == []
    (trace,) = traces
    root, tool = sorted(trace.spans, key=lambda s: s.start)
    assert root.kind is SpanKind.CHAIN and root.output_text == "Light rain."
    assert root.end > root.start  # the patch's end_time
    assert tool.kind is SpanKind.TOOL and tool.tool is not None
    assert tool.tool.arguments == {"city": "Paris"}
    assert tool.tool.result == '{"conditions": "light rain"}'


def part(name: str, value: Any) -> bytes:
    data = json.dumps(value).encode()
    return (
        (
            f'Content-Disposition: form-data; name="{name}"\r\nContent-Type: application/json\r\n'
            f"Content-Length: {len(data)}\r\n\r\n"
        ).encode()
        + data
        + b"\r\n"
    )


def body(boundary: str, parts: list[tuple[str, Any]]) -> bytes:
    out = b""
    for name, value in parts:
        out += f"--{boundary}\r\n".encode() + part(name, value)
    return out + f"--{boundary}--\r\n".encode()


def test_multipart_bodies_one_after_another_give_runs_with_their_field_parts() -> None:
    post = root_post()
    inputs = post.pop("inputs")
    tool = tool_run()
    tool_inputs, tool_outputs = tool.pop("inputs"), tool.pop("outputs")
    data = body(
        "aaa111",
        [
            (f"post.{ROOT}", post),
            (f"post.{ROOT}.inputs", inputs),
            (f"post.{TOOL}", tool),
            (f"post.{TOOL}.inputs", tool_inputs),
            (f"post.{TOOL}.outputs", tool_outputs),
            (f"attachment.{TOOL}.image", {"ignored": True}),
        ],
    ) + body(
        "bbb222",
        [
            (
                f"patch.{ROOT}",
                {
                    "id": ROOT,
                    "trace_id": ROOT,
                    "dotted_order": DOTTED_ROOT,
                    "end_time": "2026-12-06T18:15:14+00:00",
                },
            ),
            (f"patch.{ROOT}.outputs", {"output": "Light rain."}),
        ],
    )
    assert RunTreeAdapter().sniff(data[:4096])
    traces, problems = parse(data)
    assert [p.reason for p in problems] == []
    (trace,) = traces
    root, tool_span = sorted(trace.spans, key=lambda s: s.start)
    assert json.loads(root.input_text or "") == {"question": "Weather in Paris?"}
    assert root.output_text == "Light rain."
    assert tool_span.tool is not None and tool_span.tool.arguments == {"city": "Paris"}
    assert tool_span.tool.result == '{"conditions": "light rain"}'


def test_a_part_that_is_not_json_is_a_problem_and_the_rest_is_read() -> None:
    good = root_post(end_time="2026-12-06T18:15:14+00:00", outputs={"output": "Fine."})
    data = body("ccc333", [(f"post.{ROOT}", good)]).replace(b"--ccc333--", b"--ccc333")
    data += (
        b'Content-Disposition: form-data; name="post.'
        + TOOL.encode()
        + b'"\r\n\r\n{not json\r\n--ccc333--\r\n'
    )
    traces, problems = parse(data)
    assert len(traces) == 1 and traces[0].spans[0].output_text == "Fine."
    assert any("not JSON" in p.reason and TOOL in p.reason for p in problems)


def test_other_json_with_post_keys_is_not_a_batch_body() -> None:
    traces, problems = parse(json.dumps({"post": [1], "title": "a blog post"}).encode() + b"\n")
    assert traces == [] and problems


def test_a_folder_of_multipart_bodies_is_found_and_read(tmp_path: Path) -> None:
    good = root_post(end_time="2026-12-06T18:15:14+00:00", outputs={"output": "Fine."})
    (tmp_path / "bodies.multipart").write_bytes(body("ddd444", [(f"post.{ROOT}", good)]))
    assert expand_inputs([tmp_path]) == [tmp_path / "bodies.multipart"]
    result = read_traces([tmp_path])
    assert [t.trace_id for t in result.traces] == [ROOT] and result.traces[
        0
    ].source_format == "langchain-runtree"

"""The labels file reader: strict, with file and line in every error."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.errors import UsageError
from auditor.metrics import load_labels, match_labels
from tests.test_metrics import ans


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_labels_in_order_skipping_blank_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"answer_id": "a1", "answerable": false}\n\n'
        '{"trace_id": "t9", "answerable": true, "question_type": "billing"}\n'
        '{"question": "Refund window?", "answerable": true}\n',
    )
    labels = load_labels(path)
    assert labels.source == str(path)
    assert [(lab.key, lab.answerable, lab.question_type) for lab in labels.labels] == [
        (("answer_id", "a1"), False, None),
        (("trace_id", "t9"), True, "billing"),
        (("question", "Refund window?"), True, None),
    ]


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        (
            '{"answer_id": "a", "answerable": true}\n{"answer_id": "b", answerable: true}\n',
            2,
            "not valid JSON",
        ),
        ('["a", true]\n', 1, "expected a JSON object, got list"),
        ('{"answer_id": "a"}\n', 1, "answerable: Field required"),
        ('{"answer_id": "a", "answerable": "yes"}\n', 1, "answerable: Input should be a valid boolean"),
        ('{"answer_id": "a", "answerable": true, "answerabel": false}\n', 1, "answerabel: unknown key"),
        ('{"answerable": true}\n', 1, "needs answer_id, trace_id or question"),
        (
            '{"answer_id": "a", "answerable": true}\n\n{"answer_id": "a", "answerable": false}\n',
            3,
            "a second label for answer_id 'a' (the first is on line 1)",
        ),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, text: str, line: int, says: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as err:
        load_labels(path)
    assert str(err.value).startswith(f"{path}, line {line}: ")
    assert says in str(err.value)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "\n  \n")
    with pytest.raises(UsageError, match="holds no label"):
        load_labels(path)


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the labels file"):
        load_labels(tmp_path / "nope.jsonl")


def test_match_prefers_answer_id_then_trace_id_then_question(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '{"question": "Q?", "answerable": false}\n'
        '{"trace_id": "t1", "answerable": false}\n'
        '{"answer_id": "a1", "answerable": true}\n'
        '{"answer_id": "missing", "answerable": true}\n',
    )
    answers = [
        ans("a1", [], grounded=None, trace_id="t1", question="Q?"),  # answer_id wins
        ans("a2", [], grounded=None, trace_id="t1", question="Q?"),  # then trace_id
        ans("a3", [], grounded=None, trace_id="t3", question="Q?"),  # then the question
        ans("a4", [], grounded=None, trace_id="t4", question="Other?"),  # nothing
    ]
    match = match_labels(answers, load_labels(path))
    assert {i: lab.key for i, lab in match.by_answer.items()} == {
        0: ("answer_id", "a1"),
        1: ("trace_id", "t1"),
        2: ("question", "Q?"),
    }
    assert match.unmatched_labels == 1


def test_answers_found_before_the_audit_match_the_same_way(tmp_path: Path) -> None:
    """The gate matches labels against the answers it finds before judging (no wasted audit)."""
    from tests.support.fake_openai import make_answer

    path = write(
        tmp_path, '{"trace_id": "trace-1", "answerable": true}\n{"answer_id": "zz", "answerable": true}\n'
    )
    found, _ = make_answer("Refunded.", [], question="Refund?")
    match = match_labels([found], load_labels(path))
    assert {i: lab.key for i, lab in match.by_answer.items()} == {0: ("trace_id", "trace-1")}
    assert match.unmatched_labels == 1

"""``AuditOptions``: one frozen object is how an audit's options travel, and the keywords are its fields.

The entry points take the object (or its fields as keywords, typed by ``AuditArgs``); none has an
option keyword of its own, so a new option is one field and cannot be forgotten in one of six
signatures. The audits are real (the offline judge on the example traces, a SQLite store).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from pathlib import Path

import pytest

from auditor.errors import UsageError
from auditor.policy import load_policy
from auditor.results import AuditResult
from auditor.run import (
    AuditArgs,
    AuditOptions,
    audit,
    audit_async,
    reaudit,
    reaudit_async,
)
from auditor.scale import audit_on_ray, reaudit_on_ray
from tests.conftest import ROOT

EXAMPLES = sorted((ROOT / "examples" / "traces").iterdir())
ENTRY_POINTS = (audit, audit_async, reaudit, reaudit_async, audit_on_ray, reaudit_on_ray)
#: What each entry point takes besides the options: its input, display and engine parameters.
NOT_OPTIONS = {
    "paths",
    "run_id",
    "options",
    "on_progress",
    "finish_with",
    "begin_with",  # like finish_with: work in the run's own transaction (auditor serve's sample and cap)
    "address",
    "workers",
    "max_retries",
}


def comparable(result: AuditResult) -> object:
    """Everything but the run's id and start time."""
    run = result.run.model_dump(mode="json", exclude={"id", "started_at"})
    return run, [a.model_dump(mode="json") for a in result.answers], result.summary


def test_the_keywords_are_the_fields_with_the_same_types() -> None:
    fields = {f.name: f for f in dataclasses.fields(AuditOptions)}
    hints = typing.get_type_hints(AuditOptions)
    keywords = typing.get_type_hints(AuditArgs)
    assert list(keywords) == list(fields)
    assert keywords == {name: hints[name] for name in fields}
    assert AuditArgs.__total__ is False  # every keyword optional, as every field has a default
    assert all(f.default is not dataclasses.MISSING for f in fields.values())


def test_every_field_is_documented() -> None:
    doc = AuditOptions.__doc__ or ""
    attributes = doc.split("Attributes:", 1)[1].split("Raises:", 1)[0]
    documented = re.findall(r"^        (\w+): ", attributes, re.M)
    assert documented == [f.name for f in dataclasses.fields(AuditOptions)]


@pytest.mark.parametrize("entry", ENTRY_POINTS, ids=lambda f: f.__name__)
def test_no_entry_point_takes_an_option_of_its_own(entry: typing.Callable[..., object]) -> None:
    parameters = inspect.signature(entry).parameters
    named = {n for n, p in parameters.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    assert named <= NOT_OPTIONS, named - NOT_OPTIONS
    assert list(parameters)[1] == "options"
    [changes] = [p for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert changes.annotation == "Unpack[AuditArgs]"


def test_the_options_object_and_the_keywords_are_the_same_call(tmp_path: Path) -> None:
    strict = load_policy("strict")
    by_object = audit(EXAMPLES, AuditOptions(policy=strict, store=False, concurrency=2))
    by_keywords = audit(EXAMPLES, policy=strict, store=False, concurrency=2)
    assert comparable(by_object) == comparable(by_keywords)
    assert by_object.run.policy is not None and by_object.run.policy.name == "strict"
    # keywords beside an object change those fields of it, and only those
    default = audit(EXAMPLES, AuditOptions(policy=strict, store=False), policy=None)
    assert default.run.policy is not None and default.run.policy.name == "default"
    assert comparable(default) != comparable(by_object)


def test_an_unknown_keyword_is_named_with_the_options_there_are() -> None:
    with pytest.raises(TypeError, match=r"audit\(\) got an unexpected keyword argument 'judje'.*judge"):
        audit(EXAMPLES, judje="offline")  # type: ignore[call-arg]


def test_the_options_are_frozen_and_checked() -> None:
    options = AuditOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.judge = "offline"  # type: ignore[misc]
    with pytest.raises(UsageError, match="concurrency 0"):
        AuditOptions(concurrency=0)


def test_a_reaudit_refuses_the_options_that_do_not_apply(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    first = audit(EXAMPLES, db_url=db)
    for given, word in (({"format": "otlp-json"}, "format"), ({"trace_id": "abc"}, "trace_id")):
        with pytest.raises(UsageError, match=word):
            reaudit(first.run.id, AuditOptions(db_url=db, **given))  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="always stored"):
        reaudit(first.run.id, db_url=db, store=False)
    # the judge None is the run's own, the policy None the run's stored one
    again = reaudit(first.run.id, AuditOptions(db_url=db))
    assert again.run.judge == first.run.judge and again.run.policy == first.run.policy
    assert comparable(again)[1:] == comparable(first)[1:]


def test_a_run_on_ray_refuses_one_trace_and_no_store_before_starting_ray() -> None:
    with pytest.raises(UsageError, match="trace_id selects one trace"):
        audit_on_ray(EXAMPLES, trace_id="abc")
    with pytest.raises(UsageError, match="always stored"):
        audit_on_ray(EXAMPLES, AuditOptions(store=False))
    with pytest.raises(UsageError, match="format and trace_id do not apply"):
        reaudit_on_ray("abc", format="records")

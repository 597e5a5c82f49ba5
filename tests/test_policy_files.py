"""Policy files: loading, shipped policies, the canonical hash, error messages, warnings, schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.errors import PolicyError
from auditor.evidence import AnswerSelection
from auditor.policy import load_policy, parse_policy, policy_json_schema, shipped_policies

ROOT = Path(__file__).resolve().parent.parent
POLICY_FILES = sorted((ROOT / "policies").glob("*.toml"))


# --- shipped policies ----------------------------------------------------------------------------


def test_shipped_policies_are_the_files_in_policies() -> None:
    assert shipped_policies() == sorted(p.stem for p in POLICY_FILES)
    assert {"default", "strict", "permissive", "support-agent"} <= set(shipped_policies())


@pytest.mark.parametrize("path", POLICY_FILES, ids=lambda p: p.name)
def test_every_policy_file_loads_cleanly(path: Path) -> None:
    by_path = load_policy(path)
    by_name = load_policy(path.stem)
    assert by_path.sha256 == by_name.sha256
    assert by_path.name == path.stem
    assert by_path.warnings == []
    assert by_path.source_text == path.read_text(encoding="utf-8")
    assert by_name.origin == f"<shipped>/{path.name}"


def test_default_policy_is_used_when_none_is_given() -> None:
    policy = load_policy(None)
    assert policy.name == "default"
    assert load_policy("default.toml").sha256 == policy.sha256
    switches = policy.evidence
    assert (switches.user_messages, switches.system_prompt, switches.model_outputs, switches.tool_errors) == (
        "exclude",
        "exclude",
        "exclude",
        "exclude",
    )
    assert switches.common_knowledge == "deny"
    assert policy.unmatched == "exclude"


def test_support_agent_policy_has_a_rationale_per_rule() -> None:
    policy = load_policy("support-agent")
    assert policy.rationale
    assert all(source.rationale for source in policy.sources)
    assert policy.thresholds.refusal_accuracy is not None
    assert policy.thresholds.over_refusal is not None


def test_unknown_policy_name_lists_the_shipped_ones() -> None:
    with pytest.raises(PolicyError) as err:
        load_policy("stirct")
    assert "stirct: no such policy file" in str(err.value)
    assert "default, permissive, strict, support-agent" in str(err.value)


# --- canonical hash ------------------------------------------------------------------------------

BASE = """
name = "p"
version = "1"
[evidence]
user_messages = "exclude"
[[sources]]
name = "docs"
admit = true
kinds = ["retrieved_document", "tool_result"]
metadata = { collection = "faq", status = { one_of = ["current", "final"] } }
[thresholds]
claim_support = 0.9
"""

EQUIVALENT = """
# comments and whitespace do not count
version   =   "1"
name = "p"

[thresholds]
claim_support = 0.90          # same number

[[sources]]
kinds = ["tool_result", "retrieved_document", "tool_result"]   # a set: order and repeats do not count
admit = true
name = "docs"
[sources.metadata]
status = { one_of = ["final", "current"] }
collection = { equals = "faq" }   # the long spelling of the shorthand
"""


def test_hash_is_stable_under_order_whitespace_comments_and_spelling() -> None:
    base = parse_policy(BASE)
    assert parse_policy(EQUIVALENT).sha256 == base.sha256
    assert len(base.sha256) == 64
    assert base.canonical_json() == parse_policy(EQUIVALENT).canonical_json()
    canonical = base.canonical_json()
    assert canonical == json.dumps(json.loads(canonical), sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('collection = "faq"', 'collection = "faqs"'),
        ("claim_support = 0.9", "claim_support = 0.8"),
        ('user_messages = "exclude"', 'user_messages = "admit"'),
        ('version = "1"', 'version = "2"'),
    ],
)
def test_hash_changes_with_meaning(old: str, new: str) -> None:
    assert old in BASE
    assert parse_policy(BASE.replace(old, new)).sha256 != parse_policy(BASE).sha256


def test_hash_depends_on_source_class_order() -> None:
    one = 'name = "p"\n[[sources]]\nname = "a"\nadmit = true\n[[sources]]\nname = "b"\nadmit = false\n'
    two = 'name = "p"\n[[sources]]\nname = "b"\nadmit = false\n[[sources]]\nname = "a"\nadmit = true\n'
    assert parse_policy(one).sha256 != parse_policy(two).sha256


# --- error messages: the file, the key path and what was expected ----------------------------------


BAD_POLICIES = [
    (
        'name = "p"\n[[sources]]\nname = "a"\nadmit = true\n[[sources]]\nname = "b"\nadmit = true\n'
        '[sources.metadata]\nstatus = { regex = "[unclosed" }\n',
        "sources[1].metadata.status.regex",
        "not a valid regular expression",
    ),
    (
        'name = "p"\n[[sources]]\nname = "a"\nadmit = true\nnmes = ["x"]\n',
        "sources[0].nmes",
        "unknown key (did you mean 'names'?); expected one of: admit, document_id_prefix",
    ),
    ('name = "p"\ncolour = "red"\n', "colour", "unknown key; expected one of: answers, evidence, name"),
    (
        'name = "p"\n[[sources]]\nname = "a"\nadmit = true\nkinds = ["tool"]\n',
        "sources[0].kinds[0]",
        "got \"tool\"; expected 'tool_result', 'retrieved_document', 'user_message'",
    ),
    (
        'name = "p"\n[[sources]]\nname = "a"\nadmit = true\nkinds = ["user_message"]\n',
        "sources[0].kinds",
        "decided by the [evidence] switch 'user_messages'",
    ),
    (
        'name = "p"\n[[sources]]\nname = "a"\nadmit = "yes"\n',
        "sources[0].admit",
        'got "yes"; expected true or false',
    ),
    (
        'name = "p"\n[thresholds]\nclaim_support = "high"\n',
        "thresholds.claim_support",
        "expected a valid number",
    ),
    (
        'name = "p"\n[thresholds]\nclaim_support = 1.5\n',
        "thresholds.claim_support",
        "less than or equal to 1",
    ),
    (
        'name = "p"\n[evidence]\nuser_messages = true\n',
        "evidence.user_messages",
        "expected 'exclude', 'current_question'",
    ),
    (
        'name = "p"\n[[sources]]\nname = "a"\nadmit = true\nnames = "get_order"\n',
        "sources[0].names",
        "expected a list",
    ),
    (
        'name = "p"\n[[sources]]\nadmit = true\n',
        "sources[0].name",
        "required key is missing; expected a unique name",
    ),
    ('name = "p"\n[[sources]]\nname = "a b"\nadmit = true\n', "sources[0].name", "expected a unique name"),
    (
        'name = "p"\n[[sources]]\nname = "a"\nadmit = true\n[[sources]]\nname = "a"\nadmit = false\n',
        "sources",
        "two source classes are named 'a'",
    ),
    (
        'name = "p"\n[[sources]]\nname = "unmatched"\nadmit = true\n',
        "sources[0].name",
        "'unmatched' is reserved",
    ),
    (
        'name = "p"\n[[sources]]\nname = "a"\nadmit = true\nmetadata = { x = {} }\n',
        "sources[0].metadata.x",
        "empty condition",
    ),
    (
        'name = "p"\n[[sources]]\nname = "a"\nadmit = true\nreject_if = { max_age_days = -1 }\n',
        "sources[0].reject_if.max_age_days",
        "greater than or equal to 0",
    ),
]


@pytest.mark.parametrize(("text", "key_path", "expected"), BAD_POLICIES)
def test_bad_policy_messages(tmp_path: Path, text: str, key_path: str, expected: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    message = str(err.value)
    assert message.startswith(f"{path}: invalid policy")
    assert f"{key_path}: " in message
    assert expected in message


def test_several_problems_are_one_message() -> None:
    with pytest.raises(PolicyError) as err:
        parse_policy('name = 1\n[evidence]\nuser_messages = "yes"\n', "two.toml")
    message = str(err.value)
    assert message.splitlines()[0] == "two.toml: invalid policy (2 problems):"
    assert "  - name: got 1; expected a valid string" in message
    assert "  - evidence.user_messages: " in message


def test_invalid_toml_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('name = "p"\n[[sources]\n', encoding="utf-8")
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    assert str(err.value).startswith(f"{path}: not valid TOML:")
    assert "line 2" in str(err.value)


# --- warnings --------------------------------------------------------------------------------------


def test_policy_that_admits_nothing_warns() -> None:
    nothing = parse_policy('name = "p"\n[[sources]]\nname = "a"\nadmit = false\n')
    assert any("admits nothing" in warning for warning in nothing.warnings)
    something = parse_policy('name = "p"\n[evidence]\nuser_messages = "current_question"\n')
    assert not any("admits nothing" in warning for warning in something.warnings)
    assert parse_policy('name = "p"\nunmatched = "admit"\n').warnings == []


def test_unreachable_classes_and_useless_reject_if_warn() -> None:
    policy = parse_policy(
        'name = "p"\n[[sources]]\nname = "all"\nadmit = true\n'
        '[[sources]]\nname = "never"\nadmit = false\nreject_if = { statuses = ["x"] }\n'
    )
    assert policy.warnings == [
        "sources[0] 'all' has no match rules, so it matches everything: the 1 class(es) after it can never match.",
        "sources[1] 'never' excludes its items, so its reject_if has no effect.",
    ]


# --- [answers] and the schema ----------------------------------------------------------------------


def test_answers_section_becomes_an_answer_selection() -> None:
    policy = parse_policy(
        'name = "p"\n[answers]\nspan_names = ["agent*"]\nattributes = { "app.role" = "final" }\n'
        'question_type_attribute = "app.qtype"\n'
    )
    assert policy.answer_selection() == AnswerSelection(
        span_names=("agent*",), attributes={"app.role": "final"}, question_type_attribute="app.qtype"
    )
    assert parse_policy('name = "p"').answer_selection() == AnswerSelection()


def test_json_schema_describes_every_key() -> None:
    schema = policy_json_schema()
    json.dumps(schema)
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {
        "name",
        "version",
        "rationale",
        "unmatched",
        "evidence",
        "sources",
        "thresholds",
        "answers",
    }
    source = schema["$defs"]["SourceClass"]
    assert source["additionalProperties"] is False
    assert {"kinds", "names", "metadata", "url_host", "url_path", "document_id_prefix", "reject_if"} <= set(
        source["properties"]
    )
    kinds = json.dumps(schema["$defs"])
    assert "retrieved_document" in kinds
    condition = schema["$defs"]["MetadataCondition"]["anyOf"]
    assert condition[0] == {"type": ["string", "number", "boolean"]}


# --- docs/policy.md's "Writing a policy" stays honest------------------------------------------------------------------

DOCS = ROOT / "docs" / "policy.md"  # "Writing a policy": the full example and every key


def test_docs_example_is_a_valid_policy() -> None:
    text = DOCS.read_text(encoding="utf-8")
    example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    policy = parse_policy(example, "docs/policy.md")
    assert [s.name for s in policy.sources] == ["order-system", "debug-tools", "policy-pages", "help-center"]


def test_docs_list_every_key() -> None:
    from auditor.policy import AnswersSection, EvidenceSwitches, Policy, RejectIf, SourceClass, Thresholds

    text = DOCS.read_text(encoding="utf-8")
    for model in (Policy, EvidenceSwitches, SourceClass, RejectIf, Thresholds, AnswersSection):
        for key in model.model_fields:
            if model is Policy and key in ("evidence", "sources", "thresholds", "answers"):
                continue
            assert f"` `{key}` |" in text or f"| `{key}` |" in text, (
                f"{model.__name__}.{key} is not documented"
            )
    for operator in ("equals", "one_of", "regex", "exists"):
        assert f"{{ {operator} = " in text

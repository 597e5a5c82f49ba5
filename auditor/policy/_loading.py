"""Reading policy files: TOML in, a validated :class:`~auditor.policy.Policy` out.

Every problem with a policy file becomes one :class:`~auditor.errors.PolicyError` whose message
names the file, the key path (``sources[1].metadata.status.regex``) and what was expected, so the
user can fix it without reading a traceback. Shipped policies (``default``, ``strict``, ...) are
package data, read with :mod:`importlib.resources` so editable and wheel installs behave alike.
"""

from __future__ import annotations

import difflib
import importlib.resources
import json
import tomllib
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from auditor.errors import PolicyError
from auditor.policy._model import Policy

DEFAULT_POLICY = "default"
_PACKAGE = "auditor.policies"


def shipped_policies() -> list[str]:
    """Names of the policies shipped with the auditor (``default``, ``strict``, ...)."""
    root = importlib.resources.files(_PACKAGE)
    return sorted(item.name[: -len(".toml")] for item in root.iterdir() if item.name.endswith(".toml"))


def load_policy(path_or_name: str | Path | None = None) -> Policy:
    """Load a policy from a file, or a shipped policy by name.

    Args:
        path_or_name: a path to a TOML file, or the name of a shipped policy (``strict`` or
            ``strict.toml``). None loads the default policy.

    Returns:
        The validated policy, with its source text and origin kept.

    Raises:
        PolicyError: the file is missing, is not TOML, or does not validate.
    """
    if path_or_name is None:
        path_or_name = DEFAULT_POLICY
    path = Path(path_or_name)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise PolicyError(f"{path}: cannot read the policy file ({err}).") from None
        return parse_policy(text, origin=str(path))
    name = str(path_or_name)
    stem = name[: -len(".toml")] if name.endswith(".toml") else name
    if "/" not in name and "\\" not in name and stem in shipped_policies():
        resource = importlib.resources.files(_PACKAGE) / f"{stem}.toml"
        return parse_policy(resource.read_text(encoding="utf-8"), origin=f"<shipped>/{stem}.toml")
    raise PolicyError(
        f"{name}: no such policy file, and no shipped policy of that name. "
        f"Pass a path to a TOML file or one of: {', '.join(shipped_policies())}."
    )


def parse_policy(text: str, origin: str = "<string>") -> Policy:
    """Validate policy TOML text; ``origin`` names it in error messages.

    Raises:
        PolicyError: the text is not TOML or does not validate.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise PolicyError(f"{origin}: not valid TOML: {err}.") from None
    except RecursionError:
        # tomllib parses nested arrays recursively: a hostile file must not be a traceback
        raise PolicyError(
            f"{origin}: nested too deeply to read; a policy file needs no deep nesting."
        ) from None
    try:
        policy = Policy.model_validate(data)
    except ValidationError as err:
        raise PolicyError(format_validation_error(err, origin)) from None
    policy._source_text = text
    policy._origin = origin
    return policy


def policy_json_schema() -> dict[str, Any]:
    """The JSON Schema of a policy file (for editors and CI), from the same model that validates."""
    schema = Policy.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "trace-auditor policy"
    return schema


def format_validation_error(err: ValidationError, origin: str) -> str:
    """One message for all of a policy's problems: ``file: key.path: problem; expected ...``."""
    problems = [_describe(detail) for detail in err.errors(include_url=False)]
    if len(problems) == 1:
        return f"{origin}: invalid policy: {problems[0]}"
    listed = "\n".join(f"  - {problem}" for problem in problems)
    return f"{origin}: invalid policy ({len(problems)} problems):\n{listed}"


def key_path(loc: Sequence[int | str]) -> str:
    """``('sources', 1, 'metadata', 'status', 'regex')`` -> ``sources[1].metadata.status.regex``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
    return path or "(top level)"


def _describe(detail: ErrorDetails) -> str:
    loc = tuple(detail["loc"])
    where = key_path(loc)
    kind = detail["type"]
    given = detail.get("input")
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        name = str(loc[-1])
        hint = ""
        close = difflib.get_close_matches(name, allowed, n=1)
        if close:
            hint = f" (did you mean {close[0]!r}?)"
        return f"{where}: unknown key{hint}; expected one of: {', '.join(allowed)}"
    if kind == "missing":
        described = _description(loc)
        return f"{where}: required key is missing" + (f"; expected {described}" if described else "")
    if kind in ("tuple_type", "list_type"):
        return f'{where}: got {_show(given)}; expected a list, e.g. ["a", "b"]'
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{where}: got {_show(given)}; expected a table"
    message = detail["msg"]
    if message.startswith("Value error, "):
        return f"{where}: {message[len('Value error, ') :]}"
    expected = message[0].lower() + message[1:]
    expected = expected.replace("input should be", "expected").replace("a valid boolean", "true or false")
    if kind == "string_pattern_mismatch":
        described = _description(loc)
        expected = f"expected {described}" if described else expected
    return f"{where}: got {_show(given)}; {expected}"


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _allowed_keys(loc: Sequence[int | str]) -> list[str]:
    """The keys the model accepts at ``loc``, for 'expected one of'."""
    model = _model_in(_annotation_at(loc))
    return sorted(model.model_fields) if model is not None else []


def _annotation_at(loc: Sequence[int | str]) -> Any:
    """The type annotation at ``loc``, walking model fields, list items and dict values."""
    annotation: Any = Policy
    for part in loc:
        model = _model_in(annotation)
        if isinstance(part, str) and model is not None and part in model.model_fields:
            annotation = model.model_fields[part].annotation
            continue
        # A list index or a dict key: step into the element / value type.
        args = [a for a in typing.get_args(_strip(annotation)) if a is not Ellipsis]
        if not args:
            return None
        annotation = args[-1]
    return annotation


def _description(loc: Sequence[int | str]) -> str | None:
    model = _model_in(_annotation_at(loc[:-1]))
    if model is None or not isinstance(loc[-1], str) or loc[-1] not in model.model_fields:
        return None
    text = model.model_fields[loc[-1]].description
    return text[0].lower() + text[1:].rstrip(".") if text else None


def _strip(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _model_in(annotation: Any) -> type[BaseModel] | None:
    annotation = _strip(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None

"""JetBrains Koog's OpenTelemetry feature (``agents-features-opentelemetry``, Kotlin/JVM).

Follows Koog 0.5.4's source (``span/ExecuteToolSpan.kt``, ``attribute/SpanAttributes.kt``): its
spans are the GenAI ones (``create_agent`` > ``invoke_agent`` > Koog's own ``node.*`` spans >
``chat`` and ``execute_tool``), except that a tool span keeps its arguments and result in Koog's
custom ``input.value`` / ``output.value`` (the OpenInference names, without OpenInference's span
kind) rather than ``gen_ai.tool.call.arguments`` / ``.result``, and node spans carry
``koog.node.*``. Its Langfuse exporter flattens the chat spans' messages into numbered
``gen_ai.prompt.N.*`` attributes: those spans are read as OpenLLMetry's indexed form, with the
repairs of :mod:`.toolmessages`.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import SpanKind, ToolInvocation

from . import genai
from .common import Extraction, arguments, as_str


def is_koog(attrs: dict[str, Any]) -> bool:
    """A Koog node span, or a GenAI tool span holding its call in Koog's ``input/output.value``."""
    if "koog.node.name" in attrs:
        return True
    return attrs.get("gen_ai.operation.name") == "execute_tool" and (
        "output.value" in attrs or "input.value" in attrs
    )


def extract(name: str, attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> Extraction:
    """Read one Koog span: the GenAI reading, the tool's call from ``input/output.value``."""
    result = genai.extract(name, attrs, events)
    if result.kind is SpanKind.TOOL and result.tool is not None:
        tool = result.tool
        result.tool = ToolInvocation(
            name=tool.name,
            call_id=tool.call_id,
            arguments=tool.arguments if tool.arguments is not None else arguments(attrs.get("input.value")),
            result=tool.result if tool.result is not None else as_str(attrs.get("output.value")),
        )
    return result

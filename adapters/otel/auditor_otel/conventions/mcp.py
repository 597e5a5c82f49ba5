"""Tool results that came over the Model Context Protocol, read as the text the tool returned.

An MCP tool answers with a ``CallToolResult``: ``{"content": [blocks], "isError": bool,
"structuredContent": ...}``, each text block ``{"type": "text", "text": "..."}``. Instrumentations
record what they hold of it: the OpenAI Agents SDK (through OpenInference) the one text block
(``{"type": "text", "text": "..."}``), others the block list or the whole result. The model is
given the blocks' text, and a person reads that text as the tool's result: so does the auditor,
and then the tool span's result and the prompt's copy of it are the same text (one result, not
two) and a payload such as ``{"error": ...}`` inside it reads as what it is. A result whose
``isError`` is true is kept whole (its flag marks it an error result); a block that is not text
(an image, an embedded resource) keeps the result as written.
"""

from __future__ import annotations

from typing import Any

from auditor.trace import ToolInvocation

from .common import loads


def _block_text(block: Any) -> str | None:
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    return None


def _blocks_text(blocks: list[Any]) -> str | None:
    texts = [_block_text(b) for b in blocks]
    if not texts or any(t is None for t in texts):
        return None
    return "\n".join(t for t in texts if t is not None)


def result_text(result: str | None) -> str | None:
    """The text an MCP ``CallToolResult`` (or its content blocks) carries, else ``result`` as is."""
    if result is None or not result.lstrip().startswith(("{", "[")):
        return result
    data = loads(result)
    if isinstance(data, list):
        return _blocks_text(data) or result
    if not isinstance(data, dict):
        return result
    single = _block_text(data)
    if single is not None and set(data) <= {"type", "text", "annotations", "_meta"}:
        return single
    keys = {"content", "isError", "structuredContent", "_meta"}
    if isinstance(data.get("content"), list) and data.get("isError") is not True and set(data) <= keys:
        return _blocks_text(data["content"]) or result
    return result


def unwrap(tool: ToolInvocation | None) -> ToolInvocation | None:
    """``tool`` with an MCP-shaped result read as its text."""
    if tool is None or tool.result is None:
        return tool
    text = result_text(tool.result)
    if text == tool.result:
        return tool
    return ToolInvocation(name=tool.name, call_id=tool.call_id, arguments=tool.arguments, result=text)

"""The scenario tools served over MCP (PyPI ``mcp`` 2.x, ``MCPServer``), on stdio.

``python -m tests.support.frameworks.mcp_server``: the MCP fixtures' agent starts it as its
tool server, so every tool result it records came back over the Model Context Protocol.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from tests.support.frameworks.scenarios import tool_text

server = MCPServer("support-tools")


@server.tool()
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return tool_text("get_weather", city=city)


@server.tool()
def search_orders(customer: str) -> str:
    """Orders placed by a customer."""
    return tool_text("search_orders", customer=customer)


@server.tool()
def get_order(order_id: str) -> str:
    """One order by its id."""
    return tool_text("get_order", order_id=order_id)


@server.tool()
def get_stock(sku: str) -> str:
    """Stock level of a product."""
    return tool_text("get_stock", sku=sku)


@server.tool()
def search_kb(query: str) -> str:
    """Search the support knowledge base."""
    return tool_text("search_kb", query=query)


if __name__ == "__main__":
    server.run("stdio")

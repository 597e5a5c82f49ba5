"""The scenarios' tools as plain typed Python functions with Google-style docstrings.

Most Python frameworks build a tool from such a function (its name, its docstring's first line as
the description, its ``Args:`` section as the parameter descriptions), so their generators share
these. Each returns ``scenarios.tool_text``: the same data for every framework. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.support.frameworks.scenarios import tool_text


def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name
    """
    return tool_text("get_weather", city=city)


def search_orders(customer: str) -> str:
    """Orders placed by a customer.

    Args:
        customer: Customer name
    """
    return tool_text("search_orders", customer=customer)


def get_order(order_id: str) -> str:
    """One order by its id.

    Args:
        order_id: Order id
    """
    return tool_text("get_order", order_id=order_id)


def get_stock(sku: str) -> str:
    """Stock level of a product.

    Args:
        sku: Product SKU
    """
    return tool_text("get_stock", sku=sku)


def search_kb(query: str) -> str:
    """Search the support knowledge base.

    Args:
        query: Search words
    """
    return tool_text("search_kb", query=query)


TOOLS: list[Callable[[str], str]] = [get_weather, search_orders, get_order, get_stock, search_kb]

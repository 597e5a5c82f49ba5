"""pydantic-ai 1.x fixtures (``pydantic_ai_v1.requirements.txt``): the loop of ``pydantic_ai.py``
with the 1.x series, whose default instrumentation (version 2) writes tool spans named
``running tool`` with ``tool_arguments`` / ``tool_response`` and the agent run's messages in
``pydantic_ai.all_messages``, beside Logfire's ``logfire.msg`` / ``logfire.json_schema``.

    scripts/framework-fixtures pydantic_ai_v1
"""

from __future__ import annotations

from tests.support.frameworks.pydantic_ai import main

if __name__ == "__main__":
    main()

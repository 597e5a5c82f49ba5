"""agno 1.x fixtures: ``agno.py``'s runs with agno 1.7 and ``openinference-instrumentation-agno`` 0.1.

That instrumentation writes a model call's reply only as ``output.value`` (agno's response, no
``llm.output_messages``), and a streamed call's as the text alone.

    scripts/framework-fixtures agno_legacy     # agno_legacy.requirements.txt, pinned
"""

from __future__ import annotations

from tests.support.frameworks.agno import main

if __name__ == "__main__":
    main()

"""The settings of a judge that change its verdicts, for the cache keys (issue 28).

A cached verdict may be served only to a run that would have produced it: the same claim, evidence,
model, prompt version and endpoint, and the same *settings*. Each LLM component names its own
(:meth:`cache_settings`): the sampling temperature, the evidence budget of the prompt (what part
of long evidence the model is shown), and for the cascade the offline stage in front of the model
(which claims are settled without a call). A setting that only changes how a call is made
(timeouts, retries, concurrency, output token limits, whose failures are never cached) is not
one of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable


@runtime_checkable
class Configured(Protocol):
    """A judge, decomposer or fused auditor whose settings change what it returns.

    Contract: ``cache_settings()`` names every setting, beyond the identity (model, prompt version)
    and the endpoint, that can change a cached result (a sampling temperature, the evidence budget
    of the prompt, a first stage that settles claims without the model), each as a string.
    """

    def cache_settings(self) -> Mapping[str, str]: ...


def settings_of(component: object) -> tuple[str, ...]:
    """``component``'s :class:`Configured` settings as sorted ``name=value`` key parts; () for
    a component without any (the offline judge, a third party's judge)."""
    if not isinstance(component, Configured):
        return ()
    return tuple(f"{k}={v}" for k, v in sorted(component.cache_settings().items()))

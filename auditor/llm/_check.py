"""The check before any work: does the endpoint answer, accept the key and know the model?

Without it an unreachable ``--base-url`` or a bad key surfaces only after minutes of retries, as
every claim ``unjudged: api_error``. :func:`check_endpoint` makes one cheap request in the common
case (``GET /models/{model}``), each with a short timeout and no retry, and turns a failure into
one sentence that names the endpoint (password masked), the reason and the fix.
"""

from __future__ import annotations

import os
import ssl
import urllib.parse
from typing import TYPE_CHECKING, Any, Literal

from auditor.errors import LLMConnectionError, LLMStatusError, LLMTimeoutError
from auditor.text import clip

if TYPE_CHECKING:
    import openai

# 400/422: the server read the request and accepted the key (a one-token probe may be too small
# for its rules); 429: it is there but busy. The audit's own calls and retries take it from there.
_REACHED = frozenset({400, 422, 429})


def masked_url(url: str) -> str:
    """``url`` with the password (if any) replaced by ``***``, for messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


async def check_endpoint(
    api: openai.AsyncOpenAI,
    model: str,
    where: str,
    timeout: float,
    token_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
) -> None:
    """Fail fast, with the reason, when ``model`` cannot be used at ``api``'s endpoint.

    ``GET /models/{model}`` first; a server without that route (vLLM) is asked for
    ``GET /models``; when the model is not listed there (an alias, a deployment name) or the server
    has no ``/models`` at all, a one-token completion decides. A 401 from any of them is final.

    Args:
        api: the client (its own retries off).
        model: the model name the audit will send.
        where: the endpoint for messages (password masked).
        timeout: seconds for each request.
        token_param: the token-limit parameter the model accepts.

    Raises:
        LLMConnectionError: the server cannot be reached (connection refused, DNS, TLS).
        LLMTimeoutError: it did not answer within ``timeout``.
        LLMStatusError: it rejected the key (401), has no such model (404) or failed (5xx).
    """
    import openai

    listed: list[str] | None = None
    try:
        try:
            await api.models.retrieve(model, timeout=timeout)
            return
        except openai.APIStatusError as err:
            if err.status_code == 401:
                raise
        try:
            page = await api.models.list(timeout=timeout)
            listed = [m.id for m in page.data]
            if model in listed:
                return
        except openai.APIStatusError as err:
            if err.status_code == 401:
                raise
        options: dict[str, Any] = {token_param: 1}
        await api.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "ping"}], timeout=timeout, **options
        )
    except openai.APIStatusError as err:
        if err.status_code in _REACHED:
            return
        raise _status_error(err, model, where, listed) from err
    except openai.APITimeoutError as err:
        raise LLMTimeoutError(
            f"The LLM server at {where} did not answer within {timeout:g}s: check --base-url "
            "(or AUDITOR_BASE_URL) and that the server is up, or use --judge offline."
        ) from err
    except openai.APIConnectionError as err:
        cause = connection_reason(err)
        raise LLMConnectionError(
            f"Cannot reach the LLM server at {where} ({cause}): check --base-url (or "
            "AUDITOR_BASE_URL) and that the server is running, or use --judge offline."
        ) from err


def connection_reason(err: BaseException) -> str:
    """The root of a connection failure in words: ``Connection refused``, a DNS or TLS error.

    ``openai`` says only "Connection error."; the operating system's reason sits a few causes down.
    """
    found = str(err)
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen and len(seen) < 12:
        seen.add(id(current))
        if isinstance(current, ssl.SSLError):
            return f"TLS error: {current.reason or current}"
        if isinstance(current, OSError) and current.errno:
            # asyncio words a refusal "Connect call failed (...)"; the errno's own text is clearer.
            return os.strerror(current.errno) if current.errno > 0 else current.strerror or str(current)
        found = str(current) or found
        current = current.__cause__ or current.__context__
    return found


def server_said(err: openai.APIStatusError) -> str:
    """The server's own error message, without ``openai``'s ``Error code: 500 - `` prefix."""
    return clip(str(err.message).removeprefix(f"Error code: {err.status_code} - "), 200)


def _status_error(
    err: openai.APIStatusError, model: str, where: str, listed: list[str] | None
) -> LLMStatusError:
    code, said = err.status_code, server_said(err)
    if code == 401:
        text = f"rejected the API key (HTTP 401: {said}): set a valid OPENAI_API_KEY"
    elif code == 403:
        text = f"refused access (HTTP 403: {said}): check the key's permissions for {model!r}"
    elif code == 404:
        known = f"; it lists {', '.join(listed[:8])}" if listed else ""
        text = (
            f"has no model {model!r} (HTTP 404: {said}{known}): check the name in --judge "
            "openai:MODEL, and that --base-url ends in /v1"
        )
    else:
        text = f"answered a test request with HTTP {code} ({said}): retry later or use --judge offline"
    return LLMStatusError(f"The LLM server at {where} {text}.", code)

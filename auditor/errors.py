"""Every error the auditor raises on purpose.

::

    AuditorError                 base: a message that says what to do next
    ├── UsageError               the user asked for something that cannot work (bad option, file)
    │   ├── UnknownAdapterError  ``--format`` names no installed adapter
    │   ├── UnrecognisedFormatError  no adapter recognises the input
    │   └── InputReadError       the operating system failed to read an input file (EIO, ...)
    ├── PolicyError              a policy file is invalid (file, key path, what was expected)
    ├── NothingReadError         an input yielded no trace at all
    ├── StoreError               the store cannot be opened or used (URL, driver, file, schema, run)
    │   └── LeaseLostError       another process took the run over: this one must stop writing it
    ├── ShardError               a distributed run's task failed after its retries (run kept, resumable)
    └── LLMError                 the model could not be asked (no key, or failure after retries)
        ├── LLMTimeoutError      every attempt timed out
        ├── LLMConnectionError   the server could not be reached
        └── LLMStatusError       an error status that retrying did not cure

Judges turn an ``LLMError`` into ``unjudged`` verdicts with a reason; it reaches the user only
when nothing could be asked at all (no key).

Bad content *inside* a trace is not an error: it becomes a :class:`~auditor.trace.Problem`.
"""

from __future__ import annotations

import errno


class AuditorError(Exception):
    """Base class; ``str(err)`` is a complete message for the user."""


class UsageError(AuditorError):
    pass


class UnknownAdapterError(UsageError):
    def __init__(self, name: str, available: list[str]) -> None:
        listed = ", ".join(available) if available else "none (install auditor-otel or auditor-langchain)"
        super().__init__(f"No trace adapter named {name!r}. Installed adapters: {listed}.")
        self.name = name
        self.available = available


class UnrecognisedFormatError(UsageError):
    def __init__(self, source: str, available: list[str]) -> None:
        listed = ", ".join(available) if available else "none"
        super().__init__(
            f"{source}: no installed adapter recognises this file. Pass --format with one of: {listed}."
        )
        self.source = source
        self.available = available


class InputReadError(UsageError):
    """An ``OSError`` while reading an input: one line naming the file and the OS error."""

    def __init__(self, path: object, error: OSError) -> None:
        name = errno.errorcode.get(error.errno) if error.errno is not None else None
        text = error.strerror or str(error) or type(error).__name__
        super().__init__(
            f"{path}: could not read the file: {text}{f' ({name})' if name else ''}. "
            "Check the file and the disk (or copy the file elsewhere) and run again."
        )
        self.path = path
        self.error = error


class PolicyError(AuditorError):
    pass


class NothingReadError(AuditorError):
    pass


class StoreError(AuditorError):
    """The store cannot do what was asked: one line naming the database (password masked)."""


class LeaseLostError(StoreError):
    """The run's lease ran out and another process claimed it: this process no longer writes it."""


class ShardError(AuditorError):
    """Tasks of a distributed run (``--engine ray``) failed after their retries: their traces are
    named in the run's problems, the run is left interrupted and a rerun of the command resumes it."""


class LLMError(AuditorError):
    """The model could not be asked: no key, or failure after retries (judges make it ``unjudged``)."""


class LLMTimeoutError(LLMError):
    """Every attempt timed out."""


class LLMConnectionError(LLMError):
    """The server could not be reached (after retries)."""


class LLMStatusError(LLMError):
    """The server answered with an error status that retrying did not cure."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code

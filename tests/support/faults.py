"""The fault corpus: generated hostile inputs, policies and stores, and the promise each must keep.

Nothing here is committed as data: every case is made from the repository's own fixtures by a
seeded generator, so a failing case is reproduced by its id alone (``CASES[id]``). A case names the
command line to run and what must hold: the command ends with a known exit status (0 ran, 2 a clear
error, 3 ran with unjudged claims, 4 ran but a trace with model calls gave no answer), prints no traceback, says a failure in one line, and keeps the
traces it could read (``keep``: the answers a clean copy of the file has must still be audited).

Run ``python -m tests.support.faults`` to list the cases and their counts per family.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
POLICIES = ROOT / "policies"

#: Text that must never reach a terminal raw: ESC sequences, an OSC 52 clipboard write, a C1 control.
HOSTILE_TEXT = "\x1b[2J\x1b]52;c;cHduZWQ=\x07\x9b31m\u202eevil"
#: Policy regexes that backtrack catastrophically in Python's ``re``.
EVIL_PATTERNS = ("(a+)+$", "(a|a?)+$", r"^(\w+\s?)*$")


@dataclass(frozen=True)
class Case:
    """One hostile case: the files it writes, the command it runs and what must still come out."""

    id: str
    family: str
    files: dict[str, bytes]
    argv: tuple[str, ...]  # ``{dir}`` is replaced by the case's folder
    keep: str | None = None  # a clean file whose answers must all still be audited
    isolate: bool = False  # run in a subprocess: a hang may sit in C code no signal interrupts
    absent_after: str | None = None  # a path the command must not create (``{dir}`` as in argv)


# -- base inputs --------------------------------------------------------------------------------


def _two_trace_otlp() -> bytes:
    """Two traces of different scenarios in one Collector-style JSONL file."""
    return b"".join(
        (FIXTURES / name / "openinference.otlp.jsonl").read_bytes().rstrip(b"\n") + b"\n"
        for name in ("single_retrieval", "changed_figure")
    )


def _two_trace_runtree() -> bytes:
    """Two run trees as JSONL, one run per line."""
    lines = []
    for name in ("single_retrieval", "changed_figure"):
        data = json.loads((FIXTURES / name / "runtree.json").read_text(encoding="utf-8"))
        runs = data["runs"] if isinstance(data, dict) and "runs" in data else data
        runs = runs if isinstance(runs, list) else [runs]
        lines.extend(json.dumps(run) for run in runs)
    return ("\n".join(lines) + "\n").encode()


def _records() -> bytes:
    rows = [
        {
            "id": f"fault:{n}",
            "dataset": "fault",
            "task_type": "QA",
            "unit": "answer",
            "question": "How long is the warranty?",
            "sources": [{"id": "kb", "text": "The X200 carries a 12-month warranty. Shipping takes 5 days."}],
            "answer": f"The X200 carries a {12 + n}-month warranty.",
            "labels": [],
        }
        for n in range(2)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _records_array() -> bytes:
    """The records in RAGAS's export shape, as one JSON array."""
    rows = [json.loads(line) for line in _records().decode().splitlines()]
    ragas = [
        {
            "user_input": r["question"],
            "retrieved_contexts": [s["text"] for s in r["sources"]],
            "response": r["answer"],
        }
        for r in rows
    ]
    return json.dumps(ragas, indent=1).encode()


def _records_csv() -> bytes:
    """The records in the Hugging Face ``datasets`` shape, as CSV with a list-valued contexts column."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["question", "contexts", "answer"])
    for line in _records().decode().splitlines():
        r = json.loads(line)
        writer.writerow([r["question"], json.dumps([s["text"] for s in r["sources"]]), r["answer"]])
    return out.getvalue().encode()


BASES: dict[str, Callable[[], bytes]] = {
    "otlp.jsonl": _two_trace_otlp,
    "runtree.jsonl": _two_trace_runtree,
    "records.jsonl": _records,
    "records.json": _records_array,
    "records.csv": _records_csv,
    "otlp.pb": lambda: (FIXTURES / "single_retrieval" / "openinference.otlp.pb").read_bytes(),
}
#: Formats forced for bases that are not sniffed unambiguously (the records adapter is opt-in).
FORMAT_OF = {"records.jsonl": "records", "records.json": "records", "records.csv": "records"}


# -- JSON value mutations -------------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:8]):
            yield from _paths(item, (*prefix, index))


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _set(value[head], rest, new)
    return copy


def _wrong(value: Any, rng: random.Random) -> Any:
    """A value of another type than ``value`` (or an impossible one of the same type)."""
    choices: list[Any] = [None, -1, 1e308, "x", [], {}, True, "\ud800", HOSTILE_TEXT, "9" * 400]
    if isinstance(value, str):
        choices += [5, ["a"], {"a": 1}]
    elif isinstance(value, (int, float)):
        choices += ["not a number", -(10**20), [1]]
    elif isinstance(value, list):
        choices += [{"0": value[:1]}, "list"]
    elif isinstance(value, dict):
        choices += [[value], "object"]
    return rng.choice(choices)


def _deep(depth: int) -> bytes:
    """A JSON object nested ``depth`` deep, as text (``json.dumps`` itself would recurse too far)."""
    return b'{"a": [' * depth + b'"leaf"' + b"]}" * depth


def _json_lines(data: bytes) -> list[Any] | None:
    try:
        return [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def _dump_lines(rows: list[Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


# -- byte-level mutations -------------------------------------------------------------------------


def _byte_mutants(data: bytes, rng: random.Random, count: int) -> Iterator[tuple[str, bytes]]:
    for n in range(count):
        cut = rng.randrange(1, max(2, len(data)))
        yield f"truncate-{n}", data[:cut]
    for n in range(count):
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            position = rng.randrange(len(flipped))
            flipped[position] = rng.randrange(256)
        yield f"flip-{n}", bytes(flipped)
    yield "bom", b"\xef\xbb\xbf" + data
    yield "empty", b""
    yield "newlines", b"\n" * 5000
    yield "nul", b"\x00" * 4096
    yield "gzip", gzip.compress(data)
    whole = gzip.compress(data)
    yield "gzip-truncated", whole[: len(whole) * 2 // 3]
    yield "cesu8-surrogate", data.replace(b'"', b'"\xed\xa0\x80', 1)


def _line_mutants(data: bytes, rng: random.Random, count: int) -> Iterator[tuple[str, bytes, bool]]:
    """Mutants of one JSON line or value; the flag says whether the other traces must survive."""
    rows = _json_lines(data)
    if rows is None:
        return
    garbage = b"{" + b"x" * 10_000 + b"\n"
    yield "overlong-first-line", garbage + data, True
    yield "bad-first-line", b"not json at all\n" + data, True
    yield "deep-first-line", _deep(1000) + b"\n" + data, True
    yield "deep-last-line", data + _deep(5000) + b"\n", True
    yield "surrogate-line", data.replace(b'"', b'"\\ud800', 3), False
    yield (
        "control-text",
        data.replace(b'"', ('"' + HOSTILE_TEXT.encode("unicode_escape").decode()).encode(), 5),
        False,
    )
    huge = dict(rows[0]) if isinstance(rows[0], dict) else {"value": rows[0]}
    huge["huge"] = "word " * 400_000
    yield "huge-string", _dump_lines([huge, *rows[1:]]), False
    for n in range(count):
        index = rng.randrange(len(rows))
        paths = list(_paths(rows[index]))
        path = rng.choice(paths[1:] or paths)
        mutated = list(rows)
        try:
            mutated[index] = _set(
                rows[index], path, _wrong(None, rng) if not path else _wrong(_get(rows[index], path), rng)
            )
        except (KeyError, IndexError, TypeError):
            continue
        yield f"wrong-type-{n}", _dump_lines(mutated), False


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def input_cases(rng: random.Random, per_base: int) -> Iterator[Case]:
    for name, make in BASES.items():
        data = make()
        fmt = FORMAT_OF.get(name)
        force = ("--format", fmt) if fmt else ()
        clean = f"clean.{name}"
        for label, blob in _byte_mutants(data, rng, per_base):
            yield _audit_case(f"input/{name}/{label}", "input", name, blob, force, clean, data, keep=False)
        for label, blob, keep in _line_mutants(data, rng, per_base):
            yield _audit_case(f"input/{name}/{label}", "input", name, blob, force, clean, data, keep=keep)


def _audit_case(
    case_id: str,
    family: str,
    name: str,
    blob: bytes,
    force: tuple[str, ...],
    clean: str,
    data: bytes,
    keep: bool,
) -> Case:
    suffix = ".gz" if blob[:2] == b"\x1f\x8b" else ""
    target = f"mutant.{name}{suffix}"
    return Case(
        id=case_id,
        family=family,
        files={target: blob, clean: data},
        argv=("audit", f"{{dir}}/{target}", *force, "--no-store", "--json", "-"),
        keep=clean if keep else None,
    )


# -- policies -------------------------------------------------------------------------------------


def _hostile_records() -> bytes:
    """Records whose document metadata is built to make backtracking regexes explode."""
    rows = json.loads("[" + _records().decode().strip().replace("\n", ",") + "]")
    for row in rows:
        row["sources"][0]["metadata"] = {"title": "a" * 5000 + "!", "url": "word " * 3000 + "!"}
    return _dump_lines(rows)


def policy_cases(rng: random.Random, count: int) -> Iterator[Case]:
    base = (POLICIES / "strict.toml").read_text(encoding="utf-8")
    trace = str(FIXTURES / "single_retrieval" / "openinference.otlp.jsonl")
    mutants: list[tuple[str, str]] = [
        ("inf-age", base.replace("max_age_days = 365", "max_age_days = inf")),
        ("nan-age", base.replace("max_age_days = 365", "max_age_days = nan")),
        ("huge-age", base.replace("max_age_days = 365", "max_age_days = 1e308")),
        ("negative-age", base.replace("max_age_days = 365", "max_age_days = -1")),
        ("nan-threshold", base.replace("claim_support = 0.9", "claim_support = nan")),
        ("deep-array", "x = " + "[" * 5000 + "]" * 5000 + "\n" + base),
        ("invalid-toml", base + "\n[[[broken\n"),
        ("bom", "\ufeff" + base),
        ("unknown-key", base + "\nnot_a_key = 1\n"),
        ("huge-comment", base + f"\n# {'y' * 1_000_000}\n"),
        ("binary", "\x00\x01\x02" * 100),
        ("empty", ""),
    ]
    lines = base.splitlines()
    for n in range(count):
        mutated = list(lines)
        index = rng.randrange(len(mutated))
        if "=" in mutated[index]:
            key = mutated[index].split("=", 1)[0]
            mutated[index] = (
                key + "= " + rng.choice(['"x"', "-1", "1e999", "[1, [2]]", "{a = 1}", "true", '"\\ud800"'])
            )
        else:
            mutated[index] = mutated[index][: rng.randrange(len(mutated[index]) + 1)]
        mutants.append((f"mutant-{n}", "\n".join(mutated) + "\n"))
    for label, text in mutants:
        data = text.encode("utf-8", "surrogatepass")
        yield Case(f"policy/{label}/check", "policy", {"p.toml": data}, ("policy", "check", "{dir}/p.toml"))
        yield Case(
            f"policy/{label}/audit",
            "policy",
            {"p.toml": data},
            ("audit", trace, "--policy", "{dir}/p.toml", "--no-store", "--json", "-"),
        )
    default = (POLICIES / "default.toml").read_text(encoding="utf-8")
    for n, pattern in enumerate(EVIL_PATTERNS):
        for key in ("title", "url"):
            text = default.replace(
                'kinds = ["retrieved_document"]\n',
                f'kinds = ["retrieved_document"]\n[sources.metadata]\n{key} = {{ regex = {json.dumps(pattern)} }}\n',
                1,
            )
            files = {"p.toml": text.encode(), "r.jsonl": _hostile_records()}
            yield Case(
                f"policy/evil-regex-{n}-{key}/audit",
                "policy",
                files,
                (
                    "audit",
                    "{dir}/r.jsonl",
                    "--format",
                    "records",
                    "--policy",
                    "{dir}/p.toml",
                    "--no-store",
                    "--json",
                    "-",
                ),
                isolate=True,
            )


# -- stores ---------------------------------------------------------------------------------------


def store_cases() -> Iterator[Case]:
    trace = str(FIXTURES / "single_retrieval" / "openinference.otlp.jsonl")
    sqlite_header = b"SQLite format 3\x00"
    stores: list[tuple[str, str, dict[str, bytes]]] = [
        ("text-file", "sqlite:///{dir}/text.db", {"text.db": b"this is not a database\n" * 10}),
        ("truncated", "sqlite:///{dir}/cut.db", {"cut.db": sqlite_header + b"\x10\x00" + b"\x00" * 50}),
        ("directory", "sqlite:///{dir}", {}),
        ("missing-dir", "sqlite:///{dir}/no/such/dir/a.db", {}),
        ("postgres-scheme", "postgres://nobody@127.0.0.1:1/nothing", {}),
        ("unreachable", "postgresql+psycopg://nobody@127.0.0.1:1/nothing", {}),
        ("garbage-url", "::not a url::", {}),
        ("unknown-driver", "mysql+nosuchdriver://u@127.0.0.1/x", {}),
    ]
    for label, url, files in stores:
        absent = "{dir}/no" if label == "missing-dir" else None
        yield Case(f"store/{label}/runs", "store", files, ("runs", "--db", url), absent_after=absent)
        yield Case(f"store/{label}/audit", "store", files, ("audit", trace, "--db", url, "--json", "-"))


# -- the whole corpus -----------------------------------------------------------------------------


def corpus(seed: int = 20261201, per_base: int = 40, policy_mutants: int = 40) -> dict[str, Case]:
    """Every case, by id; the same seed gives the same corpus."""
    rng = random.Random(seed)
    cases = [*input_cases(rng, per_base), *policy_cases(rng, policy_mutants), *store_cases()]
    by_id: dict[str, Case] = {}
    for case in cases:
        by_id.setdefault(case.id, case)
    return by_id


def run_tree_files() -> list[bytes]:
    """The corpus's LangChain run-tree files (bad inputs of every kind), for the tests that read
    every run tree two ways and compare."""
    return [
        data
        for case in corpus().values()
        for name, data in case.files.items()
        if name.endswith((".json", ".jsonl")) and b"run_type" in data[:4096] and b"resourceSpans" not in data
    ]


def sample(cases: dict[str, Case], size: int, seed: int = 7) -> list[Case]:
    """A fixed sample with every family and every base represented (CI); all cases if ``size`` is 0."""
    ordered = sorted(cases.values(), key=lambda c: c.id)
    if not size or size >= len(ordered):
        return ordered
    fixed = [c for c in ordered if not c.id.rsplit("/", 1)[-1].split("-")[-1].isdigit()]
    rest = [c for c in ordered if c not in fixed]
    picked = random.Random(seed).sample(rest, max(0, min(len(rest), size - len(fixed))))
    return sorted([*fixed, *picked], key=lambda c: c.id)


if __name__ == "__main__":
    everything = corpus()
    print(f"{len(everything)} cases:", dict(Counter(c.family for c in everything.values())))

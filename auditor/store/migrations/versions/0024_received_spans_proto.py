"""Received spans kept as protobuf (``received_spans.proto``) with their service (``.service``).

A span of a protobuf request body was stored as one-span OTLP JSON, and turning each span into JSON
took about three quarters of the reader's time (about 45 of 60 µs a span), which held the stored
rate under what the file adapter parses. Such a span is now kept as a one-span protobuf request
(``proto``; ``record`` is empty) and turned into JSON when its trace is audited. ``service`` holds
its resource's ``service.name``, which the ``service`` filter matches without the record's text.
Both columns are added empty, so the upgrade is quick on any store: rows stored before it keep
their JSON records. PostgreSQL compresses ``proto`` with lz4 (as ``record``, migration 0018).

The downgrade writes each span held as protobuf back as its JSON record (revision 0023 reads only
that), through the installed adapter that reads such spans (``otlp-proto``); without it, it refuses.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-07

"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from auditor.store.migrations._compression import compress_with_lz4

revision: str = "0024"
down_revision: str | Sequence[str] | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    # ``service`` first: SQLite reads a row's columns in order, and the filter reads it, not the bytes.
    op.add_column("received_spans", sa.Column("service", sa.Text(), nullable=True))
    op.add_column("received_spans", sa.Column("proto", sa.LargeBinary(), nullable=True))
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        compress_with_lz4(bind, "received_spans", "proto")


def downgrade() -> None:
    """Downgrade schema."""
    bind = op.get_bind()
    held = bind.scalar(sa.text("SELECT count(*) FROM received_spans WHERE proto IS NOT NULL"))
    if held:
        _write_back_as_json(bind, held)
    with op.batch_alter_table("received_spans", schema=None) as batch_op:
        batch_op.drop_column("proto")
        batch_op.drop_column("service")


def _write_back_as_json(bind: sa.Connection, held: int) -> None:
    from auditor.trace import BinaryRecords, installed_adapters

    reader = next((a.adapter for a in installed_adapters() if isinstance(a.adapter, BinaryRecords)), None)
    if reader is None:
        raise RuntimeError(
            f"{held} received spans are stored as protobuf, and no installed adapter turns them into "
            "the JSON records revision 0023 reads: install auditor-otel, or prune them "
            "(`auditor db prune --spans AGE`), before downgrading."
        )
    rows = sa.text("SELECT trace_id, span_id, proto FROM received_spans WHERE proto IS NOT NULL LIMIT 500")
    update = sa.text(
        "UPDATE received_spans SET record = :record, proto = NULL WHERE trace_id = :trace_id AND span_id = :span_id"
    )
    while batch := bind.execute(rows).all():
        bind.execute(
            update,
            [
                {"record": reader.record_json(bytes(proto)), "trace_id": trace_id, "span_id": span_id}
                for trace_id, span_id, proto in batch
            ],
        )

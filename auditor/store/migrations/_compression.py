"""PostgreSQL column compression for migrations 0018 and 0020: lz4, or none where the server lacks it.

Frozen with the revisions that call it: a later change of policy is a new revision, not an edit here.
"""

from __future__ import annotations

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError


def compress_with_lz4(bind: Connection, table: str, column: str) -> None:
    """``table.column`` compressed with lz4 rather than pglz; stored uncompressed (``STORAGE
    EXTERNAL``) on a server without lz4 (before PostgreSQL 14, or built without it)."""
    try:
        with bind.begin_nested():  # a savepoint: a server without lz4 refuses, and the migration goes on
            bind.exec_driver_sql(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION lz4")
    except DBAPIError:
        bind.exec_driver_sql(f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE EXTERNAL")


def compress_by_default(bind: Connection, table: str, column: str) -> None:
    """``table.column`` back to PostgreSQL's default storage and compression."""
    bind.exec_driver_sql(f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE EXTENDED")
    try:
        with bind.begin_nested():
            bind.exec_driver_sql(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION DEFAULT")
    except DBAPIError:
        pass  # before PostgreSQL 14 there is no per-column compression to reset

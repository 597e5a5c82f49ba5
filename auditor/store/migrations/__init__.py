"""Alembic migrations for the store, shipped inside the package.

They run from code (:func:`auditor.store.upgrade`, ``auditor db upgrade``): there is no
``alembic.ini``. :func:`alembic_config` builds the configuration, pointing Alembic at this
directory through :mod:`importlib.resources`, so editable and wheel installs behave alike.

To write a new revision, change :mod:`auditor.store._schema` and autogenerate against a scratch
database at head (``docs/store.md``, "Changing the schema"); review the result by hand.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from alembic.config import Config


def script_location() -> Path:
    """The directory holding ``env.py`` and ``versions/``."""
    return Path(str(files("auditor.store.migrations")))


def alembic_config(url: str) -> Config:
    """An Alembic configuration for the database at ``url``, built in code."""
    config = Config()
    config.set_main_option("script_location", str(script_location()))
    # ConfigParser interpolation treats "%" specially (URL-encoded passwords, options).
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config

"""Policy files shipped with the auditor (package data, read with importlib.resources)."""

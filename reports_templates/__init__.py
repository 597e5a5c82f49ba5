"""Jinja2 report templates shipped with the auditor (package data)."""

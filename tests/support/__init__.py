"""Test support code: fixture generators for trace-auditor tests."""

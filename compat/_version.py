"""The single source of trl-compat's version (read by pyproject.toml and the CLI)."""

__version__ = "0.1.0"

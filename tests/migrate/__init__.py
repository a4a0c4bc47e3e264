"""Tests of the migrator engine (`compat.migrate`): API, CLI, safety, notebooks, walking, reports."""

"""Migrations forced by TRL 1.1."""

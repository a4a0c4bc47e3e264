"""Migrations forced by TRL 1.3."""

"""Migrations forced by TRL 0.15."""

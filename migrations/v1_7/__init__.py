"""Migrations forced by TRL 1.7."""

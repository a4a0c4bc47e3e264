"""Migrations forced by transformers 4.52."""

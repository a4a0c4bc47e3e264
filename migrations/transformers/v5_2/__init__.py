"""Migrations forced by transformers 5.2."""

"""Migrations forced by transformers 4.35."""

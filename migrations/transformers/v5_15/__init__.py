"""Migrations forced by transformers 5.15."""

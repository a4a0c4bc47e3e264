"""Migrations forced by transformers 5.0."""

"""Migrations forced by transformers 4.53."""

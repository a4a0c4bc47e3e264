"""Migrations forced by peft 0.10."""

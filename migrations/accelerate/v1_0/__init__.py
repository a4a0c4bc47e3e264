"""Migrations forced by accelerate 1.0."""

"""Migrations forced by accelerate 0.20."""

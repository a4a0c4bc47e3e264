"""trl-compat runtime layer (placeholder until the foundation issue lands)."""

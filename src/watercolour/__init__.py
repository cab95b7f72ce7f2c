"""watercolour."""

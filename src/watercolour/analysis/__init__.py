"""Curves, tables and galleries."""

"""Reads: what a viewer may see of the table, shaped as the socket protocol sends it."""

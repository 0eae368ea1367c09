"""The table's socket protocol, declared once and checked at the edge."""

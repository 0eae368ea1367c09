"""Imports every system module so each registers itself, in the order players see them."""
# ruff: noqa: I001  (the import order is the order of the registry)

from . import generic, zoria, roll_and_keep, d6_chance, discordian, action_dice  # noqa: F401

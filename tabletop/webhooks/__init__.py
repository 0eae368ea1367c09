"""Outgoing webhooks: the address guard (``address``), one bounded POST (``post``), what a chat
channel is sent (``chat``) and the durable sender (``sender``). The GM's settings are services
(``tabletop/services/webhooks.py``)."""

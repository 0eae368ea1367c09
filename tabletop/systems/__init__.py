"""Each game system's table rules, one module per system (``<engine id>`` with ``_`` for ``-``).

``registry`` is the seam the core services call; ``base`` holds what the systems share. A
system module defines ``table`` (a ``registry.TableSystem``) and ``commands`` (its socket
commands); the registry finds every module of this package at app start, so a new system is
one new module here and touches no core module."""

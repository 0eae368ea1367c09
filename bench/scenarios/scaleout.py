"""Scale-out: many tables on the deployed setup (PostgreSQL, Redis, daphne processes behind nginx
serving the shipped ``deploy/nginx.conf``, each room's sockets on one process) with 1, 2 and 4
processes, against the bare floor.

The many-tables benchmark (``bench.scenarios.tables``: its options all apply) with other
defaults: ``--setups bare,deployed --processes 1,2,4 --runs 1 --seconds 20 --most 400,600``.
For each count of processes: p99 as a multiple of the bare server's, each process's CPU per
roll, nginx's CPU, and the most tables held at p99 <= 3x bare (the larger counts stop at the
first miss). What the processes can add depends on the cores free for them: on a machine of
2 cores, 4 processes share them with PostgreSQL, Redis, nginx and the clients.

    .venv/bin/python -m bench.scenarios.scaleout                  # about 10 minutes
    .venv/bin/python -m bench.scenarios.scaleout --setups bare,default,deployed,spread
"""

from __future__ import annotations

import asyncio

from bench.scenarios import tables

DEFAULTS = {
    "setups": "bare,deployed",
    "processes": "1,2,4",
    "runs": 1,
    "seconds": 20.0,
    "most": "400,600",
}

if __name__ == "__main__":
    asyncio.run(tables.main(name="scaleout", doc=__doc__, defaults=DEFAULTS))

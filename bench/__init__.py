"""The table's benchmarks, a package run from the repository root with ``python -m``:

- ``bench.harness``: the servers (the one harness, shared with the tests that need real
  processes) and the benchmark setups (bare floor, defaults, deployed);
- ``bench.measure``: statistics, socket clients, meters, result files;
- ``bench.scenarios.<name>``: the room scenarios (fanout, burst, saturation, tables, soak, page,
  queries, profile); ``bench.run`` runs them all;
- ``bench.engines``: the dice engines against avrae's d20, and odds times;
- ``bench.report``: the latest tables of all of them;
- ``bench.servers``: what the measured servers load (settings, timing recorder, the bare floor).

Speed is judged as ratios to a floor run side by side, medians of repeated runs; see
docs/benchmarks.md.
"""

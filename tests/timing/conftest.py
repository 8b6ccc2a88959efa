"""Timed guards: tests that judge by the clock (how long the tool takes on adversarial inputs).

Each takes seconds, and its verdict depends on how busy the machine is, so they are not part of
the quick loop (`pytest -n auto tests/unit`); the full suite (CI, the README's test command)
runs them. How fast the tool is for its users is measured with the benchmark scripts
(scripts/bench_*.py, scripts/device/speed_*.sh), not here: these only catch a pattern or a stage
that stops being linear."""

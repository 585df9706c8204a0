"""Runs of many traced and untraced workloads: scenario matrices
(run_matrix.py, scenario.py, scenarios/), the studies (study.py,
studies/) and the durability check (durability.py)."""

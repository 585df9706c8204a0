"""python3 -m runners.workloads.postgres: see runners/workloads/postgres/__init__.py."""
from runners.workloads.postgres.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

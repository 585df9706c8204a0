"""python3 -m runners.postgres: see runners/postgres/__init__.py."""
from runners.postgres.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

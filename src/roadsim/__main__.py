"""`python -m roadsim`: the `roadsim` command."""

from roadsim.cli import main

raise SystemExit(main())

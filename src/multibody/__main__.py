"""``python -m multibody``: the command line (multibody.cli)."""
from .cli import main

raise SystemExit(main())

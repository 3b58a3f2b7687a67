"""``python -m neotask_tui``."""

from neotask_tui.cli import main

raise SystemExit(main())

"""`python -m ohtui` runs the command line."""

from ohtui.cli import main

raise SystemExit(main())

"""``python -m gobpm_nb check model.bpmn`` (see ``cli.py``)."""

from .cli import main

raise SystemExit(main())

"""Notebook widgets: anywidget classes over one bundled ES module, and update coalescing.

The front end lives in ``widgets/`` (repository root) and is bundled into
``gobpm_nb/static/widget.js``; this package only declares the synced traits and routes the
commands the dashboard sends back.
"""

from gobpm_nb.ui.coalesce import Coalescer
from gobpm_nb.ui.widgets import DashboardWidget, GraphWidget

__all__ = ["Coalescer", "DashboardWidget", "GraphWidget"]

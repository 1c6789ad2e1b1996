"""Notebook widgets: anywidget classes over one bundled ES module, and update coalescing.

The front end lives in ``widgets/`` (repository root) and is bundled into
``gobpm_nb/static/widget.js``; ``widgets`` declares the synced traits and routes the commands
the dashboard sends back, ``views`` binds them to a live engine (``lineage_view``,
``process_view``, ``dashboard``).
"""

from gobpm_nb.ui.coalesce import Coalescer
from gobpm_nb.ui.views import (
    Dashboard,
    LineageView,
    ProcessView,
    dashboard,
    dashboard_traits,
    flush_all,
    lineage_view,
    process_view,
)
from gobpm_nb.ui.widgets import DashboardWidget, GraphWidget

__all__ = ["Coalescer", "Dashboard", "DashboardWidget", "GraphWidget", "LineageView",
           "ProcessView", "dashboard", "dashboard_traits", "flush_all", "lineage_view",
           "process_view"]

"""Notebook widgets: anywidget classes over a small ES module each (the views, Graphviz and
the BPMN viewer come once per page in a shared module), and update coalescing.

The front end lives in ``widgets/`` (repository root) and is bundled into
``gobpm_nb/static/widget.js`` (the loader) and ``shared.js`` (sent once: ``shared``);
``widgets`` declares the synced traits and routes the commands the dashboard sends back,
``views`` binds them to a live engine (``lineage_view``, ``process_view``, ``dashboard``),
``process`` builds what a process view shows, ``population`` draws a scenario's run
(``PopulationDashboard``).
"""

from gobpm_nb.ui.coalesce import Coalescer
from gobpm_nb.ui.population import PopulationDashboard
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
from gobpm_nb.ui.widgets import DashboardWidget, GraphWidget, PopulationWidget

__all__ = ["Coalescer", "Dashboard", "DashboardWidget", "GraphWidget", "LineageView",
           "PopulationDashboard", "PopulationWidget", "ProcessView", "dashboard",
           "dashboard_traits", "flush_all", "lineage_view", "process_view"]

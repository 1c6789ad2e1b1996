"""Population what-ifs on the real engine (``docs/scenario.md``): a scenario of arrivals,
data, durations, staff and calendars; a run that drives the engine on virtual time; KPIs as
pandas DataFrames, plots, the event log; replications on Dask. pandas, numpy, matplotlib,
tqdm and Dask come with the ``population`` extra and are imported on first use."""

from .results import Population, compare
from .scenario import Scenario

__all__ = ["Population", "Scenario", "compare"]

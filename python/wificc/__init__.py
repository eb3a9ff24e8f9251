"""wificc: a laboratory for TCP congestion control over Wi-Fi.

``wificc.run(scenario)`` simulates a scenario (a dict, a TOML or JSON file, or TOML text) and
returns a :class:`Result` of pandas DataFrames; ``wificc.validate(scenario)`` returns the
scenario with every default filled in; ``wificc.cc_list()`` lists the congestion controls;
``wificc.sweep(grid, out)`` runs a parameter grid into a results directory (``wificc.sweep``
is that function; its module is imported as ``from wificc.sweep import ...``).
"""

from wificc.api import cc_list, run, validate
from wificc.result import Result
from wificc.sweep import sweep

__all__ = ["Result", "cc_list", "run", "sweep", "validate"]

"""The data query service's own client: every endpoint, every page, as a DataFrame or dicts."""

from ._http import DqsError
from ._version import __version__
from .client import Client

__all__ = ["Client", "DqsError", "__version__"]

"""A method per endpoint of the service; each walks every page."""

import json
import os

from . import _table
from ._http import JSON, DqsError, Transport
from ._webhooks import Webhooks

CSV = "text/csv"

# The spec's largest page (section 8): the fewest requests for a paged walk.
_PAGE = 1000


def _params(options):
    """Keyword arguments as query parameters: a trailing underscore frees a Python keyword (from_ is from)."""
    return {name[:-1] if name.endswith("_") else name: value for name, value in options.items()}


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError('as_frame=True needs pandas: pip install "dqs_client[pandas]", or pass as_frame=False for dicts') from None
    return pandas


class Client:
    """The data query service at ``base_url`` (default: $DQS_URL) with ``api_key`` (default: $DQS_API_KEY).

    Every parameter a method does not name is sent as a query parameter, as
    /openapi.json describes it (a list repeats the parameter; ``from_`` sends ``from``).
    429s are retried after their Retry-After; 5xx and network failures after a
    jittered back-off; at most ``max_retries`` times and ``max_wait`` seconds in all.
    ``on_retry`` is called before each wait with a dict of its reason, attempt, wait
    (seconds), status and the error that caused it. ``webhooks`` manages this key's
    webhooks (/v1/webhooks), whose calls are never retried.
    """

    def __init__(
        self,
        base_url=None,
        api_key=None,
        *,
        max_retries=5,
        max_wait=180.0,
        base_delay=0.25,
        max_delay=10.0,
        timeout=300.0,
        on_retry=None,
    ):
        base_url = base_url or os.environ.get("DQS_URL")
        api_key = api_key or os.environ.get("DQS_API_KEY")
        if not base_url or not api_key:
            raise ValueError("Client needs base_url and api_key, or DQS_URL and DQS_API_KEY in the environment")
        self._http = Transport(base_url, api_key, max_retries, max_wait, base_delay, max_delay, timeout, on_retry)
        self._catalogs = {}
        self.webhooks = Webhooks(self._http)

    def _json(self, path, params):
        return json.loads(self._http.get(path, params, JSON)[1].decode("utf-8"))

    def _pages(self, path, params):
        """The CSV text of each page, followed by X-Next-Cursor (absent on the last page)."""
        cursor = params.pop("cursor", None)
        while True:
            headers, body = self._http.get(path, {**params, "format": "csv", "cursor": cursor}, CSV)
            yield body.decode("utf-8")
            cursor = headers.get("x-next-cursor")
            if not cursor:
                return

    def _table(self, path, dataset, params, as_frame, decimal):
        # Without pandas, a frame fails before any request is spent.
        pandas = _pandas() if as_frame else None
        release = {name: params.get(name) for name in ("release", "as_of")}
        key = tuple(release.values())
        if key not in self._catalogs:
            self._catalogs[key] = self.catalog(**release)
        columns = _table.Columns(self._catalogs[key], dataset)
        if pandas is None:
            return _table.rows(self._pages(path, params), columns, decimal)
        return _table.frame(pandas, _table.join_pages(self._pages(path, params)), columns, decimal)

    def financials(self, metric, *, as_frame=True, decimal=False, **filters):
        """Every row of ``metric`` matching ``filters`` (GET /v1/financials), across every page."""
        return self._table("/v1/financials", metric, {"metric": metric, "limit": _PAGE, **_params(filters)}, as_frame, decimal)

    def reference(self, dataset, *, as_frame=True, **options):
        """Every row of a reference dataset (GET /v1/reference), across every page."""
        return self._table("/v1/reference", dataset, {"dataset": dataset, "limit": _PAGE, **_params(options)}, as_frame, False)

    def aggregate(self, metric, *, as_frame=True, decimal=False, **options):
        """Every group of an aggregate (GET /v1/aggregate); ``decimal=True`` reads sums as exact Decimals."""
        return self._table("/v1/aggregate", metric, {"metric": metric, **_params(options)}, as_frame, decimal)

    def revisions(self, metric, *, as_frame=True, decimal=False, **options):
        """Every row of ``metric`` that differs between two releases (GET /v1/revisions; ``from_``, ``to``)."""
        return self._table("/v1/revisions", metric, {"metric": metric, **_params(options)}, as_frame, decimal)

    def history(self, metric, *, as_frame=True, decimal=False, **options):
        """Each observation of ``metric`` release after release (GET /v1/history; ``from_``, ``to``, ``output``)."""
        return self._table("/v1/history", metric, {"metric": metric, **_params(options)}, as_frame, decimal)

    def export(self, metric, *, as_frame=True, decimal=False, **filters):
        """Every row of ``metric`` matching ``filters`` in one CSV file (GET /v1/export; counts against the daily export budget)."""
        return self._table("/v1/export", metric, {"metric": metric, **_params(filters)}, as_frame, decimal)

    def facets(self, metric, **filters):
        """Each dimension's values with their row counts (GET /v1/facets), as its JSON: {"data": {dimension: [{value, rows}]}}."""
        return self._json("/v1/facets", {"metric": metric, **_params(filters)})

    def releases(self):
        """The published and withdrawn releases, newest first (GET /v1/releases), as its JSON."""
        return self._json("/v1/releases", {})

    def usage(self):
        """Where the key stands: every limit that can refuse it (GET /v1/usage), as its JSON; counts against no quota."""
        return self._json("/v1/usage", {})

    def usage_daily(self, **options):
        """The key's usage per UTC day (GET /v1/usage/daily; ``start``, ``end``), as its JSON: {"days": [...]}."""
        return self._json("/v1/usage/daily", _params(options))

    def catalog(self, **options):
        """The datasets, their dimensions and metrics (GET /v1/catalog), as its JSON."""
        return self._json("/v1/catalog", _params(options))


__all__ = ["Client", "DqsError"]

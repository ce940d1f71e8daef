"""This key's webhooks (/v1/webhooks; the service's docs/api.md "Webhooks"), as the TypeScript client's ``client.webhooks``.

No call is retried: making an endpoint sends its URL a test event, and a repeated
POST could make two. Answers are the service's JSON, as dicts.
"""

from urllib.parse import quote

# The delivery log's largest page: the fewest requests for the walk.
_DELIVERIES_PAGE = 100


def _path(*parts):
    return "/v1/webhooks" + "".join("/" + quote(str(part), safe="") for part in parts)


class Webhooks:
    def __init__(self, http):
        self._http = http

    def create(self, url, events=None):
        """Subscribes ``url`` (to ``events``, default every event); the answer holds the secret (``whsec_…``), shown only here."""
        body = {"url": url} if events is None else {"url": url, "events": list(events)}
        return self._http.send("POST", _path(), body)

    def list(self):
        """The key's endpoints, without their secrets."""
        return self._http.send("GET", _path())["webhooks"]

    def get(self, id):
        return self._http.send("GET", _path(id))

    def update(self, id, *, url=None, events=None, enabled=None):
        """Changes what is given; a new ``url`` is sent a signed test first, as when created."""
        change = {"url": url, "events": None if events is None else list(events), "enabled": enabled}
        return self._http.send("PATCH", _path(id), {k: v for k, v in change.items() if v is not None})

    def delete(self, id):
        self._http.send("DELETE", _path(id))

    def test(self, id):
        """Sends a signed ``webhook.test`` event now; the answer is that attempt."""
        return self._http.send("POST", _path(id, "test"))

    def rotate_secret(self, id):
        """A new secret; the old one still signs until the answer's ``previous_expires_at`` (24 h)."""
        return self._http.send("POST", _path(id, "rotate-secret"))

    def deliveries(self, id):
        """Every attempt of the last 35 days, newest first, across the log's pages (an iterator)."""
        cursor = "0"
        while cursor is not None:
            page = self._http.send("GET", f"{_path(id, 'deliveries')}?limit={_DELIVERIES_PAGE}&cursor={quote(cursor)}")
            yield from page["deliveries"]
            cursor = page["pagination"]["cursor"]

    def redeliver(self, id, msg_id):
        """Sends message ``msg_id`` of the log again, with the same webhook-id."""
        return self._http.send("POST", _path(id, "deliveries", msg_id, "redeliver"))

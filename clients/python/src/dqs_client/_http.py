"""One request to the service, retried as the TypeScript client does (src/client/retry.ts)."""

import email.utils
import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request

JSON = "application/json"


class DqsError(Exception):
    """The service answered with an error, or could not be reached after the retries allowed.

    ``code`` is the HTTP status (0 when the service was not reached), as urllib's
    HTTPError names it; ``message`` the body's ``error``; ``hint`` and ``details`` what the
    body adds; ``request_id`` the ``X-Request-Id`` to quote to the operator.
    """

    def __init__(self, code, message, hint=None, request_id=None, details=None, retry_after=None):
        super().__init__(f"{code}: {message}" + (f" ({hint})" if hint else ""))
        self.code = code
        self.message = message
        self.hint = hint
        self.request_id = request_id
        self.details = details
        self.retry_after = retry_after


def _retry_after(value):
    """Retry-After in seconds: delta seconds (what the service sends) or an HTTP date."""
    if value is None or not value.strip():
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _error(status, headers, body):
    """The spec's error body when there is one; a proxy's HTML page still makes a clear error."""
    try:
        parsed = json.loads(body.decode("utf-8"))
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
        return DqsError(
            status,
            parsed["error"],
            parsed.get("hint"),
            headers.get("x-request-id"),
            parsed.get("details"),
            parsed.get("retryAfterSeconds"),
        )
    text = body.decode("utf-8", "replace")[:200]
    return DqsError(status, f"HTTP {status}" + (f": {text}" if text else ""), request_id=headers.get("x-request-id"))


def query_string(params):
    """The spec's repeated-parameter form for several values; None is left out, booleans are true/false."""
    pairs = []
    for name, value in params.items():
        if value is None:
            continue
        for one in value if isinstance(value, (list, tuple)) else [value]:
            pairs.append((name, str(one).lower() if isinstance(one, bool) else str(one)))
    return urllib.parse.urlencode(pairs)


class _Retryable(Exception):
    """An attempt that failed in a way worth another: its error, why, and the wait the server asked for."""

    def __init__(self, failure, reason, retry_after):
        super().__init__(failure.message)
        self.failure = failure
        self.reason = reason
        self.retry_after = retry_after


class Transport:
    """GETs with the key, waiting out 429s for their Retry-After and backing off with full jitter on 5xx and network failures."""

    def __init__(self, base_url, api_key, max_retries, max_wait, base_delay, max_delay, timeout, on_retry):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.max_retries = max_retries
        self.max_wait = max_wait
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.timeout = timeout
        self.on_retry = on_retry

    def get(self, path, params, accept):
        """(headers with lower-case names, body bytes) of a 200, after the retries the policy allows."""
        query = query_string(params)
        url = f"{self.base_url}{path}?{query}" if query else f"{self.base_url}{path}"
        waited = 0.0
        attempt = 1
        while True:
            try:
                return self._attempt(url, accept)
            except _Retryable as retry:
                failure = retry.failure
                wait = retry.retry_after
                reason = retry.reason
            if wait is None:
                wait = random.random() * min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
            if attempt > self.max_retries or waited + wait > self.max_wait:
                raise failure
            if self.on_retry is not None:
                self.on_retry({"reason": reason, "attempt": attempt, "wait": wait, "status": failure.code or None, "error": failure})
            time.sleep(wait)
            waited += wait
            attempt += 1

    def send(self, method, path, body=None):
        """The JSON answer (None for 204) to one ``method`` request with a JSON ``body``; never retried, as a repeated POST could act twice."""
        try:
            _, answer = self._attempt(f"{self.base_url}{path}", JSON, method, body)
        except _Retryable as retry:
            raise retry.failure from None
        return json.loads(answer.decode("utf-8")) if answer else None

    def _attempt(self, url, accept, method="GET", body=None):
        sent = {"x-api-key": self.api_key, "accept": accept}
        if body is not None:
            sent["content-type"] = JSON
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(url, data=data, headers=sent, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                headers = {name.lower(): value for name, value in response.headers.items()}
                content = response.read()
        except urllib.error.HTTPError as answer:
            headers = {name.lower(): value for name, value in answer.headers.items()}
            failure = _error(answer.code, headers, answer.read())
            retry_after = _retry_after(headers.get("retry-after"))
            if answer.code == 429:
                raise _Retryable(failure, "rate-limited", 1.0 if retry_after is None else retry_after) from None
            if answer.code >= 500:
                raise _Retryable(failure, "server-error", retry_after) from None
            raise failure from None
        except (urllib.error.URLError, OSError) as cause:
            origin = urllib.parse.urlsplit(url)
            raise _Retryable(DqsError(0, f"Cannot reach {origin.scheme}://{origin.netloc}: {cause}"), "network-error", None) from None
        kind = headers.get("content-type", "")
        # A 204 (a deleted webhook) has no body to type.
        if content and not kind.startswith(accept):
            raise DqsError(200, f"Asked for {accept} but the server answered {kind or 'no Content-Type'}", request_id=headers.get("x-request-id"))
        return headers, content

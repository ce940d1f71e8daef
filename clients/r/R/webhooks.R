# This key's webhooks (/v1/webhooks), as the TypeScript client's `client.webhooks`: a
# list of functions whose answers are the service's JSON as lists.

# The delivery log's largest page: the fewest requests for the walk.
deliveries_page <- 100

webhook_path <- function(...) {
  parts <- vapply(list(...), function(part) utils::URLencode(as.character(part), reserved = TRUE), "")
  paste0("/v1/webhooks", paste0("/", parts, collapse = ""))
}

webhooks <- function(policy) {
  send <- function(method, path, body = NULL) http_send(policy, method, path, body)
  list(
    create = function(url, events = NULL) {
      send("POST", "/v1/webhooks", c(list(url = url), if (!is.null(events)) list(events = I(events))))
    },
    list = function() send("GET", "/v1/webhooks")$webhooks,
    get = function(id) send("GET", webhook_path(id)),
    update = function(id, url = NULL, events = NULL, enabled = NULL) {
      change <- list(url = url, events = if (!is.null(events)) I(events), enabled = enabled)
      change <- change[!vapply(change, is.null, logical(1))]
      # Named even when empty, so that it is sent as {} rather than [].
      send("PATCH", webhook_path(id), structure(change, names = as.character(names(change))))
    },
    delete = function(id) send("DELETE", webhook_path(id)),
    test = function(id) send("POST", webhook_path(id, "test")),
    rotate_secret = function(id) send("POST", webhook_path(id, "rotate-secret")),
    # Every attempt of the last 35 days, newest first, across the log's pages.
    deliveries = function(id) {
      all <- list()
      cursor <- "0"
      while (!is.null(cursor)) {
        page <- send("GET", paste0(webhook_path(id, "deliveries"), "?limit=", deliveries_page, "&cursor=", cursor))
        all <- c(all, page$deliveries)
        cursor <- page$pagination$cursor
      }
      all
    },
    redeliver = function(id, msg_id) send("POST", webhook_path(id, "deliveries", msg_id, "redeliver"))
  )
}

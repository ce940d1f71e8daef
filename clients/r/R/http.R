# One request to the service, retried as the TypeScript client does (src/client/retry.ts):
# a 429 after its Retry-After, a 5xx or a network failure after a jittered back-off.

dqs_error <- function(code, message, hint = NULL, request_id = NULL, details = NULL) {
  text <- paste0(code, ": ", message, if (!is.null(hint)) paste0(" (", hint, ")") else "")
  structure(
    class = c("dqs_error", "error", "condition"),
    list(message = text, call = NULL, code = code, error = message, hint = hint, request_id = request_id, details = details)
  )
}

# The spec's repeated-parameter form for several values; NULL is left out, logicals are true/false.
query_string <- function(params) {
  params <- params[!vapply(params, is.null, logical(1))]
  pairs <- unlist(Map(function(name, value) {
    if (is.logical(value)) value <- tolower(as.character(value))
    paste0(utils::URLencode(name, reserved = TRUE), "=", vapply(as.character(value), utils::URLencode, "", reserved = TRUE))
  }, names(params), params), use.names = FALSE)
  paste(pairs, collapse = "&")
}

retry_after <- function(value) {
  if (is.null(value) || !nzchar(trimws(value))) return(NULL)
  if (grepl("^[0-9]+$", trimws(value))) return(as.numeric(trimws(value)))
  date <- httr::parse_http_date(value)
  if (is.na(date)) NULL else max(0, as.numeric(difftime(date, Sys.time(), units = "secs")))
}

answer_error <- function(response) {
  body <- httr::content(response, as = "text", encoding = "UTF-8")
  parsed <- tryCatch(jsonlite::fromJSON(body, simplifyVector = FALSE), error = function(e) NULL)
  status <- httr::status_code(response)
  request_id <- httr::headers(response)[["x-request-id"]]
  if (is.list(parsed) && is.character(parsed$error)) {
    return(dqs_error(status, parsed$error, parsed$hint, request_id, parsed$details))
  }
  dqs_error(status, paste0("HTTP ", status, if (nzchar(body)) paste0(": ", substr(body, 1, 200)) else ""), request_id = request_id)
}

# The 200 answer to GET path?params, after the retries `policy` allows.
http_get <- function(policy, path, params, accept) {
  query <- query_string(params)
  url <- paste0(policy$base_url, path, if (nzchar(query)) paste0("?", query) else "")
  waited <- 0
  attempt <- 1
  repeat {
    response <- tryCatch(
      httr::GET(url, httr::add_headers(`x-api-key` = policy$api_key, accept = accept), httr::timeout(policy$timeout)),
      error = function(e) e
    )
    wait <- NULL
    if (inherits(response, "error")) {
      failure <- dqs_error(0, paste0("Cannot reach ", policy$base_url, ": ", conditionMessage(response)))
      reason <- "network-error"
    } else if (httr::status_code(response) == 200) {
      kind <- httr::headers(response)[["content-type"]]
      if (is.null(kind) || !startsWith(kind, accept)) {
        stop(dqs_error(200, paste0("Asked for ", accept, " but the server answered ", if (is.null(kind)) "no Content-Type" else kind)))
      }
      return(response)
    } else {
      failure <- answer_error(response)
      status <- httr::status_code(response)
      wait <- retry_after(httr::headers(response)[["retry-after"]])
      if (status == 429) {
        reason <- "rate-limited"
        if (is.null(wait)) wait <- 1
      } else if (status >= 500) {
        reason <- "server-error"
      } else {
        stop(failure)
      }
    }
    if (is.null(wait)) wait <- stats::runif(1) * min(policy$max_delay, policy$base_delay * 2^(attempt - 1))
    if (attempt > policy$max_retries || waited + wait > policy$max_wait) stop(failure)
    if (!is.null(policy$on_retry)) policy$on_retry(list(reason = reason, attempt = attempt, wait = wait, status = failure$code))
    Sys.sleep(wait)
    waited <- waited + wait
    attempt <- attempt + 1
  }
}

# The JSON answer (NULL for 204) to one `method` request with a JSON `body`; never
# retried, as a repeated POST could act twice (a webhook's creation sends a test event).
http_send <- function(policy, method, path, body = NULL) {
  response <- tryCatch(
    httr::VERB(
      method, paste0(policy$base_url, path),
      httr::add_headers(`x-api-key` = policy$api_key, accept = "application/json"), httr::timeout(policy$timeout),
      body = if (is.null(body)) NULL else jsonlite::toJSON(body, auto_unbox = TRUE), httr::content_type_json()
    ),
    error = function(e) stop(dqs_error(0, paste0("Cannot reach ", policy$base_url, ": ", conditionMessage(e))))
  )
  if (httr::status_code(response) >= 300) stop(answer_error(response))
  text <- httr::content(response, as = "text", encoding = "UTF-8")
  if (is.na(text) || !nzchar(text)) return(invisible(NULL))
  jsonlite::fromJSON(text, simplifyVector = FALSE)
}

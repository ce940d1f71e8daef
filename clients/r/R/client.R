# A method per endpoint of the service; each walks every page.

# The spec's largest page (section 8): the fewest requests for a paged walk.
page_size <- 1000

client <- function(base_url = Sys.getenv("DQS_URL"), api_key = Sys.getenv("DQS_API_KEY"),
                   max_retries = 5, max_wait = 180, base_delay = 0.25, max_delay = 10,
                   timeout = 300, on_retry = NULL) {
  if (!nzchar(base_url) || !nzchar(api_key)) {
    stop("dqs::client needs base_url and api_key, or DQS_URL and DQS_API_KEY in the environment")
  }
  policy <- list(
    base_url = sub("/+$", "", base_url), api_key = api_key, max_retries = max_retries, max_wait = max_wait,
    base_delay = base_delay, max_delay = max_delay, timeout = timeout, on_retry = on_retry
  )
  catalogs <- new.env()

  get_json <- function(path, params) {
    response <- http_get(policy, path, params, "application/json")
    jsonlite::fromJSON(httr::content(response, as = "text", encoding = "UTF-8"), simplifyVector = FALSE)
  }

  # The CSV text of every page, followed by X-Next-Cursor (absent on the last page).
  pages <- function(path, params) {
    texts <- list()
    repeat {
      response <- http_get(policy, path, c(params, list(format = "csv")), "text/csv")
      texts[[length(texts) + 1]] <- httr::content(response, as = "text", encoding = "UTF-8")
      cursor <- httr::headers(response)[["x-next-cursor"]]
      if (is.null(cursor) || !nzchar(cursor)) return(texts)
      params$cursor <- cursor
    }
  }

  catalog <- function(...) get_json("/v1/catalog", list(...))

  table <- function(path, dataset, params, decimal) {
    key <- paste0("release=", paste(params$release, collapse = ","), "&as_of=", paste(params$as_of, collapse = ","))
    if (is.null(catalogs[[key]])) catalogs[[key]] <- catalog(release = params$release, as_of = params$as_of)
    read_frame(join_pages(pages(path, params)), catalogs[[key]], dataset, decimal)
  }

  list(
    financials = function(metric, ..., decimal = FALSE) {
      table("/v1/financials", metric, c(list(metric = metric, limit = page_size), list(...)), decimal)
    },
    reference = function(dataset, ...) table("/v1/reference", dataset, c(list(dataset = dataset, limit = page_size), list(...)), FALSE),
    aggregate = function(metric, ..., decimal = FALSE) table("/v1/aggregate", metric, c(list(metric = metric), list(...)), decimal),
    revisions = function(metric, ..., decimal = FALSE) table("/v1/revisions", metric, c(list(metric = metric), list(...)), decimal),
    history = function(metric, ..., decimal = FALSE) table("/v1/history", metric, c(list(metric = metric), list(...)), decimal),
    export = function(metric, ..., decimal = FALSE) table("/v1/export", metric, c(list(metric = metric), list(...)), decimal),
    facets = function(metric, ...) get_json("/v1/facets", c(list(metric = metric), list(...))),
    releases = function() get_json("/v1/releases", list()),
    usage = function() get_json("/v1/usage", list()),
    usage_daily = function(...) get_json("/v1/usage/daily", list(...)),
    catalog = catalog,
    webhooks = webhooks(policy)
  )
}

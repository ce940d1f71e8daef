# The service's CSV pages as one data frame, typed from /v1/catalog.

# The service writes an empty string as "" and a missing value (a rolled-up dimension,
# a null sum, a revision's absent side) as an empty field; read.csv reads both as "".
# Unquoted empty fields are marked first, so a dimension stays character with no NA
# guessing and only what the service left out is NA.
missing_mark <- "\037dqs-missing\037"
# A quoted field is skipped whole ((*SKIP)(*F)); an empty field is a field start followed by its end.
empty_field <- "\"(?:[^\"]|\"\")*\"(*SKIP)(*F)|(?<![^,\\n])(?=,|\\r?\\n|(?<=,)\\z)"

mark_missing <- function(text) gsub(empty_field, missing_mark, text, perl = TRUE)

# The one integer dimension (the catalog: "Calendar year, an integer"), and the one
# numeric column that names no metric: the count of rows an aggregate group holds.
integer_dimensions <- "year"
count_column <- "rows"

# "integer", "character" or "numeric" for each column name of an answer on `dataset`.
column_classes <- function(catalog, dataset, names) {
  entry <- Filter(function(d) identical(d$name, dataset), catalog$datasets)
  entry <- if (length(entry)) entry[[1]] else list(dimensions = list(), metrics = list())
  dimensions <- c(names(catalog$dimensions), unlist(entry$dimensions))
  metrics <- unlist(entry$metrics)
  vapply(names, function(name) {
    if (name %in% dimensions) return(if (name %in% integer_dimensions) "integer" else "character")
    if (identical(name, count_column)) return("integer")
    holds_metric <- any(name == metrics | startsWith(name, paste0(metrics, "_")) | endsWith(name, paste0("_", metrics)) |
      vapply(metrics, function(m) grepl(paste0("_", m, "_"), name, fixed = TRUE), TRUE))
    if (holds_metric) "numeric" else "character"
  }, "")
}

# The CSV of every page as one text: the first page's header, then each page's rows.
join_pages <- function(pages) {
  rest <- vapply(pages[-1], function(page) sub("^[^\n]*\n", "", page), "")
  paste0(c(pages[[1]], rest), collapse = "")
}

read_frame <- function(text, catalog, dataset, decimal) {
  header <- names(read.csv(text = sub("\n.*", "\n", text), check.names = FALSE))
  classes <- column_classes(catalog, dataset, header)
  # Exact decimals: the sums as the service printed them, character, for a decimal type of the caller's choice.
  if (decimal) classes[classes == "numeric"] <- "character"
  read.csv(
    text = mark_missing(text), colClasses = unname(classes), na.strings = missing_mark,
    check.names = FALSE, stringsAsFactors = FALSE, encoding = "UTF-8"
  )
}

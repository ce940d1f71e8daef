// Quoting for SQL text the service itself controls: names from the registry and
// file paths from DATA_DIR. Values from requests never go through here; they are
// always bound parameters (src/query/filters.ts).

export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

export const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;

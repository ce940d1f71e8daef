/**
 * What every answer of either listener carries, whatever its route or status, the
 * connection's own refusals included: a browser must neither guess a JSON or CSV
 * body's type (and run it as HTML) nor show an answer in a frame. Pages that set a
 * fuller Content-Security-Policy (/docs, the claim page) keep theirs.
 */
export const EVERY_ANSWER = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "frame-ancestors 'none'",
} as const;

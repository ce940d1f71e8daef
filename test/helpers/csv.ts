import * as assert from 'uvu/assert';

/**
 * A minimal RFC 4180 reader for tests' own checks: quoted fields, doubled quotes. By
 * default rows end with CRLF, as the service writes them, and the body must end with
 * one; `anyLineEnd` also takes a bare LF or CR (what pandas, R or a clipboard write)
 * and a last row without a line end.
 */
export function parseCsv(text: string, { anyLineEnd = false } = {}): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if ((c === '\r' && text[i + 1] === '\n') || (anyLineEnd && (c === '\n' || c === '\r'))) {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (anyLineEnd) {
    if (field || row.length) rows.push([...row, field]);
  } else assert.is(field + row.join(''), '', 'the body ends with CRLF');
  return rows;
}

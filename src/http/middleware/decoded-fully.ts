const SLICE = 8192;

/** The value of a hexadecimal digit's character code, or -1. */
function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/**
 * `text` percent-decoded to a fixed point, in one pass: each `%XX` becomes its byte as
 * a character, and a character so made is read again with what precedes it, so
 * `%2573` is `s` however many times it was encoded, at a cost linear in the text
 * (decoding round after round would be quadratic, and the text is the client's). A
 * malformed escape stays as it is and hides nothing around it, where
 * decodeURIComponent gives up on the whole text. Bytes are not read as UTF-8: what is
 * looked for in the result (keys, tokens) is ASCII.
 */
export function decodedFully(text: string): string {
  if (!text.includes('%')) return text;
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    out.push(text.charCodeAt(i));
    // The last three may be an escape, and the byte it makes may close another.
    for (let n = out.length; n >= 3 && out[n - 3] === 37; n = out.length) {
      const high = hexValue(out[n - 2]!);
      const low = hexValue(out[n - 1]!);
      if (high < 0 || low < 0) break;
      out.length = n - 3;
      out.push(high * 16 + low);
    }
  }
  let decoded = '';
  // In slices: one call with every code as an argument overflows the stack on a long text.
  for (let i = 0; i < out.length; i += SLICE) decoded += String.fromCharCode(...out.slice(i, i + SLICE));
  return decoded;
}

import fs from 'node:fs';
import type { Context } from 'koa';
import { RangeNotSatisfiableError } from '../../errors.ts';
import { noneMatch } from './cacheable.ts';

export interface FileAnswer {
  readonly path: string;
  readonly etag: string;
  readonly contentType: string;
  readonly cacheControl: string;
}

const RANGE = /^bytes=(\d*)-(\d*)$/;

/**
 * Sends a file that never changes under its ETag: 304 for a matching If-None-Match,
 * 206 for one satisfiable byte range (`bytes=a-b`, `a-`, `-n`; an If-Range naming
 * another ETag gets the whole file), 416 for a range past the end, else 200. Several
 * ranges get the whole file: resuming a download needs one. Returns the status.
 */
export async function sendFile(ctx: Context, file: FileAnswer): Promise<200 | 206 | 304> {
  ctx.set('ETag', file.etag);
  ctx.set('Cache-Control', file.cacheControl);
  ctx.set('Accept-Ranges', 'bytes');
  if (noneMatch(ctx.get('if-none-match'), file.etag)) {
    ctx.status = 304;
    return 304;
  }
  const handle = await fs.promises.open(file.path, 'r');
  try {
    const { size } = await handle.stat();
    const ifRange = ctx.get('if-range');
    const range = ctx.get('range') && (!ifRange || ifRange === file.etag) ? RANGE.exec(ctx.get('range').trim()) : null;
    let start = 0;
    let end = size - 1;
    if (range) {
      const [, from, to] = range as unknown as [string, string, string];
      if (from === '' && to === '') range.length = 0;
      else if (from === '') start = Math.max(0, size - Number(to));
      else {
        start = Number(from);
        if (to !== '') end = Math.min(end, Number(to));
      }
      if (start >= size || start > end) throw new RangeNotSatisfiableError(size);
    }
    const partial = range !== null && range.length > 0;
    ctx.status = partial ? 206 : 200;
    ctx.type = file.contentType;
    if (partial) ctx.set('Content-Range', `bytes ${start}-${end}/${size}`);
    ctx.length = end - start + 1;
    // The stream owns the descriptor from here: it reads the file even if it is removed meanwhile.
    ctx.body = handle.createReadStream({ start, end, autoClose: true });
    return partial ? 206 : 200;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

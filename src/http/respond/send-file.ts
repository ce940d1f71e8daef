import fs from 'node:fs';
import { RangeNotSatisfiableError } from '../../errors/index.ts';
import type { RequestContext } from '../request-state.ts';
import { noneMatch } from './cacheable.ts';

export interface FileAnswer {
  readonly path: string;
  readonly etag: string;
  readonly contentType: string;
  readonly cacheControl: string;
}

/** What a request for a file gets, decided before anything is sent (so the caller can charge for bytes before they go). */
export interface FileReply {
  /** 304: nothing sent; 200: the whole file; 206: one byte range of it. */
  readonly status: 200 | 206 | 304;
  /** Answers with it. */
  send(): void;
  /** Lets the file go unsent (a refusal after all). */
  discard(): Promise<void>;
}

const RANGE = /^bytes=(\d*)-(\d*)$/;

/**
 * Decides the answer for a file that never changes under its ETag: 304 for a
 * matching If-None-Match, 206 for one satisfiable byte range (`bytes=a-b`, `a-`,
 * `-n`; an If-Range naming another ETag gets the whole file), 416 for a range past
 * the end (thrown), else 200. Several ranges, or a malformed one, get the whole
 * file: resuming a download needs one.
 */
export async function replyWithFile(ctx: RequestContext, file: FileAnswer): Promise<FileReply> {
  ctx.set('ETag', file.etag);
  ctx.set('Cache-Control', file.cacheControl);
  ctx.set('Accept-Ranges', 'bytes');
  if (noneMatch(ctx.get('if-none-match'), file.etag)) {
    return {
      status: 304,
      send: () => {
        ctx.status = 304;
      },
      discard: async () => {},
    };
  }
  const handle = await fs.promises.open(file.path, 'r');
  try {
    const { size } = await handle.stat();
    const ifRange = ctx.get('if-range');
    const range = ctx.get('range') && (!ifRange || ifRange === file.etag) ? RANGE.exec(ctx.get('range').trim()) : null;
    let start = 0;
    let end = size - 1;
    let partial = false;
    if (range && (range[1] !== '' || range[2] !== '')) {
      const [, from, to] = range as unknown as [string, string, string];
      if (from === '') start = Math.max(0, size - Number(to));
      else {
        start = Number(from);
        if (to !== '') end = Math.min(end, Number(to));
      }
      if (start >= size || start > end) throw new RangeNotSatisfiableError(size);
      partial = true;
    }
    return {
      status: partial ? 206 : 200,
      send() {
        ctx.status = partial ? 206 : 200;
        ctx.type = file.contentType;
        if (partial) ctx.set('Content-Range', `bytes ${start}-${end}/${size}`);
        ctx.length = end - start + 1;
        // The stream owns the descriptor from here: it reads the file even if it is removed meanwhile.
        ctx.body = handle.createReadStream({ start, end, autoClose: true });
      },
      discard: () => handle.close(),
    };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

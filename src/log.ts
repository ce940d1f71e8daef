import pino, { type Logger } from 'pino';

/** Lines go out in writes of at least this many bytes, or every FLUSH_MS when fewer arrive. */
const BLOCK_BYTES = 4096;
const FLUSH_MS = 200;
/** What waits for a reader of stdout that stopped reading, at most; lines beyond it are dropped and counted on stderr. */
const PENDING_BYTES = 16 * 1024 * 1024;
const DROPS_REPORTED_MS = 10_000;

/**
 * Where a logged object carries request headers (a request, as pino's serializer
 * writes one, or headers on their own), the key in them is replaced: a key never
 * reaches the log. Exact paths: a wildcard makes pino walk every line it writes.
 */
const REDACTED = ['req.headers["x-api-key"]', 'headers["x-api-key"]'];

/**
 * pino's `time` field as ISO text, made once a millisecond: requests come faster than
 * that, and formatting a date is a large part of what writing a line costs.
 */
function isoTimeEachMillisecond(): () => string {
  let last = -1;
  let field = '';
  return () => {
    const now = Date.now();
    if (now !== last) {
      last = now;
      field = `,"time":"${new Date(now).toISOString()}"`;
    }
    return field;
  };
}

/**
 * Structured JSON lines on stdout through pino's own destination: written
 * asynchronously in blocks of at least 4 kB, or every 200 ms when fewer lines come,
 * so a busy server makes one write per dozen requests; the server exits through
 * exitWithLog, which waits for them, and a SIGKILL loses at most the last 200 ms. If whatever
 * reads stdout stops reading, 16 MB of lines wait for it; lines past that are dropped
 * rather than held, and stderr says how many every 10 s while it lasts.
 * `destination` replaces stdout (tests). `base` drops pid/hostname noise; `time` stays ISO.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const redact = { paths: REDACTED, censor: '[redacted]' };
  const settings = { level, base: undefined, timestamp: isoTimeEachMillisecond(), redact };
  if (destination) return pino(settings, destination);
  const stdout = pino.destination({ dest: 1, sync: false, minLength: BLOCK_BYTES, periodicFlush: FLUSH_MS, maxLength: PENDING_BYTES });
  const stderr = pino(settings, pino.destination({ dest: 2, sync: true }));
  let dropped = 0;
  stdout.on('drop', (data: string) => {
    if (dropped === 0) {
      setTimeout(() => {
        stderr.warn({ dropped }, 'log lines dropped: nothing read stdout while 16 MB of lines waited');
        dropped = 0;
      }, DROPS_REPORTED_MS).unref();
    }
    dropped += data.split('\n').length - 1;
  });
  return pino(settings, stdout);
}

/**
 * Exits with `code` once `log`'s lines are written. They go out asynchronously, and an
 * exit while a write is under way would leave the last lines out of order, or out;
 * pino's own flush at exit is the last resort for an exit that does not come here. A
 * stdout that nobody reads gets 2 s.
 */
export function exitWithLog(log: Logger, code: number): Promise<never> {
  return new Promise(() => {
    setTimeout(() => process.exit(code), 2000);
    log.flush(() => process.exit(code));
  });
}

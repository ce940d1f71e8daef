import pino, { type Logger } from 'pino';

/**
 * Structured JSON lines on stdout; `base` drops pid/hostname noise, `time` stays ISO.
 * Written asynchronously: a synchronous write per line cost a cached page about a
 * tenth of the server's CPU (docs/performance.md), while async writes coalesce the
 * lines that arrive while one is in flight. pino flushes what is pending at exit.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, destination ?? pino.destination({ dest: 1, sync: false }));
}

import type { ServiceProcess } from '../../tools/service-process.ts';
import { type Figure, figure, rounds, type ServerSide, type Timing } from '../runner/measure.ts';
import { PAGE, withKey } from './suite.ts';

// What counting each answer in its key's usage (issue 54) adds to a cached hit's server
// CPU (docs/performance.md "Usage counting"): a server that counts and two started with
// BENCH_DISABLE_USAGE answer the same cached page, br and identity, alternated in the
// same rounds. The two that do not count are the same code, so what their CPU a request
// differs by is the figure's noise, measured beside it.

/** The three servers by name, with their settings beyond DATA_DIR and STATE_DIR. */
export const USAGE_SERVERS = {
  uncounted: { BENCH_DISABLE_USAGE: 'true' },
  again: { BENCH_DISABLE_USAGE: 'true' },
  counted: {},
} as const;

export type UsageServers = Record<keyof typeof USAGE_SERVERS, ServiceProcess>;

/** `usage-counted-br` and `usage-counted-json` at each of `connections`: the counting server, beside the other two as ceilings. */
export async function usageFigures(
  servers: UsageServers,
  timing: Timing,
  connections: readonly number[],
  onRun: (text: string) => void,
): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const [id, coding] of [
    ['usage-counted-br', 'br'],
    ['usage-counted-json', 'identity'],
  ] as const) {
    const side = (server: ServiceProcess): ServerSide => ({
      url: server.url,
      requests: withKey([{ path: PAGE, headers: { 'accept-encoding': coding }, status: 200 }], server.headers),
      pid: server.pid,
    });
    const title = `cached hit, JSON ${coding}, usage counted vs not`;
    for (const n of connections) {
      const [t] = await rounds(
        [{ ceilings: { uncounted: side(servers.uncounted), again: side(servers.again) }, service: side(servers.counted) }],
        n,
        timing,
        (text) => onRun(`${title}, ${n} conn: ${text}`),
      );
      figures.push(figure(id, title, n, t!.service, t!.halves, t!.ceilings, t!.ceilingHalves));
    }
  }
  return figures;
}

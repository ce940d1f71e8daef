import fs from 'node:fs/promises';
import path from 'node:path';
import { DOUBLE, type DuckDBConnection, DuckDBDataChunk, DuckDBInstance, type DuckDBType, INTEGER, VARCHAR } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';
import { DATASETS, INTEGER_DIMENSIONS, RELEASE_ID } from '../src/registry.ts';
import { type Manifest, writeManifest } from '../src/releases/manifest.ts';
import { datasetEntry } from './dataset-entry.ts';
import { COUNTRIES, type Country, SUB_NATIONAL } from './geo-data.ts';

// Synthetic but plausible market data. Every number comes from one seeded PRNG
// consumed in a fixed order, so a seed always yields the same rows.

export interface GenerateOptions {
  out: string;
  seed: number;
  /**
   * Up to 1: the fraction of ggr/turnover rows kept (fx, country and the reference stay whole).
   * Above 1 (up to MAX_SCALE): about that many times the ggr/turnover rows, grown by adding
   * synthetic sub-national markets, which fx and country cover too.
   */
  scale: number;
  release: string;
  onProgress?: (done: number, total: number) => void;
  /** Called as a step that has no row count starts: the market rows being written out to Parquet. */
  onStep?: (step: string) => void;
}

export const MAX_SCALE = 64;
/** Market rows DuckDB holds before they are spilled to a Parquet part: bounds memory at any scale. */
const PART_ROWS = 1 << 20;

const FIRST_YEAR = 2000;
const LAST_YEAR = 2030;
const BASE_YEAR = 2025;

const PRODUCTS: ReadonlyArray<{ category: string; product: string; share: number; margin: number }> = [
  { category: 'Betting', product: 'Sport Betting', share: 0.17, margin: 0.08 },
  { category: 'Betting', product: 'Horse Racing', share: 0.07, margin: 0.15 },
  { category: 'Betting', product: 'Greyhound Racing', share: 0.02, margin: 0.16 },
  { category: 'Betting', product: 'Other Betting', share: 0.03, margin: 0.12 },
  { category: 'Gaming', product: 'Casino Slots', share: 0.2, margin: 0.07 },
  { category: 'Gaming', product: 'Casino Tables', share: 0.1, margin: 0.05 },
  { category: 'Gaming', product: 'Poker', share: 0.03, margin: 0.04 },
  { category: 'Gaming', product: 'Bingo', share: 0.03, margin: 0.3 },
  { category: 'Gaming', product: 'Gaming Machines', share: 0.11, margin: 0.09 },
  { category: 'Gaming', product: 'Skill Games', share: 0.02, margin: 0.1 },
  { category: 'Lottery', product: 'Draw Based', share: 0.12, margin: 0.5 },
  { category: 'Lottery', product: 'Instants', share: 0.06, margin: 0.35 },
  { category: 'Lottery', product: 'Numbers', share: 0.02, margin: 0.45 },
  { category: 'Lottery', product: 'Keno', share: 0.02, margin: 0.3 },
];

const CHANNELS = [
  { channel: 'Online', sub_channel: 'Onshore' },
  { channel: 'Online', sub_channel: 'Offshore' },
  { channel: 'Land', sub_channel: 'Onshore' },
] as const;

/** Local units per USD in BASE_YEAR for the currencies whose level readers know; others are drawn. */
const KNOWN_RATES: Record<string, number> = {
  USD: 1,
  EUR: 0.92,
  GBP: 0.79,
  JPY: 150,
  CNY: 7.2,
  CAD: 1.36,
  AUD: 1.5,
  INR: 83,
  BRL: 5,
  MXN: 17,
  CHF: 0.88,
  SEK: 10.5,
  NOK: 10.6,
  DKK: 6.9,
  KRW: 1330,
  ZAR: 18.5,
  NZD: 1.63,
  HKD: 7.8,
  MOP: 8.05,
  SGD: 1.34,
  PLN: 4,
  TRY: 32,
};

/** A small seeded generator: the same seed gives the same sequence (also the bench's mixed workload). */
export function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

interface Geo {
  country: Country;
  state: string;
  /** Share of the country's market (1 for the national row). */
  share: number;
  growth: number;
  onlineBias: number;
  /**
   * The stream this market's numbers come from: the seed's own stream for the scale-1 markets,
   * a second one for the markets added above scale 1, so those never shift the scale-1 rows.
   */
  random: () => number;
}

export async function generateRelease(options: GenerateOptions): Promise<Manifest> {
  if (!(options.scale > 0 && options.scale <= MAX_SCALE))
    throw new Error(`--scale must be greater than 0 and at most ${MAX_SCALE} (got ${options.scale})`);
  if (!RELEASE_ID.test(options.release)) throw new Error(`--release must look like 2026-11 (got "${options.release}")`);
  const target = path.resolve(options.out);
  const existing = await fs.stat(target).catch(() => undefined);
  if (existing && !existing.isDirectory()) {
    throw new Error(`${target} already exists and is not a folder; remove it or choose another --out`);
  }
  if (existing && (await fs.readdir(target)).length > 0) {
    throw new Error(`${target} already exists and is not empty; remove it or choose another --out`);
  }
  // Written beside the target and renamed into place, so a crash never leaves a half release.
  const work = `${target}.tmp-${process.pid}`;
  await fs.rm(work, { recursive: true, force: true });
  await fs.mkdir(work, { recursive: true });

  const random = mulberry32(options.seed);
  const dataYear = Number(options.release.slice(0, 4));
  const rates = currencyRates(random);
  const geos = addMarkets(geographies(random), options.scale, mulberry32(options.seed ^ 0x5ca1ab1e));

  // One thread: the rows come from one JS loop anyway, and DuckDB's order-keeping Parquet writer
  // buffers more with each extra thread (at 16x, peak RSS 0.73 GB with one thread, 1.54 GB with two).
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  try {
    const rows: Record<string, number> = {};
    const market = await writeMarket(connection, work, geos, rates, dataYear, options);
    rows.ggr = rows.turnover = market;
    rows.fx = await writeFx(connection, work, geos, rates, dataYear);
    rows.country = await writeCountry(connection, work, geos, rates, random, dataYear);
    rows.country_reference = await writeReference(connection, work);

    const datasets: Manifest['datasets'] = {};
    for (const def of DATASETS) {
      const file = `${def.name}.parquet`;
      datasets[def.name] = await datasetEntry(connection, def, work, { file, rows: rows[def.name]! });
    }
    const manifest: Manifest = { release: options.release, created_at: new Date().toISOString(), synthetic: true, datasets };
    await writeManifest(work, manifest);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.rm(target, { recursive: true, force: true });
    await fs.rename(work, target);
    return manifest;
  } catch (err) {
    await fs.rm(work, { recursive: true, force: true });
    throw err;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

type Rates = Map<string, (year: number) => number>;

function currencyRates(random: () => number): Rates {
  const rates: Rates = new Map();
  const currencies = [...new Set(['USD', 'EUR', ...COUNTRIES.map((c) => c.currency)])].sort();
  for (const code of currencies) {
    const base = KNOWN_RATES[code] ?? Math.exp(Math.log(0.3) + random() * Math.log(5000 / 0.3));
    const drift = code === 'USD' ? 0 : (random() - 0.35) * 0.06;
    const wobble = random() * 6;
    rates.set(code, (year) => base * Math.exp(drift * (year - BASE_YEAR) + (code === 'USD' ? 0 : 0.03 * Math.sin(year + wobble))));
  }
  return rates;
}

function geographies(random: () => number): Geo[] {
  const geos: Geo[] = [];
  for (const country of COUNTRIES) {
    const growth = 0.01 + random() * 0.07;
    const onlineBias = 0.5 + random();
    geos.push({ country, state: '', share: 1, growth, onlineBias, random });
    const states = SUB_NATIONAL[country.name] ?? [];
    const weights = states.map(() => 0.2 + random() ** 2 * 3);
    const total = weights.reduce((a, b) => a + b, 0);
    for (const [i, state] of states.entries()) {
      geos.push({ country, state, share: weights[i]! / total, growth: growth + (random() - 0.5) * 0.02, onlineBias, random });
    }
  }
  return geos;
}

const currenciesOf = (country: Country) => [...new Set(['USD', 'EUR', country.currency])];
const marketRowsPerYear = (geo: Geo) => PRODUCTS.length * CHANNELS.length * currenciesOf(geo.country).length;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * Above scale 1, adds synthetic provinces ("Japan Province 007") to the tracked countries that have
 * no sub-national data yet, enough for about (scale - 1) times the scale-1 market rows. Bigger
 * markets get more (in proportion to the square root of their size); a country's provinces split
 * its national figures, as US states do. Years and every other dimension stay as at scale 1.
 */
function addMarkets(geos: Geo[], scale: number, random: () => number): Geo[] {
  if (scale <= 1) return geos;
  const nationals = geos.filter((g) => g.state === '' && g.country.type === 'Tracked' && !SUB_NATIONAL[g.country.name]);
  const weights = nationals.map((g) => Math.sqrt(g.country.size));
  const rowsPerMarket = sum(nationals.map((g, i) => weights[i]! * marketRowsPerYear(g))) / sum(weights);
  const markets = Math.round(((scale - 1) * sum(geos.map(marketRowsPerYear))) / rowsPerMarket);
  // Largest remainder: each country's count is its quota rounded so the counts add up to `markets`.
  const quotas = weights.map((w) => (markets * w) / sum(weights));
  const counts = quotas.map(Math.floor);
  const byRemainder = quotas.map((_, i) => i).sort((a, b) => quotas[b]! - counts[b]! - (quotas[a]! - counts[a]!) || a - b);
  for (const i of byRemainder.slice(0, markets - sum(counts))) counts[i]!++;

  const provinces = new Map(
    nationals.map((national, i) => {
      const shares = Array.from({ length: counts[i]! }, () => 0.2 + random() ** 2 * 3);
      const total = sum(shares);
      return [
        national,
        shares.map(
          (share, n): Geo => ({
            ...national,
            state: `${national.country.name} Province ${String(n + 1).padStart(3, '0')}`,
            share: share / total,
            growth: national.growth + (random() - 0.5) * 0.02,
            random,
          }),
        ),
      ];
    }),
  );
  return geos.flatMap((geo) => [geo, ...(provinces.get(geo) ?? [])]);
}

const temporal = (year: number, dataYear: number) => (year <= dataYear ? 'Current' : 'Forecast');

function calculation(geo: Geo, year: number, dataYear: number, offshore = false): string {
  if (year >= dataYear || geo.country.type === 'Amalgamated' || offshore) return 'Estimated';
  return geo.state ? 'Calculated' : 'Reported';
}

/** Appends rows to a table in chunks of at most 2048 (DuckDB's vector size). */
class ChunkWriter {
  private columns: unknown[][];
  private constructor(
    private readonly appender: Awaited<ReturnType<DuckDBConnection['createAppender']>>,
    private readonly types: DuckDBType[],
  ) {
    this.columns = types.map(() => []);
  }

  static async create(connection: DuckDBConnection, table: string, columns: Array<[string, DuckDBType]>) {
    await connection.run(`CREATE OR REPLACE TABLE ${table} (${columns.map(([n, t]) => `${quoteIdent(n)} ${t.toString()}`).join(', ')})`);
    return new ChunkWriter(
      await connection.createAppender(table),
      columns.map(([, t]) => t),
    );
  }

  push(row: unknown[]): void {
    for (const [i, value] of row.entries()) this.columns[i]!.push(value);
    if (this.columns[0]!.length === 2048) this.flush();
  }

  private flush(): void {
    const size = this.columns[0]!.length;
    if (size === 0) return;
    const chunk = DuckDBDataChunk.create(this.types, size);
    chunk.setColumns(this.columns as never);
    this.appender.appendDataChunk(chunk);
    this.columns = this.types.map(() => []);
  }

  close(): void {
    this.flush();
    this.appender.flushSync();
    this.appender.closeSync();
  }
}

/** A dataset's Parquet columns, from the registry: integer year, text dimensions, DOUBLE metrics. */
const columnsOf = (name: string): Array<[string, DuckDBType]> => {
  const def = DATASETS.find((d) => d.name === name)!;
  return [
    ...def.dimensions.map((d): [string, DuckDBType] => [d, INTEGER_DIMENSIONS.has(d) ? INTEGER : VARCHAR]),
    ...def.metrics.map((m): [string, DuckDBType] => [m, DOUBLE]),
  ];
};

async function copyOut(connection: DuckDBConnection, select: string, file: string): Promise<void> {
  await connection.run(`COPY (${select}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`);
}

async function writeMarket(
  connection: DuckDBConnection,
  dir: string,
  geos: Geo[],
  rates: Rates,
  dataYear: number,
  options: GenerateOptions,
): Promise<number> {
  const dims = DATASETS.find((d) => d.name === 'ggr')!.dimensions;
  const columns: Array<[string, DuckDBType]> = [...columnsOf('ggr'), ['turnover', DOUBLE]];
  const years = LAST_YEAR - FIRST_YEAR + 1;
  const total = Math.round(years * sum(geos.map(marketRowsPerYear)) * Math.min(1, options.scale));
  const parts: string[] = [];
  let writer = await ChunkWriter.create(connection, 'market', columns);
  const spill = async () => {
    writer.close();
    const part = path.join(dir, `market-${parts.length}.parquet`);
    await copyOut(connection, 'SELECT * FROM market', part);
    parts.push(part);
  };
  let kept = 0;
  for (let year = FIRST_YEAR; year <= LAST_YEAR; year++) {
    const eurPerUsd = rates.get('EUR')!(year);
    for (const geo of geos) {
      const { country, random } = geo;
      const size = country.size * 1e9 * geo.share * (1 + geo.growth) ** (year - BASE_YEAR);
      const online = Math.min(0.85, Math.max(0.01, (0.02 + 0.018 * (year - FIRST_YEAR)) * geo.onlineBias));
      for (const p of PRODUCTS) {
        for (const c of CHANNELS) {
          const channelShare = c.channel === 'Land' ? 1 - online : c.sub_channel === 'Onshore' ? online * 0.75 : online * 0.25;
          const usd = size * p.share * channelShare * (0.85 + random() * 0.3);
          const margin = p.margin * (0.9 + random() * 0.2);
          for (const fx of currenciesOf(country)) {
            if (options.scale < 1 && random() >= options.scale) continue;
            const perUsd = fx === 'USD' ? 1 : fx === 'EUR' ? eurPerUsd : rates.get(fx)!(year);
            const ggr = round2(usd * perUsd);
            writer.push([
              year,
              country.region,
              country.name,
              geo.state,
              p.category,
              p.product,
              c.channel,
              c.sub_channel,
              fx,
              temporal(year, dataYear),
              calculation(geo, year, dataYear, c.sub_channel === 'Offshore'),
              ggr,
              round2(ggr / margin),
            ]);
            if (++kept % 50_000 === 0) options.onProgress?.(kept, total);
            if (kept % PART_ROWS === 0) {
              await spill();
              writer = await ChunkWriter.create(connection, 'market', columns);
            }
          }
        }
      }
    }
  }
  await spill();
  await connection.run('DROP TABLE market');
  options.onProgress?.(kept, kept);
  options.onStep?.(`writing ${kept} rows to ggr.parquet and turnover.parquet`);
  // The parts are read back in the order they were written, so the files keep generation order.
  const from = `read_parquet([${parts.map(quoteLiteral).join(', ')}])`;
  const keys = dims.map(quoteIdent).join(', ');
  await copyOut(connection, `SELECT ${keys}, ggr FROM ${from}`, path.join(dir, 'ggr.parquet'));
  await copyOut(connection, `SELECT ${keys}, turnover FROM ${from}`, path.join(dir, 'turnover.parquet'));
  await Promise.all(parts.map((part) => fs.rm(part)));
  return kept;
}

async function writeFx(connection: DuckDBConnection, dir: string, geos: Geo[], rates: Rates, dataYear: number): Promise<number> {
  const def = DATASETS.find((d) => d.name === 'fx')!;
  const writer = await ChunkWriter.create(connection, 'fx', columnsOf('fx'));
  let rows = 0;
  for (let year = FIRST_YEAR; year <= LAST_YEAR; year++) {
    for (const geo of geos) {
      const local = rates.get(geo.country.currency)!;
      const eur = rates.get('EUR')!;
      const values: Record<string, number> = {
        fx_constant_usd: local(BASE_YEAR),
        fx_current_eur: local(year) / eur(year),
        fx_constant_eur: local(BASE_YEAR) / eur(BASE_YEAR),
        fx_current_usd: local(year),
      };
      writer.push([
        year,
        geo.country.region,
        geo.country.name,
        geo.state,
        geo.country.currency,
        temporal(year, dataYear),
        year <= dataYear ? 'Reported' : 'Estimated',
        ...def.metrics.map((m) => Number(values[m]!.toPrecision(6))),
      ]);
      rows++;
    }
  }
  writer.close();
  await copyOut(connection, 'SELECT * FROM fx', path.join(dir, 'fx.parquet'));
  return rows;
}

async function writeCountry(
  connection: DuckDBConnection,
  dir: string,
  geos: Geo[],
  rates: Rates,
  random: () => number,
  dataYear: number,
): Promise<number> {
  const writer = await ChunkWriter.create(connection, 'country', columnsOf('country'));
  let rows = 0;
  const traits = new Map(
    COUNTRIES.map((c) => [
      c.name,
      { gdpPerGgr: 150 + random() * 250, usdPerAdult: 3000 + random() ** 2 * 60000, inflation: 1 + random() * 6 },
    ]),
  );
  for (let year = FIRST_YEAR; year <= LAST_YEAR; year++) {
    for (const geo of geos) {
      const t = traits.get(geo.country.name)!;
      const gdpUsd = geo.country.size * 1e9 * t.gdpPerGgr * geo.share * 1.03 ** (year - BASE_YEAR) * (0.97 + geo.random() * 0.06);
      writer.push([
        year,
        geo.country.region,
        geo.country.name,
        geo.state,
        temporal(year, dataYear),
        calculation(geo, year, dataYear),
        round2(gdpUsd * rates.get(geo.country.currency)!(year)),
        round2(gdpUsd),
        Math.round(gdpUsd / t.usdPerAdult),
        round2(t.inflation + (geo.random() - 0.5) * 2),
      ]);
      rows++;
    }
  }
  writer.close();
  await copyOut(connection, 'SELECT * FROM country', path.join(dir, 'country.parquet'));
  return rows;
}

async function writeReference(connection: DuckDBConnection, dir: string): Promise<number> {
  const writer = await ChunkWriter.create(connection, 'country_reference', columnsOf('country_reference'));
  for (const c of COUNTRIES) writer.push([c.region, c.name, c.type]);
  writer.close();
  await copyOut(connection, 'SELECT * FROM country_reference', path.join(dir, 'country_reference.parquet'));
  return COUNTRIES.length;
}

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { RELEASE_ID } from '../registry.ts';
import { DatasetError } from '../store/dataset-error.ts';

// A release is a folder of Parquet files plus manifest.json, which is written last:
// a folder without a valid manifest is not a release (a crash mid-write publishes nothing).

export const MANIFEST_FILE = 'manifest.json';

const count = v.pipe(v.number(), v.integer(), v.minValue(0));

const manifestSchema = v.object({
  release: v.pipe(v.string(), v.regex(RELEASE_ID, 'Expected a release id like 2026-11')),
  created_at: v.pipe(v.string(), v.isoTimestamp('Expected an ISO timestamp')),
  /** When `etl load` published it; generated releases have only created_at. */
  published_at: v.optional(v.pipe(v.string(), v.isoTimestamp('Expected an ISO timestamp'))),
  /** The folder the analyst's files came from. */
  source: v.optional(v.string()),
  /** True for generated sample data, which must never pass for real figures. */
  synthetic: v.optional(v.boolean()),
  datasets: v.record(
    v.string(),
    v.object({
      file: v.pipe(v.string(), v.regex(/^[\w.-]+\.parquet$/, 'Expected a Parquet file name inside the release folder')),
      rows: v.pipe(v.number(), v.integer(), v.minValue(0)),
      sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'Expected a hex SHA-256 digest')),
      /** The years the file covers (datasets with a year), written since vintages were served; older manifests lack them. */
      first_year: v.optional(v.pipe(v.number(), v.integer())),
      last_year: v.optional(v.pipe(v.number(), v.integer())),
      /** The release this dataset's file was carried over from, when the drop did not hold it. */
      carried_from: v.optional(v.pipe(v.string(), v.regex(RELEASE_ID, 'Expected a release id like 2026-11'))),
    }),
  ),
  /**
   * Rows added, removed and changed per dataset against the release that was current
   * when `etl load` published this one, computed once then; absent for the first
   * release and for generated ones.
   */
  changes: v.optional(
    v.object({
      against: v.pipe(v.string(), v.regex(RELEASE_ID, 'Expected a release id like 2026-11')),
      datasets: v.record(v.string(), v.object({ added: count, removed: count, changed: count })),
    }),
  ),
});

export type Manifest = v.InferOutput<typeof manifestSchema>;

/**
 * A release that cannot be served: its manifest, its pointer or a file's checksum; the
 * message names the file, the field and the fix. A DatasetError, as a file the store
 * cannot load is.
 */
export class ReleaseError extends DatasetError {}

export async function readManifest(dir: string): Promise<Manifest> {
  const file = path.join(dir, MANIFEST_FILE);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (err) {
    throw new ReleaseError(
      `${file}: cannot read the manifest (${(err as Error).message}); regenerate the release with \`npm run etl -- generate --out ${dir}\``,
    );
  }
  const result = v.safeParse(manifestSchema, parsed);
  if (!result.success) {
    const issue = result.issues[0];
    throw new ReleaseError(
      `${file}: field "${v.getDotPath(issue) ?? '(root)'}": ${issue.message}; fix the manifest or regenerate the release`,
    );
  }
  if (result.output.release !== path.basename(dir)) {
    throw new ReleaseError(
      `${file}: field "release" is "${result.output.release}" but the folder is "${path.basename(dir)}"; rename the folder or fix the field`,
    );
  }
  return result.output;
}

export async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  const tmp = path.join(dir, `.${MANIFEST_FILE}.tmp`);
  await fs.writeFile(tmp, `${JSON.stringify(manifest, null, 2)}\n`);
  await fs.rename(tmp, path.join(dir, MANIFEST_FILE));
}

export async function sha256File(file: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { signal })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

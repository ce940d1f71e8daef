// The client packages the service builds (tools/clients/build.ts) and serves at
// GET /clients/<language>/<file> (src/http/routes/clients.ts), by language: each one's
// file name at a version, its media type, and the line that installs it from a URL.
// The front door, /docs and the Explore page's "copy as" panel show these lines.

export interface ClientPackage {
  /** The built file's name at `version`; `latest` names the redirect to the current one. */
  readonly file: (version: string) => string;
  readonly type: string;
  readonly install: (url: string) => string;
}

export const CLIENT_PACKAGES = {
  typescript: { file: (v) => `data-query-client-${v}.tgz`, type: 'application/gzip', install: (url) => `npm install ${url}` },
  python: { file: (v) => `dqs_client-${v}-py3-none-any.whl`, type: 'application/zip', install: (url) => `pip install ${url}` },
  r: {
    file: (v) => `dqs_${v}.tar.gz`,
    type: 'application/gzip',
    install: (url) => `install.packages("${url}", repos = NULL, type = "source")`,
  },
} as const satisfies Record<string, ClientPackage>;

export type ClientLanguage = keyof typeof CLIENT_PACKAGES;

export const CLIENT_LANGUAGES = Object.keys(CLIENT_PACKAGES) as ClientLanguage[];

/** The path of `language`'s package at `version` on any server. */
export const clientPath = (language: ClientLanguage, version: string): string =>
  `/clients/${language}/${CLIENT_PACKAGES[language].file(version)}`;

/**
 * Each package's URL on the server at `origin` and the line installing it. The lines name
 * the versioned file, not `latest`: pip refuses a wheel whose file name has no version.
 */
export function clientInstalls(origin: string, version: string): Record<ClientLanguage, { url: string; install: string }> {
  const entries = CLIENT_LANGUAGES.map((language) => {
    const url = `${origin}${clientPath(language, version)}`;
    return [language, { url, install: CLIENT_PACKAGES[language].install(url) }] as const;
  });
  return Object.fromEntries(entries) as Record<ClientLanguage, { url: string; install: string }>;
}

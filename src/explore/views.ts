// The Explore page's views besides the catalog, one per path (/explore/<view>), each
// showing what the /v1 endpoint of its name answers. The server answers each path with
// the page, and the page's own router reads the same path: both import this list. It
// is bundled into the page too (esbuild, from web/), so it imports nothing.

export const ENDPOINTS = ['financials', 'reference', 'aggregate', 'revisions', 'history'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

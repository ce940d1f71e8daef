// The API's descriptions are markdown (Swagger UI renders them); the page shows them as
// words: code spans, emphasis and links lose their marks, keeping their text.

export const plainText = (markdown: string) =>
  markdown
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\*\*([^*]+)\*\*|__([^_]+)__/g, '$1$2')
    .replace(/`([^`]*)`/g, '$1');

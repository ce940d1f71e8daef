// The catalog of every error a client can see (spec section 7), by concern. Each
// carries its status and body; one middleware renders them, so the texts live only here.

export * from './analytics.ts';
export * from './api-error.ts';
export * from './keys.ts';
export * from './load.ts';
export * from './request.ts';
export * from './webhooks.ts';

/** Milliseconds since the epoch; injected so tests can move time. */
export type Clock = () => number;

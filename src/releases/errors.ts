// What the releases refuse, as the data layer says it; the HTTP layer
// (src/http/respond/request-release.ts) turns each into the answer a client gets.

/** Nothing is served yet: the first release is still loading. */
export class NoReleaseYetError extends Error {
  constructor() {
    super('no release is loaded yet');
  }
}

/** A release that is not published: never was, withdrawn by `etl rollback`, or removed by `etl prune`. */
export class NotPublishedError extends Error {
  constructor(readonly release: string) {
    super(`release ${release} is not published`);
  }
}

/** A published release whose files could not be loaded; its message says why. */
export class LoadFailedError extends Error {
  constructor(
    readonly release: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The caller's owner waits for another release's load already: one release loads for each owner at a time. */
export class LoadRunningError extends Error {
  constructor(readonly loading: string) {
    super(`release ${loading} is loading for the same key`);
  }
}

/**
 * A dataset's file that cannot be served (a missing or mistyped column, a null value,
 * a repeated row, a row count the manifest does not give): the message names the
 * file, the column and the fix. Expected, unlike a bug: whoever loads a release keeps
 * serving the previous one and says why.
 */
export class DatasetError extends Error {}

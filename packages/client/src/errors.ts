/**
 * An error answer of the Postern API: `status` is the HTTP status, `code` the API's snake_case
 * error code (`not_found`, `insufficient_scope`, `in_flight`, … — README, "API error codes") and
 * `message` its text for people. `requestId` is the answer's `X-Request-Id`, the key to ingest's
 * log line for the request.
 */
export class PosternApiError extends Error {
  override readonly name = 'PosternApiError';

  constructor(
    /** HTTP status, 400–599. */
    readonly status: number,
    /** The API's error code; `http_<status>` when the answer carried none (a proxy's error page). */
    readonly code: string,
    message: string,
    /** `X-Request-Id` of the answer, when there was one. */
    readonly requestId: string | null = null,
  ) {
    super(message);
  }
}

/**
 * The request never got an answer: connection refused or reset, DNS failure, or the client's
 * `timeoutMs` ran out. `cause` is the underlying error. A call that changes something may or may
 * not have taken effect; retry it with the same idempotency key.
 */
export class PosternConnectionError extends Error {
  override readonly name = 'PosternConnectionError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

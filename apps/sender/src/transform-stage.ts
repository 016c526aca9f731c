import type { TransformedRequest } from '@postern/shared';
import { runTransformation, type SandboxPool } from '@postern/sandbox';
import type { EndpointRecord } from '@postern/store';
import type { Logger } from 'pino';

/**
 * The transform stage of an attempt (between the check and the send):
 * - `none`: the endpoint has no transformation switched on; the envelope is sent as it is;
 * - `send`: send `request` (its method, URL, headers and body), made by `version`;
 * - `cancel`: the handler dropped the delivery (`cancel: true`); nothing is sent;
 * - `failed`: it threw, ran over a cap or answered something unsendable; the attempt ends with
 *   `transformation_failed:<reason>` and nothing is sent.
 */
export type TransformStage =
  | { kind: 'none' }
  | { kind: 'send'; version: number; request: Extract<TransformedRequest, { kind: 'send' }> }
  | { kind: 'cancel'; version: number }
  | { kind: 'failed'; version: number; error: string };

/** The stage of an endpoint without a transformation (no work, no allocation). */
export const NO_TRANSFORM: TransformStage = Object.freeze({ kind: 'none' });

/** What {@link transformStage} needs: the pool of sandboxes (absent = transformations are not run) and a logger. */
export interface TransformDeps {
  sandbox?: SandboxPool;
  logger: Logger;
  /** Told how long each call took in its sandbox, ms (`postern_transformation_duration_seconds`); optional. */
  metrics?: { transformed?(durationMs: number): void };
}

/**
 * Runs the endpoint's transformation on the envelope this attempt would send (the pre-attempt
 * check's frozen body, where there is one), with the sandbox's clock at `nowMs`. The compiled code
 * is reused per endpoint and version (`<endpoint id>:<version>`).
 */
export async function transformStage(deps: TransformDeps, endpoint: EndpointRecord, envelope: string, nowMs: number, requestId: string): Promise<TransformStage> {
  const t = endpoint.transformation;
  if (!t || !t.enabled) return NO_TRANSFORM;
  // A sender wired without sandboxes cannot honour the endpoint's code: it sends nothing.
  if (!deps.sandbox) return { kind: 'failed', version: t.version, error: 'transformation_failed:error' };
  const verdict = await runTransformation(deps.sandbox, { key: `${endpoint.id}:${t.version}`, code: t.code, envelope, url: endpoint.url, nowMs });
  deps.metrics?.transformed?.(verdict.durationMs);
  if (!verdict.ok) {
    // The reason is the customer's to read in the delivery log. The handler's own message is not
    // logged: code may put the event's data in it (`throw new Error(payload.x)`), and logs carry
    // no payloads. The test route shows it to whoever runs the code.
    deps.logger.info({ requestId, endpointId: endpoint.id, version: t.version, reason: verdict.reason, code: verdict.code, line: verdict.line }, 'transformation failed');
    return { kind: 'failed', version: t.version, error: `transformation_failed:${verdict.reason}` };
  }
  if (verdict.request.kind === 'cancel') return { kind: 'cancel', version: t.version };
  return { kind: 'send', version: t.version, request: verdict.request };
}

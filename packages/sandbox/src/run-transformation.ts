import { planTransformedRequest, type TransformationFailure, type TransformedRequest } from '@postern/shared';
import type { SandboxPool } from './sandbox-pool.js';

/**
 * A transformation's verdict on one request: what to send (or `cancel`), or why it failed
 * (`reason` is what follows `transformation_failed:`), with the handler's `console.log` lines and
 * how long the sandbox took, ms.
 */
export type TransformationVerdict =
  | { ok: true; request: TransformedRequest; logs: string[]; durationMs: number }
  | { ok: false; reason: Exclude<TransformationFailure, 'unsafe_url'>; code: string; message: string; line: number | null; logs: string[]; durationMs: number };

/**
 * Runs `code`'s handler in the pool on the input `transformationInput(envelope, url)` (built inside
 * the sandbox from the envelope's text) and checks its answer (`planTransformedRequest`).
 *
 * @param key - the compiled code to reuse (`<endpoint id>:<version>`); null compiles it for this call only.
 * @param envelope - the envelope the attempt would send, JSON text.
 * @param url - the endpoint's URL (the handler's `url` unless it changes it).
 * @param nowMs - what the sandbox's clock says (the attempt's start), epoch ms.
 */
export async function runTransformation(pool: SandboxPool, call: { key: string | null; code: string; envelope: string; url: string; nowMs: number }): Promise<TransformationVerdict> {
  const run = await pool.run(call);
  if (!run.ok) return run;
  const plan = planTransformedRequest(JSON.parse(run.outputJson), call);
  if (!plan.ok) return { ok: false, reason: 'bad_result', code: 'bad_result', message: plan.message, line: null, logs: run.logs, durationMs: run.durationMs };
  return { ok: true, request: plan.request, logs: run.logs, durationMs: run.durationMs };
}

import { MAX_TRANSFORMATION_CODE_BYTES, nextTransformation, transformationCodeFits, type TransformationSettings } from '@postern/shared';
import type { SandboxPool } from '@postern/sandbox';
import { z } from 'zod';
import { ApiError } from './api-error.js';

/**
 * `transformation` on `POST`/`PATCH /v1/endpoints`: `{code, enabled?}` (≤ 64 KiB of JavaScript
 * defining `function handler(webhook)`), or null to remove it (docs/transformations.md).
 */
export const transformationField = z
  .strictObject(
    {
      code: z.string({ error: 'transformation.code must be a string' }),
      enabled: z.boolean({ error: 'transformation.enabled must be true or false' }).optional(),
    },
    { error: 'transformation must be an object {code, enabled} or null' },
  )
  .nullable();

/** A transformation error with its line: 400 `{error: {code, message, line}}`. */
export class TransformationCodeError extends ApiError {
  constructor(code: string, message: string, readonly line: number | null) {
    super(400, code, message, { line });
  }
}

/**
 * Checks code the way the API refuses it, 400 with the first problem: `transformation_too_large`
 * (over 64 KiB), `transformation_syntax_error` (naming the line), `transformation_handler_missing`
 * (no `function handler`), `transformation_invalid` (its top level threw or ran over a cap).
 *
 * @param field - how the message names the code (`transformation.code`, `code`).
 */
export async function checkTransformationCode(sandbox: SandboxPool, code: string, field: string): Promise<void> {
  if (!transformationCodeFits(code)) throw new TransformationCodeError('transformation_too_large', `${field}: at most ${MAX_TRANSFORMATION_CODE_BYTES} bytes of JavaScript`, null);
  const compiled = await sandbox.compile(code);
  if (compiled.ok) return;
  if (compiled.code === 'syntax_error') throw new TransformationCodeError('transformation_syntax_error', `${field}: line ${compiled.line ?? '?'}: ${compiled.message}`, compiled.line);
  if (compiled.code === 'handler_missing') throw new TransformationCodeError('transformation_handler_missing', `${field}: the code must define function handler(webhook)`, null);
  throw new TransformationCodeError('transformation_invalid', `${field}: ${compiled.message}`, compiled.line);
}

/**
 * The transformation to store after a create or `PATCH`, checked, and the endpoint's highest
 * version to store with it (`lastVersion`, kept through a removal). Undefined when the body has
 * none (unchanged); `transformation` null to remove it, else the new settings
 * (`nextTransformation`: a new code gets a version past every one the endpoint had).
 *
 * @param endpoint - the endpoint's transformation now and `lastTransformationVersion` (absent on a
 *   create, or for an endpoint stored before that field was kept).
 */
export async function resolveTransformation(
  sandbox: SandboxPool,
  given: z.infer<typeof transformationField> | undefined,
  endpoint: { transformation?: TransformationSettings | null; lastTransformationVersion?: number } | null,
  nowMs: number,
): Promise<{ transformation: TransformationSettings | null; lastVersion: number } | undefined> {
  if (given === undefined) return undefined;
  const current = endpoint?.transformation ?? null;
  const before = Math.max(endpoint?.lastTransformationVersion ?? 0, current?.version ?? 0);
  if (given !== null && given.code !== current?.code) await checkTransformationCode(sandbox, given.code, 'transformation.code');
  const transformation = given === null ? null : nextTransformation(current, given, nowMs, before);
  return { transformation, lastVersion: Math.max(before, transformation?.version ?? 0) };
}

/** An endpoint's transformation as the API shows it. */
export function transformationJson(t: TransformationSettings | null | undefined): { code: string; enabled: boolean; version: number; updatedAt: string } | null {
  return t ? { code: t.code, enabled: t.enabled, version: t.version, updatedAt: new Date(t.updatedAt).toISOString() } : null;
}

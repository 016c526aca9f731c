import { TRANSFORMATION_TEMPLATES, eventTypeSchema } from '@postern/shared';
import { runTransformation, type SandboxPool } from '@postern/sandbox';
import { Router } from 'express';
import { z } from 'zod';
import { ApiError, invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireScope } from '../auth.js';
import { transformationTemplatesResponse, transformationTestResponse, type Json } from '../response-schemas.js';
import { checkTransformationCode } from '../transformation-input.js';

const testOnSample = z.strictObject({
  code: z.string({ error: 'code must be a string' }),
  eventType: eventTypeSchema,
  payload: z.unknown(),
  url: z.string({ error: 'url must be a string' }).optional(),
});
const testOnStoredEvent = z.strictObject({
  code: z.string({ error: 'code must be a string' }),
  eventId: z.string({ error: 'eventId must be a string, the id of an event of the org (evt_…)' }),
  url: z.string({ error: 'url must be a string' }).optional(),
});

/**
 * `POST /v1/transformations/test` body: code and a sample event (`eventType`, `payload`), or code
 * and a stored event's id (`eventId`). A body with `eventId` is checked as the second, any other as
 * the first, so a refusal names the field of the form the caller chose.
 */
export const transformationTestBody = z.union([testOnSample, testOnStoredEvent], { error: 'body must be {code, eventType, payload} or {code, eventId}' });

/** The URL a test request shows when none is given (nothing is ever sent to it). */
const SAMPLE_URL = 'https://receiver.example/webhook';

/**
 * `GET /v1/transformations/templates` (any key of the org) and `POST /v1/transformations/test`
 * (`webhooks:write`: it runs code; nothing is sent, nothing stored).
 */
export function transformationRoutes(deps: AppDeps & { sandbox: SandboxPool }): Router {
  const router = Router();

  router.get('/v1/transformations/templates', requireScope('webhooks:read'), (_req, res) => {
    res.json({ data: TRANSFORMATION_TEMPLATES.map((t) => ({ ...t })) } satisfies Json<typeof transformationTemplatesResponse>);
  });

  router.post('/v1/transformations/test', requireScope('webhooks:write'), async (req, res) => {
    const raw: unknown = req.body ?? {};
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ApiError(400, 'invalid_request', 'body: must be a JSON object {code, eventType, payload} or {code, eventId}');
    const parsed = 'eventId' in raw ? testOnStoredEvent.safeParse(raw) : testOnSample.safeParse(raw);
    if (!parsed.success) throw invalidRequest(parsed.error);
    const body: z.infer<typeof transformationTestBody> = parsed.data;
    await checkTransformationCode(deps.sandbox, body.code, 'code');
    const now = deps.clock.now();
    let envelope: string;
    if ('eventId' in body) {
      const event = await deps.store.events.get(res.locals.orgId as string, body.eventId);
      if (!event || event.orgId !== res.locals.orgId) throw notFound('event');
      if (event.dataErasedAt != null || !event.envelope) throw new ApiError(409, 'data_erased', "this event's data was erased: test on a sample payload instead");
      envelope = event.envelope;
    } else {
      envelope = JSON.stringify({ id: 'evt_test', type: body.eventType, timestamp: new Date(now).toISOString(), data: body.payload ?? null });
    }
    const verdict = await runTransformation(deps.sandbox, { key: null, code: body.code, envelope, url: body.url ?? SAMPLE_URL, nowMs: now });
    const durationMs = Math.round(verdict.durationMs * 1000) / 1000;
    if (!verdict.ok) {
      res.json({ result: null, error: { code: `transformation_failed:${verdict.reason}`, message: verdict.message, line: verdict.line }, logs: verdict.logs, durationMs } satisfies Json<typeof transformationTestResponse>);
      return;
    }
    const r = verdict.request;
    res.json({
      result: r.kind === 'cancel' ? { cancel: true } : { cancel: false, method: r.method, url: r.url, headers: { 'content-type': r.contentType, ...r.headers }, body: r.body },
      error: null,
      logs: verdict.logs,
      durationMs,
    } satisfies Json<typeof transformationTestResponse>);
  });

  return router;
}

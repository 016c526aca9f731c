import { policyTimeline } from '@postern/shared';
import { Router } from 'express';
import { z } from 'zod';
import { invalidRequest } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireScope } from '../auth.js';
import { policyOrThrow } from './endpoints.js';
import { policyPreviewResponse, type Json } from '../response-schemas.js';

/** `POST /v1/policies/preview` body: a policy in any form `POST /v1/endpoints` accepts. */
export const policyPreviewBody = z.strictObject({ policy: z.unknown().refine((v) => v !== undefined, 'policy is required') });

/**
 * `POST /v1/policies/preview`: resolves a policy (preset name, preset plus overrides, or custom)
 * exactly as creating an endpoint would, and returns it with its attempt timeline, so a form can
 * show what saving would do. 400 `invalid_policy` naming the field, as on create.
 */
export function policyPreviewRoutes(_deps: AppDeps): Router {
  const router = Router();
  router.post('/v1/policies/preview', requireScope('webhooks:read'), (req, res) => {
    const body = policyPreviewBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    const resolved = policyOrThrow(body.data.policy);
    res.json({ policyName: resolved.presetName, policy: resolved.policy, attempts: policyTimeline(resolved.policy) } satisfies Json<typeof policyPreviewResponse>);
  });
  return router;
}

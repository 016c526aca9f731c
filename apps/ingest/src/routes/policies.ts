import { isPresetName, listPresets, policyTimeline, PRESETS } from '@postern/shared';
import { Router } from 'express';
import { notFound } from '../api-error.js';
import { presetListResponse, presetTimelineResponse, type Json } from '../response-schemas.js';

/** `GET /v1/policies` and `GET /v1/policies/:name/timeline`. Public: presets are not org data. */
export function policyRoutes(): Router {
  const router = Router();
  router.get('/v1/policies', (_req, res) => {
    res.json({ data: listPresets().map((p) => ({ name: p.name, seed: p.seed, summary: p.summary, assumptions: [...p.assumptions], policy: p.policy })) } satisfies Json<typeof presetListResponse>);
  });
  router.get('/v1/policies/:name/timeline', (req, res) => {
    const name = req.params.name;
    if (!isPresetName(name)) throw notFound('policy');
    res.json({ name, attempts: policyTimeline(PRESETS[name].policy) } satisfies Json<typeof presetTimelineResponse>);
  });
  return router;
}

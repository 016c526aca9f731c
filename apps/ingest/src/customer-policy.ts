import { DEFAULT_PORTAL_POLICIES, checkPortalPolicyInput } from '@postern/shared';
import type { OrgRecord } from '@postern/store';
import type { Response } from 'express';
import { ApiError } from './api-error.js';
import type { PortalSessionCredential } from './auth.js';

/**
 * The `policy` a request may set. API keys and operator sessions: whatever they sent. A portal
 * session in customer mode: only what the org's `portalPolicies` offers — a new endpoint without
 * one gets the first offered preset; anything else is 403 `policy_not_offered` naming the field.
 */
export function allowedPolicyInput(res: Response, input: unknown, creating: boolean): unknown {
  const session = res.locals.portalSession as PortalSessionCredential | null | undefined;
  if (session?.mode !== 'customer') return input;
  const allowed = (res.locals.org as OrgRecord | undefined)?.portalPolicies ?? DEFAULT_PORTAL_POLICIES;
  if (input === undefined) return creating ? allowed.presets[0] : undefined;
  const check = checkPortalPolicyInput(input, allowed);
  if (!check.ok) throw new ApiError(403, 'policy_not_offered', check.reason);
  return input;
}

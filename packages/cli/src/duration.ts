const UNITS_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * The instant `since` names, as epoch ms: a duration back from `nowMs` (`90s`, `30m`, `2h`, `7d`)
 * or an ISO 8601 date-time. Throws an Error saying what is accepted otherwise.
 */
export function sinceToMs(since: string, nowMs: number): number {
  const m = /^(\d+)([smhd])$/.exec(since.trim());
  if (m) return nowMs - Number(m[1]) * UNITS_MS[m[2]!]!;
  const at = Date.parse(since);
  if (/^\d{4}-\d{2}-\d{2}T/.test(since) && !Number.isNaN(at)) return at;
  throw new Error(`--since must be a duration such as 30m, 2h or 7d, or an ISO 8601 time such as 2026-11-29T12:00:00Z (got "${since}")`);
}

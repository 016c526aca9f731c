import type { AttemptResponseRecord, StoredAttempt } from './records.js';

/**
 * How attempts are stored (compact records, docs/architecture.md): each attempt's core — times,
 * outcome and the request fields its headers are rebuilt from — is one short JSON array in the
 * delivery's own hash, field `a<number>` (split into 64-byte pieces by compact-hash.lua when
 * longer), so a delivery and its attempts are one listpack-encoded key. A kept response (headers
 * and body excerpt, issue 14) goes to the delivery's attempts hash, field `<number>`, only when
 * kept. Attempts written before compact records are whole {@link StoredAttempt} JSON objects in
 * the attempts hash, and still read.
 *
 * The core: `[startedAt, durationMs, responseStatus, error, userAgent, timestampS - floor(startedAt / 1000), signature]`,
 * trailing nulls left out (claim-attempt.lua writes `[startedAt]` when the attempt begins); an
 * attempt the org's pre-attempt check cancelled (issue 16) has its `cancelReason` eighth, and an
 * attempt of an endpoint with its own headers or auth has them ninth, as the log shows them
 * (`addedHeaders`: secret values already `••••`). An attempt its endpoint's transformation ran at
 * has a tenth: `{v}` (the version; nothing sent) or `{v, m, u, c, h, b, t}` (the version and the
 * request it made: method, URL, content type, its headers, body excerpt, excerpt cut).
 */

/** The tenth element of a core: a transformation's version and, when it sent one, its request. */
interface StoredTransformation {
  v: number;
  m?: string;
  u?: string;
  c?: string;
  h?: Record<string, string>;
  b?: string;
  t?: 0 | 1;
}

/** The delivery hash field of attempt `n`'s core. */
export const attemptField = (n: number): string => `a${n}`;
const ATTEMPT_FIELD = /^a(\d+)$/;

/**
 * What finish-attempt.lua takes as one argument: the core, then (only when a response was kept)
 * a newline and the response JSON. JSON.stringify never writes a raw newline.
 */
export function encodeAttempt(a: StoredAttempt): string {
  const core: unknown[] = [a.startedAt, a.durationMs ?? null, a.responseStatus ?? null, a.error ?? null];
  if (a.sent) core.push(a.sent.userAgent, a.sent.timestampS - Math.floor(a.startedAt / 1000), a.sent.signature);
  const t = a.sent?.transformed;
  const transformation = t ? { v: t.version, m: t.method, u: t.url, c: t.contentType, h: t.headers, b: t.bodyExcerpt, t: t.bodyTruncated ? 1 : 0 } : a.transformationVersion !== undefined ? { v: a.transformationVersion } : null;
  if (a.cancelReason || a.sent?.addedHeaders || transformation) {
    while (core.length < 7) core.push(null);
    core.push(a.cancelReason ?? null);
  }
  if (a.sent?.addedHeaders || transformation) core.push(a.sent?.addedHeaders ?? null);
  if (transformation) core.push(transformation);
  while (core.length > 1 && core[core.length - 1] === null) core.pop();
  const head = JSON.stringify(core);
  return a.response ? `${head}\n${JSON.stringify(a.response)}` : head;
}

/** One attempt's core as stored in the delivery hash (see {@link encodeAttempt}). */
export function decodeAttemptCore(number: number, raw: string): StoredAttempt {
  const c = JSON.parse(raw) as [number, number?, number?, string?, string?, number?, string?, (string | null)?, (Record<string, string> | null)?, StoredTransformation?];
  const startedAt = c[0];
  const attempt: StoredAttempt = { number, startedAt, durationMs: c[1] ?? null, responseStatus: c[2] ?? null, error: c[3] ?? null };
  if (typeof c[4] === 'string') attempt.sent = { userAgent: c[4], timestampS: Math.floor(startedAt / 1000) + (c[5] ?? 0), signature: c[6] ?? '' };
  if (typeof c[7] === 'string') attempt.cancelReason = c[7];
  if (attempt.sent && c[8] && typeof c[8] === 'object') attempt.sent.addedHeaders = c[8];
  const t = c[9];
  if (t && typeof t.v === 'number') {
    if (attempt.sent && typeof t.u === 'string') {
      attempt.sent.transformed = { version: t.v, method: t.m ?? 'POST', url: t.u, contentType: t.c ?? 'application/json', headers: t.h ?? {}, bodyExcerpt: t.b ?? '', bodyTruncated: t.t === 1 };
    } else attempt.transformationVersion = t.v;
  }
  return attempt;
}

/**
 * Every attempt of a delivery, by number, from its hash and its attempts hash (both with split
 * values joined): compact cores with their kept responses, and attempts of the older format.
 */
export function readAttempts(deliveryHash: Record<string, string>, attemptsHash: Record<string, string>): StoredAttempt[] {
  const byNumber = new Map<number, StoredAttempt>();
  for (const [field, raw] of Object.entries(deliveryHash)) {
    const m = ATTEMPT_FIELD.exec(field);
    if (m) byNumber.set(Number(m[1]), decodeAttemptCore(Number(m[1]), raw));
  }
  for (const [field, raw] of Object.entries(attemptsHash)) {
    const n = Number(field);
    if (!Number.isInteger(n)) continue;
    const value = JSON.parse(raw) as StoredAttempt | AttemptResponseRecord;
    const core = byNumber.get(n);
    if ('startedAt' in value) {
      if (!core) byNumber.set(n, value);
    } else if (core) core.response = value;
  }
  return [...byNumber.values()].sort((a, b) => a.number - b.number);
}

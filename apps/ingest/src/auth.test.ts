import type { Request, Response } from 'express';
import type { PlatformKeyRecord, Store } from '@postern/store';
import { ApiError } from './api-error.js';
import { hashApiKey, isPlatformKeyToken, mintPlatformKey, requireAdminOrPlatformKey } from './auth.js';

const ADMIN = 'admin-token-0123456789';

/** Runs the middleware on a request with `authorization`; resolves with what it passed to next() and res.locals. */
function run(handler: ReturnType<typeof requireAdminOrPlatformKey>, authorization?: string): Promise<{ error: unknown; locals: Record<string, unknown> }> {
  const req = { headers: authorization === undefined ? {} : { authorization } } as unknown as Request;
  const res = { locals: {} } as unknown as Response;
  return new Promise((resolve) => handler(req, res, (error?: unknown) => resolve({ error, locals: res.locals })));
}

function withKeys(keys: PlatformKeyRecord[]) {
  const store = { platformKeys: { authenticate: async (hash: string) => keys.find((k) => k.keyHash === hash && k.revokedAt === null) ?? null } } as unknown as Pick<Store, 'platformKeys'>;
  return requireAdminOrPlatformKey({ store, config: { adminToken: ADMIN } }, 'webhooks:read');
}

test('a platform key is ppk_ + 43 base64url characters; its prefix is the 8 after ppk_ and only its hash is kept', () => {
  const { platformKey, prefix, keyHash } = mintPlatformKey();
  expect(platformKey).toMatch(/^ppk_[A-Za-z0-9_-]{43}$/);
  expect(prefix).toBe(platformKey.slice(4, 12));
  expect(keyHash).toBe(hashApiKey(platformKey));
  expect(isPlatformKeyToken(platformKey)).toBe(true);
  expect(isPlatformKeyToken('pk_abc')).toBe(false);
});

test('requireAdminOrPlatformKey: the admin token, or a live platform key with the scope; nothing else', async () => {
  const reader = mintPlatformKey();
  const writer = mintPlatformKey();
  const revoked = mintPlatformKey();
  const record = (m: typeof reader, scopes: PlatformKeyRecord['scopes'], revokedAt: number | null = null): PlatformKeyRecord => ({ id: `pfk_${m.prefix}`, name: 'p', scopes, prefix: m.prefix, keyHash: m.keyHash, createdAt: 0, revokedAt });
  const handler = withKeys([record(reader, ['webhooks:read']), record(writer, ['webhooks:write']), record(revoked, ['webhooks:read'], 1)]);

  expect(await run(handler, `Bearer ${ADMIN}`)).toEqual({ error: undefined, locals: {} });
  const asReader = await run(handler, `Bearer ${reader.platformKey}`);
  expect(asReader.error).toBeUndefined();
  expect(asReader.locals.platformKey).toMatchObject({ id: `pfk_${reader.prefix}` });

  for (const [authorization, status, code] of [
    [undefined, 401, 'unauthorized'],
    ['Bearer wrong-token', 401, 'unauthorized'],
    [`Bearer ${revoked.platformKey}`, 401, 'unauthorized'],
    [`Bearer ${writer.platformKey}`, 403, 'insufficient_scope'],
  ] as const) {
    const { error } = await run(handler, authorization);
    expect(error).toBeInstanceOf(ApiError);
    expect({ authorization, status: (error as ApiError).status, code: (error as ApiError).code }).toEqual({ authorization, status, code });
  }
});

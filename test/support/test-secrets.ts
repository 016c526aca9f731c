/**
 * The `SECRETS_KEY` and `SECRETS_KEY_ID` every test Postern seals its stored secrets with (in
 * process and spawned alike), so the whole suite runs sealed.
 */
export const TEST_SECRETS_ENV = { SECRETS_KEY: Buffer.alloc(32, 'postern-test-secrets-key:').toString('base64'), SECRETS_KEY_ID: 'test1' } as const;

// Types of start-env.mjs, for TypeScript callers (the tests).
export const DEVELOPMENT_ALLOWED_ADDRESSES: string;
export function readyBanner(apiPort: number, env: Record<string, string | undefined>): string[];
export function developmentSecretsKey(file: string): { key: string; created: boolean };
export function startEnvironment(processEnv: Record<string, string | undefined>): Record<string, string | undefined>;

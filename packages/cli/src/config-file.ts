import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';

/** What `postern login` stores: where Postern is and the API key to use. */
export const cliConfigSchema = z.object({
  baseUrl: z.string().regex(/^https?:\/\//, 'baseUrl must be an http(s) URL'),
  apiKey: z.string().min(1),
});

/** The CLI's stored settings. */
export type CliConfig = z.infer<typeof cliConfigSchema>;

/**
 * Where the CLI keeps its settings: `$XDG_CONFIG_HOME/postern/config.json` when `XDG_CONFIG_HOME`
 * is an absolute path (the XDG Base Directory spec ignores a relative one), else
 * `~/.config/postern/config.json`.
 */
export function configPath(env: NodeJS.ProcessEnv, home: string = homedir()): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(home, '.config');
  return join(base, 'postern', 'config.json');
}

/** Reads the stored settings; null when there are none. Throws naming the file (and the field) when it is not valid. */
export function readConfig(path: string): CliConfig | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON; run postern login again (or remove it with postern logout)`);
  }
  const parsed = cliConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.join('.') : null;
    throw new Error(`${path} is not a valid postern config (${field ? `${field} is missing or not text` : 'it must be an object with baseUrl and apiKey'}); run postern login again`);
  }
  return parsed.data;
}

/** Writes the settings readable by the user only (file 0600, its folder 0700): the file holds an API key. */
export function writeConfig(path: string, config: CliConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  // A file that existed keeps its mode through writeFileSync: set it again.
  chmodSync(path, 0o600);
}

/**
 * Removes the stored settings (`postern logout`): the file only, not its folder.
 * @returns whether there was a file to remove
 */
export function removeConfig(path: string): boolean {
  try {
    rmSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

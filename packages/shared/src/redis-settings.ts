import { z } from 'zod';

/**
 * Where Postern's Redis is and how to reach it, as the environment says (README, "Production
 * Redis"): a standalone server (`REDIS_URL`), a Redis Cluster (`REDIS_CLUSTER_NODES`) or a
 * Sentinel-watched primary (`REDIS_SENTINELS`), each with optional TLS and an ACL user. Pure:
 * {@link redisConnectionPlan} turns the settings into a plan; `@postern/store` reads the
 * certificate files and opens the connections.
 */
export const redisSettingsShape = {
  /** ACL user name; overrides one in `REDIS_URL`. Also the user of every cluster node. */
  REDIS_USERNAME: z.string().min(1).optional().or(z.literal('').transform(() => undefined)),
  /** The user's password (or the `requirepass` one without a user name); overrides one in `REDIS_URL`. Never logged. */
  REDIS_PASSWORD: z.string().min(1).optional().or(z.literal('').transform(() => undefined)),
  /** `true`: TLS to every Redis node (implied by a `rediss://` URL; needed for a cluster or Sentinel over TLS). */
  REDIS_TLS: z.stringbool({ error: 'must be true or false' }).optional(),
  /** PEM file of the CA that signed the servers' certificates (default: Node's own CA list). */
  REDIS_TLS_CA_FILE: z.string().min(1).optional().or(z.literal('').transform(() => undefined)),
  /** PEM certificate Postern presents to Redis (mutual TLS), with {@link REDIS_TLS_KEY_FILE}. */
  REDIS_TLS_CERT_FILE: z.string().min(1).optional().or(z.literal('').transform(() => undefined)),
  /** PEM private key of {@link REDIS_TLS_CERT_FILE}. */
  REDIS_TLS_KEY_FILE: z.string().min(1).optional().or(z.literal('').transform(() => undefined)),
  /** The name the servers' certificates must carry when it differs from the host connected to (SNI too). */
  REDIS_TLS_SERVERNAME: z.string().min(1).optional().or(z.literal('').transform(() => undefined)),
  /** `host:port,…` of the Sentinels watching the primary; when set, `REDIS_URL` only lends its user, password and TLS. */
  REDIS_SENTINELS: z.string().regex(/^$|^[^,\s]+:\d{1,5}(,[^,\s]+:\d{1,5})*$/, 'must be host:port,host:port,…').default(''),
  /** The primary's name in the Sentinels' configuration (`sentinel monitor <name> …`). */
  REDIS_SENTINEL_NAME: z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits and ._- only').default('mymaster'),
  /** ACL user of the Sentinels themselves (Redis ≥ 6.2 Sentinels can require one). */
  REDIS_SENTINEL_USERNAME: z.string().min(1).optional().or(z.literal('').transform(() => undefined)),
  /** Password of the Sentinels themselves (`requirepass` in sentinel.conf). Never logged. */
  REDIS_SENTINEL_PASSWORD: z.string().min(1).optional().or(z.literal('').transform(() => undefined)),
  /**
   * `announced-host:port=reachable-host:port,…`: for a cluster behind NAT or a proxy, the address
   * each node announces mapped to the address Postern reaches it at.
   */
  REDIS_CLUSTER_NAT_MAP: z.string().regex(/^$|^[^,=\s]+:\d{1,5}=[^,=\s]+:\d{1,5}(,[^,=\s]+:\d{1,5}=[^,=\s]+:\d{1,5})*$/, 'must be host:port=host:port,…').default(''),
};

/** The settings {@link redisConnectionPlan} reads (`REDIS_URL` and `REDIS_CLUSTER_NODES` from the common ones). */
export interface RedisSettings {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES: string;
  REDIS_USERNAME?: string;
  REDIS_PASSWORD?: string;
  REDIS_TLS?: boolean;
  REDIS_TLS_CA_FILE?: string;
  REDIS_TLS_CERT_FILE?: string;
  REDIS_TLS_KEY_FILE?: string;
  REDIS_TLS_SERVERNAME?: string;
  REDIS_SENTINELS: string;
  REDIS_SENTINEL_NAME: string;
  REDIS_SENTINEL_USERNAME?: string;
  REDIS_SENTINEL_PASSWORD?: string;
  REDIS_CLUSTER_NAT_MAP: string;
}

/** A Redis node's address. */
export interface RedisNodeAddress {
  host: string;
  port: number;
}

/** TLS to Redis: files to read (PEM), the expected server name; null = plain TCP. */
export interface RedisTlsPlan {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  servername?: string;
}

/** Credentials of every data connection (the Sentinels have their own). */
export interface RedisAuthPlan {
  username?: string;
  password?: string;
}

/** How to reach Redis, as {@link redisConnectionPlan} decides it. */
export type RedisConnectionPlan =
  | { kind: 'standalone'; /** `REDIS_URL` without its user and password, for logs. */ url: string; host: string; port: number; db: number; auth: RedisAuthPlan; tls: RedisTlsPlan | null }
  | { kind: 'cluster'; nodes: RedisNodeAddress[]; natMap: Record<string, RedisNodeAddress>; auth: RedisAuthPlan; tls: RedisTlsPlan | null }
  | { kind: 'sentinel'; sentinels: RedisNodeAddress[]; name: string; auth: RedisAuthPlan; sentinelAuth: RedisAuthPlan; tls: RedisTlsPlan | null };

/**
 * Parses `host:port,host:port,…` (at least one), as `REDIS_CLUSTER_NODES` and `REDIS_SENTINELS`
 * take it. `setting` names it in errors.
 *
 * @throws Error `<setting>: "<entry>" is not host:port` (port 1..65535), or `<setting>: no host:port given`.
 */
export function parseHostPorts(value: string, setting: string): RedisNodeAddress[] {
  const nodes = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((entry) => {
      const m = /^(.+):(\d{1,5})$/.exec(entry);
      const port = m ? Number(m[2]) : NaN;
      if (!m || port < 1 || port > 65535) throw new Error(`${setting}: "${entry}" is not host:port`);
      return { host: m[1]!, port };
    });
  if (nodes.length === 0) throw new Error(`${setting}: no host:port given`);
  return nodes;
}

/**
 * Decides how to reach Redis from the settings: Sentinel when `REDIS_SENTINELS` is set, else a
 * cluster when `REDIS_CLUSTER_NODES` is, else the standalone `REDIS_URL`. TLS is on for a
 * `rediss://` URL or `REDIS_TLS=true`; the user and password come from `REDIS_USERNAME` /
 * `REDIS_PASSWORD`, else from `REDIS_URL`'s userinfo (so a managed service's one URL is enough).
 *
 * @throws Error `invalid configuration: <SETTING>: <why>` on settings that contradict each other:
 *   both a cluster and Sentinels, TLS files without TLS, a certificate without its key, a NAT
 *   map without a cluster, `REDIS_TLS=false` with a `rediss://` URL.
 */
export function redisConnectionPlan(s: RedisSettings): RedisConnectionPlan {
  const bad = (setting: string, why: string) => new Error(`invalid configuration: ${setting}: ${why}`);
  let url: URL;
  try {
    url = new URL(s.REDIS_URL);
  } catch {
    throw bad('REDIS_URL', 'is not a URL');
  }
  const urlTls = url.protocol === 'rediss:';
  if (s.REDIS_TLS === false && urlTls) throw bad('REDIS_TLS', 'is false but REDIS_URL is rediss://');
  const tlsOn = s.REDIS_TLS ?? urlTls;
  const files = { REDIS_TLS_CA_FILE: s.REDIS_TLS_CA_FILE, REDIS_TLS_CERT_FILE: s.REDIS_TLS_CERT_FILE, REDIS_TLS_KEY_FILE: s.REDIS_TLS_KEY_FILE, REDIS_TLS_SERVERNAME: s.REDIS_TLS_SERVERNAME };
  for (const [name, value] of Object.entries(files)) {
    if (value !== undefined && !tlsOn) throw bad(name, 'is set but TLS is off (use a rediss:// REDIS_URL or REDIS_TLS=true)');
  }
  if ((s.REDIS_TLS_CERT_FILE === undefined) !== (s.REDIS_TLS_KEY_FILE === undefined)) {
    throw bad(s.REDIS_TLS_CERT_FILE === undefined ? 'REDIS_TLS_CERT_FILE' : 'REDIS_TLS_KEY_FILE', 'mutual TLS needs both REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE');
  }
  const tls: RedisTlsPlan | null = tlsOn
    ? {
        ...(s.REDIS_TLS_CA_FILE !== undefined ? { caFile: s.REDIS_TLS_CA_FILE } : {}),
        ...(s.REDIS_TLS_CERT_FILE !== undefined ? { certFile: s.REDIS_TLS_CERT_FILE, keyFile: s.REDIS_TLS_KEY_FILE } : {}),
        ...(s.REDIS_TLS_SERVERNAME !== undefined ? { servername: s.REDIS_TLS_SERVERNAME } : {}),
      }
    : null;
  const urlUser = url.username ? decodeURIComponent(url.username) : undefined;
  const urlPassword = url.password ? decodeURIComponent(url.password) : undefined;
  const username = s.REDIS_USERNAME ?? urlUser;
  const password = s.REDIS_PASSWORD ?? urlPassword;
  if (username !== undefined && password === undefined) throw bad('REDIS_PASSWORD', `is required with the ACL user ${JSON.stringify(username)}`);
  const auth: RedisAuthPlan = { ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}) };

  const wrap = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw new Error(`invalid configuration: ${(err as Error).message}`);
    }
  };
  if (s.REDIS_CLUSTER_NAT_MAP && !s.REDIS_CLUSTER_NODES) throw bad('REDIS_CLUSTER_NAT_MAP', 'is set but REDIS_CLUSTER_NODES is not');
  if (s.REDIS_SENTINELS) {
    if (s.REDIS_CLUSTER_NODES) throw bad('REDIS_SENTINELS', 'and REDIS_CLUSTER_NODES are both set: a cluster does not use Sentinel');
    const sentinels = wrap(() => parseHostPorts(s.REDIS_SENTINELS, 'REDIS_SENTINELS'));
    if (s.REDIS_SENTINEL_USERNAME !== undefined && s.REDIS_SENTINEL_PASSWORD === undefined) throw bad('REDIS_SENTINEL_PASSWORD', 'is required with REDIS_SENTINEL_USERNAME');
    const sentinelAuth: RedisAuthPlan = {
      ...(s.REDIS_SENTINEL_USERNAME !== undefined ? { username: s.REDIS_SENTINEL_USERNAME } : {}),
      ...(s.REDIS_SENTINEL_PASSWORD !== undefined ? { password: s.REDIS_SENTINEL_PASSWORD } : {}),
    };
    return { kind: 'sentinel', sentinels, name: s.REDIS_SENTINEL_NAME, auth, sentinelAuth, tls };
  }
  if (s.REDIS_CLUSTER_NODES) {
    const nodes = wrap(() => parseHostPorts(s.REDIS_CLUSTER_NODES, 'REDIS_CLUSTER_NODES'));
    const natMap: Record<string, RedisNodeAddress> = {};
    for (const pair of s.REDIS_CLUSTER_NAT_MAP.split(',').filter(Boolean)) {
      const [from, to] = pair.split('=') as [string, string];
      const [target] = wrap(() => parseHostPorts(to, 'REDIS_CLUSTER_NAT_MAP'));
      wrap(() => parseHostPorts(from, 'REDIS_CLUSTER_NAT_MAP'));
      natMap[from] = target!;
    }
    return { kind: 'cluster', nodes, natMap, auth, tls };
  }
  // The URL's own userinfo is replaced by the plan's credentials (passed as options), so it never
  // travels further than here.
  const bare = new URL(s.REDIS_URL);
  bare.username = '';
  bare.password = '';
  const db = bare.pathname.length > 1 ? Number(bare.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw bad('REDIS_URL', `"${bare.pathname}" is not a database number`);
  const port = bare.port ? Number(bare.port) : 6379;
  return { kind: 'standalone', url: bare.toString(), host: bare.hostname.replace(/^\[|\]$/g, ''), port, db, auth, tls };
}

/**
 * A one-line description of where Redis is, safe to log: kind, hosts, TLS and user name — never a
 * password.
 */
export function describeRedisPlan(plan: RedisConnectionPlan): string {
  const user = plan.auth.username ? ` as ${plan.auth.username}` : plan.auth.password ? ' with a password' : '';
  const tls = plan.tls ? ' over TLS' : '';
  switch (plan.kind) {
    case 'standalone': {
      return `standalone ${new URL(plan.url).host}${plan.db !== 0 ? ` db ${plan.db}` : ''}${tls}${user}`;
    }
    case 'cluster':
      return `cluster ${plan.nodes.map((n) => `${n.host}:${n.port}`).join(',')}${tls}${user}`;
    case 'sentinel':
      return `sentinel ${plan.name} via ${plan.sentinels.map((n) => `${n.host}:${n.port}`).join(',')}${tls}${user}`;
  }
}

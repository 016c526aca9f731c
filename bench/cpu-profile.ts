/**
 * Reads a V8 `.cpuprofile` (from `node --cpu-prof`) and says where the time went: self time by
 * component (an npm package, a Postern workspace, a part of Node, GC) and by function, idle time
 * left out. Used by `npm run bench` to name the top costs when a goal is missed.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

/** One line of a profile summary: a component or function and its share of busy time. */
export interface Cost {
  name: string;
  ms: number;
  /** Share of the process's busy (non-idle) time, 0..100. */
  percent: number;
}

/** A profile's busy time and its top components and functions (start-up module loading left out). */
export interface ProfileSummary {
  busyMs: number;
  /** Time spent loading modules at start-up, not in `busyMs`. */
  startupMs: number;
  wallMs: number;
  components: Cost[];
  functions: Cost[];
}

/** Label of the time spent loading and compiling modules at start-up (tsx, Node's loaders). */
export const STARTUP = 'start-up: loading modules';

/** The component a frame belongs to: `pkg:got`, `postern:apps/sender`, `node:http`, `GC`, … */
export function componentOf(url: string, functionName: string): string {
  if (url.includes('/node_modules/tsx/') || /^node:internal\/(modules|deps\/cjs-module-lexer|bootstrap)/.test(url)) return STARTUP;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(program)') return 'native (program)';
    if (functionName === '(idle)') return 'idle';
    // Socket writes: every Redis command and HTTP request is at least one.
    if (/^(writeUtf8String|writeBuffer|writev|writeLatin1String|writeAsciiString|writeUcs2String)$/.test(functionName)) return 'native: socket writes';
    return 'native: other';
  }
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + '/node_modules/'.length).split('/');
    return `pkg:${parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  if (url.startsWith('node:')) {
    const m = /^node:(?:internal\/)?([^/]+)/.exec(url);
    return `node:${m?.[1] ?? url.slice(5)}`;
  }
  const ws = /\/((?:apps|packages)\/[^/]+)\//.exec(url);
  if (ws) return `postern:${ws[1]}`;
  return url.split('/').pop() ?? url;
}

/** Summarises one `.cpuprofile` file: self time per component and per function, top `top` of each. */
export function summariseCpuProfile(path: string, top = 8): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const selfUs = new Map<number, number>();
  if (profile.samples && profile.timeDeltas) {
    for (let i = 0; i < profile.samples.length; i++) {
      const id = profile.samples[i]!;
      // Each delta is the time up to sample i, spent in the frame sampled then.
      selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, profile.timeDeltas[i] ?? 0));
    }
  }
  const byComponent = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busyUs = 0;
  let startupUs = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const component = componentOf(url, functionName);
    if (component === 'idle') continue;
    if (component === STARTUP) {
      startupUs += us;
      continue;
    }
    busyUs += us;
    byComponent.set(component, (byComponent.get(component) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(apps|packages)\//, '$1/')}:${lineNumber + 1}` : ''}`.trim();
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  const rank = (m: Map<string, number>): Cost[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: Math.round(us / 1000), percent: busyUs > 0 ? Math.round((us / busyUs) * 1000) / 10 : 0 }));
  return { busyMs: Math.round(busyUs / 1000), startupMs: Math.round(startupUs / 1000), wallMs: Math.round((profile.endTime - profile.startTime) / 1000), components: rank(byComponent), functions: rank(byFunction) };
}

import type { DeliveryWithAttempts, Endpoint, EventBatchResult, LiveDelivery } from '@postern/client';
import { escapeNotPrintable } from '@postern/shared';
import pc from 'picocolors';

/**
 * Exit codes of every command (docs/cli.md): 0 done; 1 Postern refused or failed the request (an
 * API error); 2 a usage or configuration error (bad arguments, not logged in); 3 Postern could not
 * be reached; 4 `verify`: the signature does not check out.
 */
export const EXIT = Object.freeze({ ok: 0, apiError: 1, usage: 2, unreachable: 3, invalidSignature: 4 });

/** Where a command writes: stdout lines, and whether they are JSON (`--json`) for scripts. */
export interface Output {
  json: boolean;
  /** One line on stdout. */
  line(text: string): void;
  /** One JSON value on one line of stdout. */
  value(value: unknown): void;
}

/** An {@link Output} on the process's stdout. */
export function stdoutOutput(json: boolean): Output {
  return {
    json,
    line: (text) => process.stdout.write(`${text}\n`),
    value: (value) => process.stdout.write(`${JSON.stringify(value)}\n`),
  };
}

const STATUS_COLOUR: Record<string, (s: string) => string> = {
  succeeded: pc.green,
  failed: pc.red,
  cancelled: pc.yellow,
  pending: pc.cyan,
  in_flight: pc.blue,
};

/** A status, coloured when the terminal takes colour (picocolors follows NO_COLOR and TTY-ness). */
export function status(s: string, width = 0): string {
  // Padded before it is coloured: the colour codes would otherwise count towards the width.
  return (STATUS_COLOUR[s] ?? ((x: string) => x))(s.padEnd(width));
}

/** One line of `postern tail`: time, status, delivery, endpoint, event type, attempt, answer, error, duration. */
export function liveLine(d: LiveDelivery): string {
  const time = d.at.slice(11, 19);
  const attempt = d.attempt === null ? 'no attempt' : `#${d.attempt}`;
  const answer = d.responseStatus === null ? '' : ` ${d.responseStatus >= 200 && d.responseStatus < 300 ? pc.green(String(d.responseStatus)) : pc.red(String(d.responseStatus))}`;
  const error = d.error ? ` ${pc.red(d.error)}` : '';
  const took = d.durationMs === null ? '' : pc.dim(` ${d.durationMs}ms`);
  const next = d.nextAttemptAt ? pc.dim(` next ${d.nextAttemptAt.slice(11, 19)}`) : '';
  return `${pc.dim(time)} ${status(d.status, 9)} ${d.deliveryId} ${pc.dim(d.endpointId)} ${d.eventType} ${attempt}${answer}${error}${took}${next}`;
}

/** One line of `postern events send-batch`: where the event was in the file, then its id and deliveries, or why it was refused. */
export function batchResultLine(where: string, result: EventBatchResult): string {
  // `where` already places the event (its line in the file): the request's `events[i]` would not.
  if ('error' in result) return `${where}: ${pc.red(`refused ${result.status} ${result.error.code}`)}: ${result.error.message.replace(/^events\[\d+\]\.?/, '').replace(/^: /, '')}`;
  const n = result.deliveries.length;
  const replayed = result.idempotentReplayed ? pc.dim(' (already accepted under this idempotency key)') : '';
  return `${where}: ${result.id} accepted: ${n} ${n === 1 ? 'delivery' : 'deliveries'}${replayed}`;
}

/** One row of `postern endpoints ls`. */
export function endpointLine(e: Endpoint): string {
  return `${e.id}  ${status(e.status === 'active' ? 'succeeded' : 'cancelled').replace(/succeeded|cancelled/, e.status)}  ${e.url}  ${pc.dim(e.eventTypes.join(','))}`;
}

/**
 * `postern deliveries show`: the delivery, then every attempt with what was sent and what came
 * back. What came back is the receiver's, so it is shown through `escapeNotPrintable`.
 */
export function deliveryLines(d: DeliveryWithAttempts): string[] {
  const lines = [
    `${pc.bold(d.id)}  ${status(d.status)}`,
    `  event     ${d.eventId} (${d.eventType})`,
    `  endpoint  ${d.endpointId}`,
    `  created   ${d.createdAt}`,
    ...(d.nextAttemptAt ? [`  next      ${d.nextAttemptAt}`] : []),
    ...(d.cancelReason ? [`  cancelled ${d.cancelReason}`] : []),
    ...(d.redeliveredFromId ? [`  redelivery of ${d.redeliveredFromId}`] : []),
  ];
  for (const a of d.attempts) {
    const answer = a.responseStatus === null ? '' : ` → ${a.responseStatus}`;
    lines.push('', `  attempt ${a.number}  ${a.startedAt}${answer}${a.error ? ` ${pc.red(a.error)}` : ''}${a.durationMs === null ? '' : pc.dim(` ${a.durationMs}ms`)}`);
    const sent = a.requestHeaders as Record<string, string> | null | undefined;
    if (sent) for (const [name, value] of Object.entries(sent)) lines.push(pc.dim(`    > ${escapeNotPrintable(name)}: ${escapeNotPrintable(String(value))}`));
    const response = a.response as { headers?: Record<string, string>; body?: string | null } | null | undefined;
    if (response?.headers) for (const [name, value] of Object.entries(response.headers)) lines.push(pc.dim(`    < ${escapeNotPrintable(name)}: ${escapeNotPrintable(String(value))}`));
    if (response?.body) lines.push(`    < ${escapeNotPrintable(response.body)}`);
  }
  return lines;
}

import { rawJson, type CreateEventBody } from '@postern/client';
import { extractRawArrayElements, extractRawField } from '@postern/shared';

/** One event read from a file by {@link readEventFile}: what to send, and where it was. */
export interface FileEvent {
  /** The event as written; its `data` (when it has one) kept byte for byte as a `RawJson`. */
  event: CreateEventBody;
  /** 0-based position among the file's events. */
  index: number;
  /** 1-based line of the file, for NDJSON; absent for a JSON array. */
  line?: number;
}

/** The event an element's text makes, with its `data` text sent as it was written (`1.0` stays `1.0`). */
function eventOf(text: string): CreateEventBody {
  const value = JSON.parse(text) as unknown;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value as CreateEventBody;
  const data = extractRawField(text, 'data');
  return (data === undefined ? value : { ...value, data: rawJson(data) }) as CreateEventBody;
}

/**
 * Reads the events of `postern events send-batch`: a JSON array of events, a JSON object
 * `{"events": [...]}` (a batch body as the API takes it), one event object, or NDJSON (one event
 * per line; blank lines skipped). Each event is sent as written — one that is not a valid event is
 * left for Postern to refuse on its own, as it would refuse it in any batch.
 *
 * @throws Error naming the line when a line of NDJSON is not JSON, or when there is no event at all.
 */
export function readEventFile(text: string): FileEvent[] {
  let whole: unknown;
  let parsed = true;
  try {
    whole = JSON.parse(text);
  } catch {
    parsed = false;
  }
  if (parsed) {
    const isBatch = whole !== null && typeof whole === 'object' && !Array.isArray(whole) && Array.isArray((whole as { events?: unknown }).events);
    if (!isBatch && whole !== null && typeof whole === 'object' && !Array.isArray(whole) && 'events' in whole) throw new Error('"events" must be an array of events');
    const elements = Array.isArray(whole) ? extractRawArrayElements(`{"events":${text}}`, 'events') : isBatch ? extractRawArrayElements(text, 'events') : [text.trim()];
    if (!elements) throw new Error('the file is JSON but its events could not be read');
    if (elements.length === 0) throw new Error('the file holds no events');
    return elements.map((element, index) => ({ event: eventOf(element), index }));
  }
  const events: FileEvent[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      events.push({ event: eventOf(line), index: events.length, line: i + 1 });
    } catch (err) {
      throw new Error(`line ${i + 1} is not JSON: ${(err as Error).message}`);
    }
  });
  if (events.length === 0) throw new Error('the file holds no events');
  return events;
}

// Times and durations in plain words. The API speaks ISO 8601 and milliseconds.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** `12 ms`, `1.5 s`, `5 min`, `2 h 35 min`, `1 d 3 h`. */
export function duration(ms) {
  if (ms === null || ms === undefined) return '—';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 60_000) return `${trim(ms / 1000)} s`;
  const minutes = Math.round(abs / 60_000);
  if (minutes < 60) {
    const seconds = Math.round((abs % 60_000) / 1000);
    return seconds && minutes < 10 ? `${minutes} min ${seconds} s` : `${minutes} min`;
  }
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

function trim(n) {
  return n.toFixed(1).replace(/\.0$/, '');
}

/** `in 4 s` or `3 min ago`, relative to now. */
export function relative(iso, nowMs = Date.now()) {
  const diff = Date.parse(iso) - nowMs;
  if (Math.abs(diff) < 1000) return 'now';
  return diff > 0 ? `in ${duration(diff)}` : `${duration(-diff)} ago`;
}

/** A `<time>` element: local date and time, the exact ISO value in its title. */
export function time(iso, { withRelative = false } = {}) {
  if (!iso) return '—';
  const el = document.createElement('time');
  el.dateTime = iso;
  el.title = iso;
  el.textContent = withRelative ? `${dateTime.format(new Date(iso))} (${relative(iso)})` : dateTime.format(new Date(iso));
  return el;
}

/**
 * An id shortened for tables: `dlv_…7XKQ2V8N` keeps its kind and its random end (the start is a
 * timestamp, the same for ids made close together).
 */
export function shortId(id) {
  const m = /^([a-z]+_)(.{12,})$/.exec(id ?? '');
  return m ? `${m[1]}…${m[2].slice(-8)}` : id;
}

const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'long' });

/**
 * A time as people read it in a list: relative (`3 min ago`), the absolute time with its time zone
 * in the title and, for keyboard and touch users, shown when the element has focus.
 */
export function when(iso) {
  if (!iso) return '—';
  const el = document.createElement('time');
  el.dateTime = iso;
  el.className = 'when';
  el.tabIndex = 0;
  const full = absolute.format(new Date(iso));
  el.title = full;
  el.dataset.absolute = full;
  el.textContent = relative(iso);
  return el;
}

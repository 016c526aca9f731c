// Attempts over time as an SVG bar chart: one bar per bucket, successes stacked under failures,
// with the totals said in words in the caption (the chart only helps).
import { h, s } from './dom.js';

const HEIGHT = 160;
const TOP = 8;
const LEFT = 36;
const RIGHT = 8;
const AXIS_SPACE = 22;

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/**
 * Draws `series` (`GET /v1/stats`: `{buckets: [{startAt, attempts, succeeded, failed}], window}`)
 * at `widthPx` wide. The `<svg>` carries `data-attempts` (the total) so a change can be observed.
 */
export function statsChart(series, widthPx, label) {
  const width = Math.max(280, Math.round(widthPx));
  const plot = width - LEFT - RIGHT;
  const n = series.buckets.length;
  const slot = plot / n;
  const barWidth = Math.max(1, slot - (slot > 4 ? 1.5 : 0.5));
  const max = Math.max(1, ...series.buckets.map((b) => b.attempts));
  const plotHeight = HEIGHT - TOP - AXIS_SPACE;
  const y = (v) => TOP + plotHeight - (v / max) * plotHeight;
  const bars = [];
  series.buckets.forEach((b, i) => {
    const x = LEFT + i * slot;
    if (b.succeeded > 0) bars.push(s('rect', { class: 'bar-ok', x: x.toFixed(1), y: y(b.succeeded).toFixed(1), width: barWidth.toFixed(1), height: (TOP + plotHeight - y(b.succeeded)).toFixed(1) }, s('title', null, `${clock.format(new Date(b.startAt))}: ${b.succeeded} succeeded`)));
    if (b.failed > 0) bars.push(s('rect', { class: 'bar-fail', x: x.toFixed(1), y: y(b.attempts).toFixed(1), width: barWidth.toFixed(1), height: (y(b.succeeded) - y(b.attempts)).toFixed(1) }, s('title', null, `${clock.format(new Date(b.startAt))}: ${b.failed} failed`)));
  });
  const labels = [0, Math.floor(n / 2), n - 1].map((i) =>
    s('text', { x: (LEFT + i * slot + barWidth / 2).toFixed(1), y: HEIGHT - 6, 'text-anchor': i === 0 ? 'start' : i === n - 1 ? 'end' : 'middle', class: 'axis-label' }, clock.format(new Date(series.buckets[i].startAt))),
  );
  const total = series.totals.attempts;
  return h(
    'figure',
    { class: 'chart' },
    s(
      'svg',
      { width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, role: 'img', 'aria-labelledby': `${label}-caption`, class: 'stats-chart', 'data-attempts': String(total), id: `${label}-chart` },
      s('line', { x1: LEFT, x2: width - RIGHT, y1: TOP + plotHeight, y2: TOP + plotHeight, class: 'axis' }),
      s('text', { x: LEFT - 6, y: TOP + 10, 'text-anchor': 'end', class: 'axis-label' }, String(max)),
      s('text', { x: LEFT - 6, y: TOP + plotHeight, 'text-anchor': 'end', class: 'axis-label' }, '0'),
      bars,
      labels,
    ),
    h(
      'figcaption',
      { id: `${label}-caption` },
      total === 0
        ? `No attempts finished in the last ${series.window === 'hour' ? 'hour' : '24 hours'}.`
        : `${total} attempts in the last ${series.window === 'hour' ? 'hour (one bar per minute)' : '24 hours (one bar per hour)'}: ${series.totals.succeeded} succeeded, ${series.totals.failed} failed.`,
    ),
  );
}

// A tiny chart of an endpoint's last 24 hours: one bar per hour, its height the attempts made,
// its failed part in red. The numbers are in the text next to it; the chart only helps.
import { s } from './dom.js';

/** `hourly`: `[{succeeded, failed}]`, oldest first (GET /v1/endpoints/:id/summary). */
export function sparkline(hourly, label) {
  const width = 96;
  const height = 24;
  const max = Math.max(1, ...hourly.map((b) => b.succeeded + b.failed));
  const barWidth = width / Math.max(1, hourly.length);
  const bars = hourly.flatMap((b, i) => {
    const total = b.succeeded + b.failed;
    if (total === 0) return [];
    const h = Math.max(2, (total / max) * height);
    const failedH = (b.failed / total) * h;
    const x = i * barWidth + 0.5;
    const w = Math.max(1, barWidth - 1);
    return [s('rect', { class: 'spark-ok', x, y: height - h, width: w, height: h - failedH }), failedH > 0 ? s('rect', { class: 'spark-fail', x, y: height - failedH, width: w, height: failedH }) : null];
  });
  return s('svg', { class: 'sparkline', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': label }, s('title', null, label), bars);
}

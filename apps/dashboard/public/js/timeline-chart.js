// The policy timeline as an SVG chart: one row per attempt, a dot where it starts at the earliest
// and a bar to its latest start, on a square-root time axis so seconds and days both stay legible.
import { h, s } from './dom.js';
import { duration } from './format.js';

const TICKS_MS = [0, 1e3, 5e3, 3e4, 6e4, 3e5, 18e5, 36e5, 72e5, 216e5, 432e5, 864e5, 1728e5, 2592e5, 6048e5, 12096e5, 2592e6];
const ROW_HEIGHT = 30;
const TOP = 16;
const LEFT = 44;
const RIGHT = 16;
const AXIS_SPACE = 40;
const MIN_TICK_GAP = 64;

/**
 * Draws `attempts` (`[{attempt, earliestMs, latestMs}]`, times after the first attempt) at
 * `widthPx` wide. Returns a `<figure>` with the chart and a caption that says the result in words.
 */
export function timelineChart(attempts, widthPx) {
  const width = Math.max(260, Math.round(widthPx));
  const maxMs = Math.max(...attempts.map((a) => a.latestMs), 1);
  const plot = width - LEFT - RIGHT;
  const x = (ms) => LEFT + Math.sqrt(ms / maxMs) * plot;
  const height = TOP + attempts.length * ROW_HEIGHT + AXIS_SPACE;
  const axisY = TOP + attempts.length * ROW_HEIGHT + 4;

  const ticks = [];
  let lastX = -Infinity;
  for (const t of [...TICKS_MS.filter((t) => t <= maxMs), maxMs]) {
    const tx = x(t);
    const isEnd = t === maxMs;
    if (tx - lastX < MIN_TICK_GAP && !isEnd) continue;
    if (isEnd && ticks.length > 0 && tx - lastX < MIN_TICK_GAP) ticks.pop();
    ticks.push(t);
    lastX = tx;
  }

  const last = attempts[attempts.length - 1];
  const summary =
    attempts.length <= 1
      ? 'One attempt only: a failure is final.'
      : last.earliestMs === last.latestMs
        ? `If every attempt fails, attempt ${last.attempt} starts ${duration(last.latestMs)} after the first.`
        : `If every attempt fails, attempt ${last.attempt} starts between ${duration(last.earliestMs)} and ${duration(last.latestMs)} after the first.`;

  const svg = s(
    'svg',
    { class: 'chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-labelledby': 'timeline-caption', id: 'timeline-chart' },
    ticks.map((t) => [
      s('line', { class: 'grid', x1: x(t), x2: x(t), y1: TOP - 6, y2: axisY }),
      s('text', { x: x(t), y: axisY + 18, 'text-anchor': t === 0 ? 'start' : t === maxMs ? 'end' : 'middle' }, t === 0 ? '0' : duration(t)),
    ]),
    s('line', { class: 'axis', x1: LEFT, x2: width - RIGHT, y1: axisY, y2: axisY }),
    s('text', { x: width - RIGHT, y: axisY + 34, 'text-anchor': 'end' }, 'time after the first attempt (square-root scale)'),
    attempts.map((a, i) => {
      const y = TOP + i * ROW_HEIGHT + ROW_HEIGHT / 2;
      const label = a.earliestMs === a.latestMs ? `Attempt ${a.attempt}: ${duration(a.earliestMs)} after the first` : `Attempt ${a.attempt}: ${duration(a.earliestMs)} to ${duration(a.latestMs)} after the first`;
      return s(
        'g',
        null,
        s('title', null, label),
        s('text', { class: 'label', x: LEFT - 12, y: y + 4, 'text-anchor': 'end' }, `#${a.attempt}`),
        a.latestMs > a.earliestMs ? s('line', { class: 'range', x1: x(a.earliestMs), x2: x(a.latestMs), y1: y, y2: y }) : null,
        s('circle', { class: 'point', cx: x(a.earliestMs), cy: y, r: 5 }),
      );
    }),
  );
  return h('figure', { class: 'card' }, svg, h('figcaption', { id: 'timeline-caption' }, summary));
}

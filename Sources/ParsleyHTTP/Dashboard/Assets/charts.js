// Line charts as SVG (no library): lines stretch to the chart's width, their strokes stay thin, and every label is
// HTML around the picture, so it reads the same on a phone. Clicking a point opens the log lines of that moment.
import { h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 600;
const HEIGHT = 140;
// The series' colours (the legend's, in style.css, match).
const COLORS = { a: '#2d6a4f', b: '#b42318' };

function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

function clock(seconds) {
  return new Date(seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

function number(value, unit) {
  const text = value >= 100 ? Math.round(value).toLocaleString() : String(Math.round(value * 100) / 100);
  return unit ? `${text} ${unit}` : text;
}

// `times`: seconds of each point; `series`: [{name, key: 'a' | 'b', values}]; `step`: seconds a point stands for;
// `logs(from, until)`: the link to the matching log lines (ms since 1970).
export function lineChart({ id, title, unit, times, step, series, logs }) {
  const all = series.flatMap((s) => s.values);
  const top = Math.max(1, ...all) * 1.1;
  const start = times[0] ?? 0;
  const span = Math.max(step, (times[times.length - 1] ?? 0) - start);
  const x = (t) => ((t - start) / span) * WIDTH;
  const y = (v) => HEIGHT - (v / top) * HEIGHT;
  const picture = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': title, class: 'chart' });
  for (const fraction of [0.25, 0.5, 0.75]) {
    picture.append(svg('line', { x1: 0, x2: WIDTH, y1: HEIGHT * fraction, y2: HEIGHT * fraction, class: 'grid', 'vector-effect': 'non-scaling-stroke' }));
  }
  for (const s of series) {
    const points = s.values.map((v, i) => `${x(times[i]).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    picture.append(svg('polyline', { points, fill: 'none', stroke: COLORS[s.key], 'stroke-width': 2, 'vector-effect': 'non-scaling-stroke' }));
  }
  const cursor = svg('line', { x1: 0, x2: 0, y1: 0, y2: HEIGHT, class: 'cursor', visibility: 'hidden', 'vector-effect': 'non-scaling-stroke' });
  picture.append(cursor);
  const readout = h('span', { class: 'readout' });
  const last = series.map((s) => `${s.name} ${number(s.values[s.values.length - 1] ?? 0, unit)}`).join(' · ');
  readout.textContent = times.length ? `now: ${last}` : 'no samples yet';
  function at(event) {
    const box = picture.getBoundingClientRect();
    const t = start + ((event.clientX - box.left) / box.width) * span;
    let i = times.findIndex((time) => time + step > t);
    if (i < 0) i = times.length - 1;
    return i;
  }
  picture.addEventListener('pointermove', (event) => {
    const i = at(event);
    if (i < 0) return;
    cursor.setAttribute('x1', x(times[i]));
    cursor.setAttribute('x2', x(times[i]));
    cursor.setAttribute('visibility', 'visible');
    readout.textContent = `${clock(times[i])}: ${series.map((s) => `${s.name} ${number(s.values[i], unit)}`).join(' · ')}`;
  });
  picture.addEventListener('click', (event) => {
    const i = at(event);
    if (i < 0) return;
    const around = Math.max(step, 5);
    location.hash = logs((times[i] - around) * 1000, (times[i] + step + around) * 1000);
  });
  const legend = h('span', { class: 'legend' }, series.map((s) => h('span', { class: `key ${s.key}` }, s.name)));
  return h('figure', { class: 'chart card', dataset: { chart: id } },
    h('figcaption', {}, h('strong', {}, title), ' ', legend, ' ', h('span', { class: 'top' }, `max ${number(Math.max(0, ...all), unit)}`)),
    picture,
    h('div', { class: 'under' },
      h('span', {}, times.length ? `${clock(start)} – ${clock(start + span)}` : ''), readout,
      h('a', { href: logs(start * 1000, (start + span + step) * 1000), class: 'logs-link' }, 'log lines')));
}

// Time-series charts drawn with uPlot: themed from the page's CSS colours (light
// and dark), resized with their container, each followed by its numbers as a
// table for screen readers and copy-paste.

import uPlot from 'uplot';
import { el, when, isNum, scrollBox } from './util.js';

/** COLORS gives each line kind its colour (pricing kinds and market tiers). */
export const COLORS = {
  on_demand: '#2f6fde',
  spot: '#e5731b',
  reserved_1y: '#1f9d55',
  reserved_3y: '#8e44ad',
  low_priority: '#b58900',
  hyperscaler: '#2f6fde',
  specialist: '#1f9d55',
  marketplace: '#e5731b',
  index: '#c0392b',
};

/** EXTRA are the colours of lines of other kinds (commitments, …), in turn. */
export const EXTRA = ['#0f8b8d', '#a0522d', '#c2185b', '#556b2f', '#6a5acd'];

const css = (name, fallback) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

/**
 * carriedLines splits a line into its observed part (solid) and the part carried
 * past its last sighting (dashed, labelled "carried, last seen …"): carried[i] says
 * that the value at i repeats an earlier sighting (nothing was observed then), seen
 * is the last sighting to name. A line with nothing carried is returned as it is.
 */
export function carriedLines(line, carried, seen) {
  if (!carried.some(Boolean)) return [line];
  const solid = line.values.map((v, i) => (carried[i] ? null : v));
  // The dashed part starts at the last observed value before it, so the two join.
  const dashed = line.values.map((v, i) => (carried[i] || carried[i + 1] ? v : null));
  return [
    { ...line, values: solid, gaps: true },
    { ...line, label: `${line.label} (carried, last seen ${seen})`, values: dashed, dash: [6, 4], gaps: true },
  ];
}

/** carriedNote says under a chart which of its days only carry earlier sightings. */
export function carriedNote(n, seen) {
  return el('p', { class: 'note carried-note', role: 'note' }, `Dashed: ${n} day${n === 1 ? '' : 's'} on which nothing was observed; `,
    `the prices shown are carried from their last sighting (last seen ${seen}), not fresh prices.`);
}

/**
 * chart draws a time chart into a new <figure> and returns it.
 * xs: times in Unix seconds, ascending. lines: [{label, values, color, dash, stepped, gaps}] (gaps: leave
 * missing values as gaps rather than join across them).
 * band: {label, lo, hi, color} drawn as a shaded area between two invisible edges.
 */
export function chart({ title, xs, lines, band, yLabel = '$/GPU-hour', fmt = (v) => v.toFixed(2), height = 300 }) {
  const figure = el('figure', { class: 'chart' });
  const caption = el('figcaption', {}, title);
  const plot = el('div', { class: 'plot', role: 'img', 'aria-label': title + ': ' + lines.map((l) => l.label).join(', ') });
  figure.append(caption, plot);
  if (!xs.length) {
    plot.append(el('p', { class: 'empty' }, 'No bars in this window.'));
    figure.dataset.seriesDrawn = '0';
    return figure;
  }
  const fg = css('--fg', '#222');
  const grid = css('--grid', '#ddd');
  const series = [{ label: 'time', value: (u, v) => (v == null ? '–' : when(v * 1000)) }];
  const data = [xs];
  const stepped = uPlot.paths.stepped({ align: 1 });
  for (const l of lines) {
    series.push({
      label: l.label,
      stroke: l.color,
      width: 2,
      dash: l.dash,
      spanGaps: !l.gaps,
      paths: l.stepped === false ? undefined : stepped,
      points: { show: (u, si, i0, i1) => i1 - i0 < 60 },
      value: (u, v) => (v == null ? '–' : fmt(v)),
    });
    data.push(l.values);
  }
  const bands = [];
  if (band) {
    const hiIdx = series.length;
    series.push({ label: band.label.replace('p10–p90', 'p90'), stroke: 'transparent', width: 0, points: { show: false }, spanGaps: true, value: (u, v) => (v == null ? '–' : fmt(v)) });
    data.push(band.hi);
    series.push({ label: band.label.replace('p10–p90', 'p10'), stroke: 'transparent', width: 0, points: { show: false }, spanGaps: true, value: (u, v) => (v == null ? '–' : fmt(v)) });
    data.push(band.lo);
    bands.push({ series: [hiIdx, hiIdx + 1], fill: band.color || 'rgba(128,128,128,0.18)' });
  }
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const opts = {
    width: 600,
    height,
    series,
    bands,
    // One point: an hour either side (uPlot would spread it over a thousand days).
    scales: { x: { time: true, range: (u, lo, hi) => (u.data[0].length === 1 ? [u.data[0][0] - 3600, u.data[0][0] + 3600] : [lo, hi]) }, y: { range: yRange } },
    axes: [{ ...axis }, { ...axis, label: yLabel, size: 60, values: (u, vals) => vals.map((v) => fmt(v)) }],
    legend: { live: true },
    cursor: { drag: { x: true, y: false } },
    hooks: {
      draw: [
        (u) => {
          // How many lines have at least one value on the canvas (the browser tests read it).
          let n = 0;
          for (let i = 1; i <= lines.length; i++) if (u.series[i].show && u.data[i].some(isNum)) n++;
          figure.dataset.seriesDrawn = String(n);
        },
      ],
    },
  };
  const u = new uPlot(opts, data, plot);
  const fit = () => {
    const w = Math.max(280, Math.floor(plot.clientWidth));
    if (w !== u.width) u.setSize({ width: w, height });
  };
  new ResizeObserver(fit).observe(plot);
  requestAnimationFrame(fit);
  figure.append(dataTable(title, xs, lines, band, fmt));
  return figure;
}

// dataTable lays the chart's numbers out as a collapsed table.
function dataTable(title, xs, lines, band, fmt) {
  const head = ['time', ...lines.map((l) => l.label)];
  if (band) head.push(band.label + ' low', band.label + ' high');
  const body = xs.map((x, i) => {
    const cells = [when(x * 1000), ...lines.map((l) => (isNum(l.values[i]) ? fmt(l.values[i]) : '–'))];
    if (band) cells.push(isNum(band.lo[i]) ? fmt(band.lo[i]) : '–', isNum(band.hi[i]) ? fmt(band.hi[i]) : '–');
    return cells;
  });
  return el(
    'details',
    { class: 'data' },
    el('summary', {}, 'Numbers (', xs.length, ' points)'),
    scrollBox(
      el(
        'table',
        {},
        el('caption', { class: 'sr-only' }, title),
        el('thead', {}, el('tr', {}, head.map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, body.map((r) => el('tr', {}, r.map((c, i) => el(i ? 'td' : 'th', i ? { class: 'n' } : { scope: 'row' }, c))))),
      ),
    ),
  );
}

// yRange pads the values' range by a tenth; a flat line (one value) gets a tenth of
// its value either side, so that it is drawn mid-chart with labelled axes.
function yRange(u, lo, hi) {
  if (!isNum(lo) || !isNum(hi)) return [0, 1];
  const pad = hi > lo ? (hi - lo) * 0.1 : Math.abs(hi) * 0.1 || 1;
  return [Math.max(0, lo - pad), hi + pad];
}

/** align lays several [time, value] lists on one ascending time axis (null where missing). */
export function align(lists) {
  const xs = [...new Set(lists.flatMap((l) => l.map(([t]) => t)))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const cols = lists.map((l) => {
    const v = new Array(xs.length).fill(null);
    for (const [t, y] of l) v[at.get(t)] = y;
    return v;
  });
  return { xs, cols };
}

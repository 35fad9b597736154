// The term curve of one GPU: $/GPU-hour (upfront amortised) against the term in
// months, on-demand and spot at 0, each reservation and commitment at its length,
// for the market (median and cheapest) and per provider. The numbers come from
// /api/v1/terms, the same code as `gpuprice terms --format json`.

import uPlot from 'uplot';
import { get, data, problem } from './api.js';
import { el, money, fixed, params, href, pricingLabel, isNum, scrollBox } from './util.js';

const css = (name, fallback) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

/** terms renders the term curve view into main. */
export async function terms(main) {
  const q = params();
  const state = { gpu: q.get('gpu') || 'H100-SXM-80GB', at: q.get('at') || '' };
  main.append(el('h1', {}, 'Term curve'),
    el('p', { class: 'lead' }, 'Every offer of one GPU in force on a day, in $/GPU-hour with any upfront amortised over the term, against the term: on-demand and spot at 0 months, then each reservation and commitment. The discount is like for like: the same SKU, region and zone on demand.'));
  const form = el('form', { class: 'filters', id: 'terms-form', onsubmit: (e) => {
    e.preventDefault();
    location.assign(href('/terms', { gpu: form.elements.gpu.value.trim(), at: form.elements.at.value.trim() }));
  } },
  el('label', { for: 'tc-gpu' }, 'GPU', el('input', { id: 'tc-gpu', name: 'gpu', value: state.gpu, autocomplete: 'off' })),
  el('label', { for: 'tc-at' }, 'day', el('input', { id: 'tc-at', name: 'at', value: state.at, placeholder: 'today, or 2026-11-02', autocomplete: 'off' })),
  el('div', { class: 'actions' }, el('button', { type: 'submit', id: 'tc-go' }, 'Show')));
  const status = el('p', { class: 'status', role: 'status' }, 'Loading the term curve…');
  main.append(form, status);
  let body;
  try {
    body = data(await get('/api/v1/terms', state.at ? state : { gpu: state.gpu }));
  } catch (e) {
    status.replaceWith(problem(e, 'The term curve could not be read'));
    return;
  }
  const market = (body && body.market) || [];
  const providers = (body && body.providers) || [];
  const fig = curve(`${body.gpu}: $/GPU-hour against term, offers in force on ${String(body.day).slice(0, 10)}`, market);
  const row = (p) => el('tr', {},
    el('th', { scope: 'row' }, p.provider || 'market'), el('td', {}, pricingLabel(p.pricing)), el('td', { class: 'n' }, fixed(p.term_months, 0)),
    el('td', { class: 'n' }, String(p.offers)), el('td', { class: 'n' }, money(p.min_usd_gpu_hour)), el('td', { class: 'n' }, money(p.median_usd_gpu_hour)),
    el('td', { class: 'sku' }, `${p.cheapest.provider} ${p.cheapest.sku}`),
    el('td', { class: 'n' }, isNum(p.discount_pct) ? fixed(p.discount_pct, 1) + '%' : '–'), el('td', { class: 'n' }, String(p.pairs)));
  const head = ['who', 'pricing', 'months', 'offers', 'cheapest $/GPU-h', 'median $/GPU-h', 'cheapest offer', 'discount (like for like)', 'pairs'];
  const table = (id, caption, pts) => scrollBox(el('table', { id },
    el('caption', {}, caption),
    el('thead', {}, el('tr', {}, head.map((h, i) => el('th', { scope: 'col', class: i > 1 && i !== 6 ? 'n' : '' }, h)))),
    el('tbody', {}, pts.map(row))));
  status.replaceWith(fig,
    market.length ? table('terms-market', 'The market', market) : el('p', { class: 'empty' }, 'No offer of this GPU is in force on that day.'),
    providers.length ? table('terms-providers', 'Each provider', providers) : '');
}

// curve draws the market's median and cheapest $/GPU-hour against the term in
// months (a numeric axis, not time), and spot as its own point at 0.
function curve(title, market) {
  const figure = el('figure', { class: 'chart', id: 'terms-chart' });
  const plot = el('div', { class: 'plot', role: 'img', 'aria-label': title + ': market median, market cheapest, spot' });
  figure.append(el('figcaption', {}, title), plot);
  const committed = market.filter((p) => p.pricing !== 'spot');
  const xs = [...new Set(committed.map((p) => p.term_months))].sort((a, b) => a - b);
  if (!xs.length) {
    plot.append(el('p', { class: 'empty' }, 'No offers in force.'));
    figure.dataset.seriesDrawn = '0';
    return figure;
  }
  const at = (x, f) => Math.min(...committed.filter((p) => p.term_months === x).map(f));
  const median = xs.map((x) => at(x, (p) => p.median_usd_gpu_hour));
  const cheapest = xs.map((x) => at(x, (p) => p.min_usd_gpu_hour));
  const spotPt = market.find((p) => p.pricing === 'spot');
  const spot = xs.map((x) => (x === 0 && spotPt ? spotPt.median_usd_gpu_hour : null));
  const fg = css('--fg', '#222');
  const grid = css('--grid', '#ddd');
  const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const lines = [
    { label: 'market median', stroke: '#2f6fde', values: median },
    { label: 'market cheapest', stroke: '#1f9d55', values: cheapest },
    { label: 'spot median', stroke: '#e5731b', values: spot },
  ];
  const opts = {
    width: 600,
    height: 300,
    series: [{ label: 'months', value: (u, v) => (v == null ? '–' : v + ' months') },
      ...lines.map((l) => ({ label: l.label, stroke: l.stroke, width: 2, spanGaps: true, points: { show: true, size: 8 },
        value: (u, v) => (v == null ? '–' : money(v)) }))],
    scales: { x: { time: false, range: (u, lo, hi) => [lo - 1, hi + 1] }, y: { range: (u, lo, hi) => [0, (hi || 1) * 1.1] } },
    axes: [{ ...axis, label: 'term (months)' }, { ...axis, label: '$/GPU-hour', size: 60, values: (u, vals) => vals.map((v) => money(v)) }],
    legend: { live: true },
    hooks: {
      draw: [(u) => {
        let n = 0;
        for (let i = 1; i <= lines.length; i++) if (u.series[i].show && u.data[i].some(isNum)) n++;
        figure.dataset.seriesDrawn = String(n);
      }],
    },
  };
  const u = new uPlot(opts, [xs, ...lines.map((l) => l.values)], plot);
  const fit = () => {
    const w = Math.max(280, Math.floor(plot.clientWidth));
    if (w !== u.width) u.setSize({ width: w, height: 300 });
  };
  new ResizeObserver(fit).observe(plot);
  requestAnimationFrame(fit);
  return figure;
}

// The daily reference index: per GPU and pricing kind, the trimmed median day
// price of the hyperscalers and of everyone else.

import { get, rows, problem } from './api.js';
import { chart, carriedLines, carriedNote, COLORS } from './chart.js';
import { el, money, params, href, PRICING, pricingLabel, uniq, day, when, scrollBox } from './util.js';

/** indexView renders the index view into main. */
export async function indexView(main) {
  const q = params();
  const state = { gpu: q.get('gpu') || '', pricing: q.get('pricing') || 'on_demand', since: q.get('since') || '30d' };
  main.append(el('h1', {}, 'Daily reference index'));
  const status = el('p', { class: 'status', role: 'status' }, 'Loading the index…');
  main.append(status);
  let points;
  try {
    points = rows(await get('/api/v1/index', { pricing: state.pricing, since: state.since }), 'points', 'index');
  } catch (e) {
    status.replaceWith(problem(e, 'The index could not be read'));
    return;
  }
  const gpus = uniq(points.map((p) => p.gpu));
  if (!state.gpu && gpus.length) {
    const n = (g) => points.filter((p) => p.gpu === g).length;
    state.gpu = gpus.slice().sort((a, b) => n(b) - n(a))[0];
  }
  const go = (change) => location.assign(href('/index', { ...state, ...change }));
  const controls = el('form', { class: 'filters', onsubmit: (e) => e.preventDefault() },
    el('label', { for: 'ix-gpu' }, 'GPU', el('select', { id: 'ix-gpu', onchange: (e) => go({ gpu: e.target.value }) },
      [...new Set([...gpus, state.gpu])].filter(Boolean).map((g) => el('option', { value: g, selected: g === state.gpu }, g)))),
    el('label', { for: 'ix-pricing' }, 'pricing', el('select', { id: 'ix-pricing', onchange: (e) => go({ pricing: e.target.value, gpu: '' }) },
      PRICING.map(([k, l]) => el('option', { value: k, selected: k === state.pricing }, l)))),
    el('label', { for: 'ix-since' }, 'window', el('select', { id: 'ix-since', onchange: (e) => go({ since: e.target.value }) },
      [...new Set(['7d', '30d', '90d', '180d', '365d', state.since])].map((w) => el('option', { value: w, selected: w === state.since }, w)))),
  );
  const mine = points.filter((p) => p.gpu === state.gpu);
  const groups = uniq(mine.map((p) => p.group));
  const xs = uniq(mine.map((p) => Date.parse(p.day) / 1000)).map(Number).sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  // A day whose offers are all carried past their last sighting was not observed:
  // dashed, with the last sighting named.
  let carriedDays = 0;
  let lastSeen = '';
  const lines = groups.flatMap((g) => {
    const v = new Array(xs.length).fill(null);
    const carried = new Array(xs.length).fill(false);
    let seen = '';
    for (const p of mine) {
      if (p.group !== g) continue;
      const i = at.get(Date.parse(p.day) / 1000);
      v[i] = p.price_usd_gpu_hour;
      carried[i] = p.offers > 0 && p.carried >= p.offers;
      if (carried[i] && p.last_seen && p.last_seen > seen) seen = p.last_seen;
    }
    carriedDays = Math.max(carriedDays, carried.filter(Boolean).length);
    if (seen > lastSeen) lastSeen = seen;
    return carriedLines({ label: g, values: v, color: COLORS[g] || COLORS.index }, carried, seen ? when(seen) : 'unknown');
  });
  const fig = chart({ title: `${state.gpu || 'No GPU'} ${pricingLabel(state.pricing)} index, $/GPU-hour per day`, xs, lines, fmt: money });
  fig.id = 'index-chart';
  if (carriedDays) fig.append(carriedNote(carriedDays, lastSeen ? when(lastSeen) : 'unknown'));
  const latest = groups.map((g) => mine.filter((p) => p.group === g).sort((a, b) => Date.parse(b.day) - Date.parse(a.day))[0]);
  const method = mine.length ? mine[0].method : '';
  const table = scrollBox(el('table', { id: 'index-latest' },
    el('caption', {}, 'Latest day'),
    el('thead', {}, el('tr', {}, ['group', 'day', '$/GPU-h', 'offers', 'dropped as outliers'].map((h, i) => el('th', { scope: 'col', class: i > 1 ? 'n' : '' }, h)))),
    el('tbody', {}, latest.map((p) => el('tr', {}, el('th', { scope: 'row' }, p.group), el('td', {}, day(p.day)),
      el('td', { class: 'n' }, money(p.price_usd_gpu_hour)), el('td', { class: 'n' }, p.offers ?? '–'), el('td', { class: 'n' }, p.dropped ?? '–')))),
  ));
  // Every GPU's latest index, to compare at a glance.
  const groupsAll = uniq(points.map((p) => p.group));
  const last = new Map();
  for (const p of points) {
    const k = p.gpu + '|' + p.group;
    if (!last.has(k) || Date.parse(p.day) > Date.parse(last.get(k).day)) last.set(k, p);
  }
  const overview = gpus.length ? scrollBox(el('table', { id: 'index-all' },
    el('caption', {}, `Every GPU, ${pricingLabel(state.pricing)}, latest day ($/GPU-hour)`),
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'GPU'), groupsAll.map((g) => el('th', { scope: 'col', class: 'n' }, g)))),
    el('tbody', {}, gpus.map((g) => el('tr', { class: g === state.gpu ? 'current' : '' },
      el('th', { scope: 'row' }, el('a', { href: href('/index', { ...state, gpu: g }) }, g)),
      groupsAll.map((grp) => { const p = last.get(g + '|' + grp); return el('td', { class: 'n', title: p ? day(p.day) : '' }, p ? money(p.price_usd_gpu_hour) : '–'); })))))) : '';
  status.replaceWith(controls, fig, latest.length ? table : '', overview, method ? el('p', { class: 'note' }, 'Method: ', method, ' (docs/analytics.md).') : '');
}

// Spreads over time: per GPU and pricing kind, the daily median $/GPU-hour of the
// hyperscalers, the specialist clouds and the marketplaces, and how the
// hyperscaler premium moved over the window.

import { get, data, problem } from './api.js';
import { chart, carriedLines, carriedNote, COLORS } from './chart.js';
import { el, money, fixed, params, href, PRICING, pricingLabel, isNum, uniq, when, scrollBox } from './util.js';

/** spreads renders the spreads view into main. */
export async function spreads(main) {
  const q = params();
  const state = { gpu: q.get('gpu') || '', pricing: q.get('pricing') || 'on_demand', since: q.get('since') || '90d' };
  main.append(el('h1', {}, 'Spreads between market tiers'),
    el('p', { class: 'lead' }, 'Median day price of each tier. Ratio: hyperscaler median over specialist median; the premium is that ratio less one.'));
  const status = el('p', { class: 'status', role: 'status' }, 'Loading spreads…');
  main.append(status);
  let body;
  try {
    body = data(await get('/api/v1/spreads', { pricing: state.pricing, since: state.since }));
  } catch (e) {
    status.replaceWith(problem(e, 'Spreads could not be read'));
    return;
  }
  const days = (body && body.days) || [];
  const summary = (body && body.summary) || [];
  const gpus = uniq(days.map((d) => d.gpu));
  // Default to the GPU with the most days on which all three tiers have a price.
  if (!state.gpu && gpus.length) {
    const full = (g) => days.filter((d) => d.gpu === g && isNum(d.hyperscaler) && isNum(d.specialist)).length;
    state.gpu = gpus.slice().sort((a, b) => full(b) - full(a))[0];
  }
  const go = (change) => location.assign(href('/spreads', { ...state, ...change }));
  const controls = el('form', { class: 'filters', onsubmit: (e) => e.preventDefault() },
    el('label', { for: 'sp-gpu' }, 'GPU', el('select', { id: 'sp-gpu', onchange: (e) => go({ gpu: e.target.value }) },
      [...new Set([...gpus, state.gpu])].filter(Boolean).map((g) => el('option', { value: g, selected: g === state.gpu }, g)))),
    el('label', { for: 'sp-pricing' }, 'pricing', el('select', { id: 'sp-pricing', onchange: (e) => go({ pricing: e.target.value, gpu: '' }) },
      PRICING.map(([k, l]) => el('option', { value: k, selected: k === state.pricing }, l)))),
    el('label', { for: 'sp-since' }, 'window', el('select', { id: 'sp-since', onchange: (e) => go({ since: e.target.value }) },
      [...new Set(['30d', '90d', '180d', '365d', state.since])].map((w) => el('option', { value: w, selected: w === state.since }, w)))),
  );
  const mine = days.filter((d) => d.gpu === state.gpu).sort((a, b) => Date.parse(a.day) - Date.parse(b.day));
  const xs = mine.map((d) => Date.parse(d.day) / 1000);
  const tiers = ['hyperscaler', 'specialist', 'marketplace'];
  // A day whose prices are all carried past their last sighting was not observed:
  // dashed, with the last sighting named.
  const carried = mine.map((d) => { const n = (d.n_hyperscaler || 0) + (d.n_specialist || 0) + (d.n_marketplace || 0); return n > 0 && d.carried >= n; });
  const seenAt = mine.filter((d, i) => carried[i] && d.last_seen).map((d) => d.last_seen).sort().pop();
  const seen = seenAt ? when(seenAt) : 'unknown';
  const fig = chart({
    title: `${state.gpu || 'No GPU'} ${pricingLabel(state.pricing)}: tier medians per day`,
    xs,
    lines: tiers.flatMap((t) => carriedLines({ label: t, values: mine.map((d) => (isNum(d[t]) ? d[t] : null)), color: COLORS[t] }, carried, seen)),
    fmt: money,
  });
  fig.id = 'spreads-chart';
  const nCarried = carried.filter(Boolean).length;
  if (nCarried) fig.append(carriedNote(nCarried, seen));
  const ratio = chart({
    title: `${state.gpu || 'No GPU'} ${pricingLabel(state.pricing)}: hyperscaler ÷ specialist median`,
    xs,
    lines: carriedLines({ label: 'ratio', values: mine.map((d) => (isNum(d.ratio) ? d.ratio : null)), color: COLORS.index }, carried, seen),
    yLabel: 'ratio',
    fmt: (v) => v.toFixed(2),
    height: 200,
  });
  ratio.id = 'ratio-chart';
  const rows = summary;
  const table = rows.length
    ? scrollBox(el('table', { id: 'spread-summary' },
      el('caption', {}, `How the hyperscaler/specialist ratio moved (${pricingLabel(state.pricing)}, last ${state.since})`),
      el('thead', {}, el('tr', {}, ['GPU', 'first day', 'ratio', 'last day', 'ratio', 'premium moved (points)', 'min', 'max', 'days'].map((h, i) => el('th', { scope: 'col', class: i > 0 && i !== 1 && i !== 3 ? 'n' : '' }, h)))),
      el('tbody', {}, rows.map((s) => el('tr', { class: s.gpu === state.gpu ? 'current' : '' },
        el('th', { scope: 'row' }, el('a', { href: href('/spreads', { ...state, gpu: s.gpu }) }, s.gpu)),
        el('td', {}, s.first_day || '–'), el('td', { class: 'n' }, fixed(s.first_ratio, 3)),
        el('td', {}, s.last_day || '–'), el('td', { class: 'n' }, fixed(s.last_ratio, 3)),
        el('td', { class: 'n' }, isNum(s.premium_moved) ? (s.premium_moved > 0 ? '+' : '') + s.premium_moved.toFixed(2) : '–'),
        el('td', { class: 'n' }, fixed(s.min_ratio, 3)), el('td', { class: 'n' }, fixed(s.max_ratio, 3)),
        el('td', { class: 'n' }, s.days_with_ratio ?? '–'),
      )))))
    : el('p', { class: 'empty' }, 'No day had both a hyperscaler and a specialist price in this window.');
  status.replaceWith(controls, fig, ratio, table);
}

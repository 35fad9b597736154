// Availability over time: per provider, what its offers of one GPU stated could
// be rented (stock in GPUs, instances or regions with capacity; a marketplace's
// rentable offers), sampled over the window, and how much of the observed time it
// was in stock. The numbers come from /api/v1/availability, the same code as
// `gpuprice availability --by gpu --step … --format json`.

import { get, data, problem } from './api.js';
import { chart, EXTRA } from './chart.js';
import { el, fixed, params, href, scrollBox, when } from './util.js';

const WINDOWS = ['1d', '7d', '30d', '90d'];
/** stepOf is the timeline's sampling step for a window: about 150 points. */
const stepOf = (w) => ({ '1d': '10m', '7d': '1h', '30d': '6h', '90d': '12h' }[w] || '1h');

/** availability renders the availability view into main. */
export async function availability(main) {
  const q = params();
  const state = { gpu: q.get('gpu') || 'H100-SXM-80GB', since: q.get('since') || '7d' };
  main.append(el('h1', {}, 'Availability'),
    el('p', { class: 'lead' }, 'What each provider says can be rented of one GPU, over time: each stock signal holds until the next one of its offer, three hours at most (then the offer is not observed and the line has a gap). In stock: a value above 0; a provider is in stock while any of its offers is.'));
  const form = el('form', { class: 'filters', id: 'av-form', onsubmit: (e) => {
    e.preventDefault();
    location.assign(href('/availability', { gpu: form.elements.gpu.value.trim(), since: form.elements.since.value }));
  } },
  el('label', { for: 'av-gpu' }, 'GPU', el('input', { id: 'av-gpu', name: 'gpu', value: state.gpu, autocomplete: 'off' })),
  el('label', { for: 'av-since' }, 'window', el('select', { id: 'av-since', name: 'since' },
    [...new Set([...WINDOWS, state.since])].map((w) => el('option', { value: w, selected: w === state.since }, w)))),
  el('div', { class: 'actions' }, el('button', { type: 'submit', id: 'av-go' }, 'Show')));
  const status = el('p', { class: 'status', role: 'status' }, 'Loading availability…');
  main.append(form, status);
  let body;
  try {
    body = data(await get('/api/v1/availability', { gpu: state.gpu, by: 'gpu', since: state.since, step: stepOf(state.since) }));
  } catch (e) {
    status.replaceWith(problem(e, 'Availability could not be read'));
    return;
  }
  const rows = (body && body.rows) || [];
  const timeline = (body && body.timeline) || [];
  if (!rows.length) {
    status.replaceWith(el('p', { class: 'empty' }, `No provider stated the stock of ${state.gpu} from ${when(body.since)} to ${when(body.until)}.`));
    return;
  }
  const label = (l) => `${l.provider} ${l.kind === 'depth' ? 'rentable offers' : l.unit}`;
  const xs = timeline.length ? timeline[0].points.map((p) => Date.parse(p.at) / 1000) : [];
  const lines = timeline.map((l, i) => ({ label: label(l), color: EXTRA[i % EXTRA.length], gaps: true,
    values: l.points.map((p) => (p.value == null ? null : p.value)) }));
  const fig = chart({ title: `${state.gpu}: stock stated per provider, ${state.since} to ${when(body.until)}`, xs, lines,
    yLabel: 'units', fmt: (v) => fixed(v, 0) });
  fig.id = 'availability-chart';
  const head = ['provider', 'kind', 'offers', 'in stock', 'observed h', 'outages', 'longest outage h', 'longest outage from', 'last', 'unit'];
  const hours = (ns) => fixed(ns / 3.6e12, 1);
  const table = scrollBox(el('table', { id: 'availability-table' },
    el('caption', {}, 'In stock over the observed time, least available first'),
    el('thead', {}, el('tr', {}, head.map((h, i) => el('th', { scope: 'col', class: i > 1 && i !== 7 && i !== 9 ? 'n' : '' }, h)))),
    el('tbody', {}, rows.map((r) => el('tr', {},
      el('th', { scope: 'row' }, r.provider), el('td', {}, r.kind), el('td', { class: 'n' }, String(r.series)),
      el('td', { class: 'n' }, fixed(r.in_stock_share * 100, 0) + ' %'), el('td', { class: 'n' }, hours(r.observed_ns)),
      el('td', { class: 'n' }, String(r.outages)), el('td', { class: 'n' }, hours(r.longest_outage_ns)),
      el('td', {}, r.outage_from ? when(r.outage_from) : '–'), el('td', { class: 'n' }, fixed(r.last, 0)), el('td', {}, r.unit))))));
  status.replaceWith(fig, table);
}

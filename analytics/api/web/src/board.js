// The price board: a GPU × provider matrix of the cheapest current $/GPU-hour for
// one pricing kind, and a sortable, filterable table of every current offer with a
// CSV download. Every filter and the sort live in the URL, so a view can be shared.

import { get, rows, data, problem } from './api.js';
import { el, money, ago, when, params, setParams, href, csv, download, pricingKinds, pricingLabel, TIERS, uniq } from './util.js';

const FILTERS = ['gpu', 'provider', 'tier', 'pricing', 'region', 'scope'];
const COLUMNS = [
  ['gpu', 'GPU'],
  ['provider', 'Provider'],
  ['tier', 'Tier'],
  ['pricing', 'Pricing'],
  ['region', 'Region'],
  ['scope', 'Scope'],
  ['sku', 'SKU'],
  ['price', '$/GPU-h'],
  ['risk', 'Interruption'],
  ['job', 'Job $/GPU-h'],
  ['stock', 'Stock'],
  ['age', 'Age'],
];
const PAGE = 500;

/** recorded: a row loaded from a recorded example archive (gpuprice reparse examples/recorded), never a current price. */
const recorded = (o) => (o.attrs && o.attrs.origin) === 'recorded';
/** constructed: a recorded row parsed from a response built in the provider's format (examples/recorded/README.md): its value is partly illustrative, not the provider's price. */
const constructed = (o) => recorded(o) && o.attrs.provenance === 'constructed';
/** scopeOf: instance (the whole machine) or gpu_only (an accelerator priced apart from the VM it needs); rows without one are instance prices. */
const scopeOf = (o) => o.price_scope || 'instance';
const SCOPE_LABEL = { instance: 'instance', gpu_only: 'GPU only (no VM)' };
/** comparable: a GPU the catalog placed; an unknown GPU is never a cheapest (an unknown row may hold a V100 and a P100). */
const comparable = (g) => g !== 'unknown';

const key = {
  gpu: (o) => o.gpu,
  provider: (o) => o.provider,
  tier: (o) => o.tier,
  pricing: (o) => o.pricing,
  region: (o) => o.region + ' ' + o.zone,
  scope: scopeOf,
  sku: (o) => o.sku,
  price: (o) => o.price_usd_gpu_hour,
  risk: (o) => riskOf(o).order,
  job: (o) => { const j = jobOf(o); return j.value === undefined ? Infinity : j.value; },
  stock: (o) => stockOf(o).order,
  age: (o) => -new Date(o.observed_at).getTime(),
};

/** bands: the interruption band in force per spot series (provider|sku|region|zone), from /api/v1/risk. */
let bands = new Map();
const seriesKey = (o) => [o.provider, o.sku, o.region, o.zone || ''].join('|');
/** BAND_SOURCE: where each provider's bands come from. */
const BAND_SOURCE = { aws: 'AWS Spot Advisor', azure: 'Azure eviction rate, per hour' };
/** riskOf: what the Interruption column says of an offer: not interrupted (on-demand, reserved), the band of a spot offer, or unknown. */
function riskOf(o) {
  if (o.pricing !== 'spot' && o.pricing !== 'low_priority') return { text: '—', title: 'not interrupted', order: -1 };
  const b = bands.get(seriesKey(o));
  if (!b) return { text: 'unknown', title: 'no interruption band stored for this offer', order: 99 };
  return { text: b.to_label, band: b.to,
    title: `interruption frequency ${b.to_label} (band ${b.to}, ${BAND_SOURCE[b.provider] || b.provider}), as of ${when(b.at)}` +
      (b.rate_per_hour ? `; read as ${b.rate_per_hour.toPrecision(3)} interruptions per hour` : ''), order: b.to };
}

/** JOB: the job the Job column prices, as `gpuprice prices --risk-adjusted` does by default: a checkpoint every 30 minutes, 10 minutes to restart. */
const JOB = { checkpointMin: 30, restartMin: 10 };
/** jobOf: the expected $ per GPU-hour of work once interruptions are counted (docs/risk.md): price × (1 + λ·(C/2 + R)/60); on-demand and reserved are not interrupted; a spot offer without a band has none. */
function jobOf(o) {
  const r = riskOf(o);
  if (r.order === 99) return { text: '—', title: 'no interruption band: the expected cost of a finished job is unknown' };
  const rate = r.order === -1 ? 0 : (bands.get(seriesKey(o)) || {}).rate_per_hour;
  if (!(rate >= 0)) return { text: '—', title: 'this band is not read as a rate' };
  const factor = 1 + rate * (JOB.checkpointMin / 2 + JOB.restartMin) / 60;
  const value = o.price_usd_gpu_hour * factor;
  return { value, text: value.toFixed(4),
    title: `expected $ per GPU-hour of work: ${money(o.price_usd_gpu_hour)} × (1 + ${rate.toPrecision(3)}/h × (${JOB.checkpointMin}/2 + ${JOB.restartMin}) min) = × ${factor.toFixed(6)}; checkpoint every ${JOB.checkpointMin} min, restart ${JOB.restartMin} min (gpuprice prices --risk-adjusted)` };
}

/** stocks: each offer's newest stock signal that still holds (3 h at most), per provider|sku|region|zone, from /api/v1/availability. */
let stocks = new Map();
const HOLD_MS = 3 * 3600 * 1000;
/** stockOf: what the Stock column says of an offer: what can be rented now (its unit: GPUs, instances, regions with capacity), out of stock, or — when no stock signal holds. Region-less stock (RunPod, Lambda) is the offer's in every region. */
function stockOf(o) {
  const s = stocks.get(seriesKey(o)) || stocks.get([o.provider, o.sku, '', ''].join('|'));
  if (!s) return { text: '—', title: 'no stock stated for this offer in the last 3 hours', order: 2e9 };
  const label = s.last_label ? ` (${s.last_label})` : '';
  const share = `in stock ${Math.round(s.in_stock_share * 100)} % of the observed time of the last 3 hours`;
  if (!(s.last > 0)) return { text: 'out', dot: 'out', title: `out of stock${label} as of ${when(s.last_at)}; ${share}`, order: 1e9 };
  return { text: `${s.last} ${s.unit}`, dot: 'in', title: `${s.last} ${s.unit} can be rented now${label}, as of ${when(s.last_at)}; ${share}`, order: -s.last };
}

/** board renders the price board into main. */
export async function board(main) {
  const status = el('p', { class: 'status', role: 'status' }, 'Loading prices…');
  main.append(el('h1', {}, 'GPU prices now'), status);
  let all;
  try {
    all = rows(await get('/api/v1/prices'));
  } catch (e) {
    status.replaceWith(problem(e, 'Prices could not be read'));
    return;
  }
  try {
    // A window that begins now: each series once, with its band in force.
    const changes = (data(await get('/api/v1/risk', { since: new Date().toISOString() })) || {}).changes || [];
    bands = new Map(changes.map((c) => [seriesKey(c), c]));
  } catch (e) {
    bands = new Map(); // a store without signals: every spot offer's band is unknown
  }
  try {
    const until = new Date();
    const a = data(await get('/api/v1/availability', { since: new Date(until.getTime() - HOLD_MS).toISOString(), until: until.toISOString() })) || {};
    stocks = new Map((a.rows || []).filter((r) => new Date(r.last_at).getTime() + HOLD_MS >= until.getTime()).map((r) => [seriesKey(r), r]));
  } catch (e) {
    stocks = new Map(); // a store without signals: no offer states its stock
  }
  const state = readState();
  let showAll = false;

  const form = el('form', { class: 'filters', role: 'search', 'aria-label': 'Filter offers', onsubmit: (e) => e.preventDefault() });
  const selects = {};
  const options = {
    gpu: uniq(all.map((o) => o.gpu)),
    provider: uniq(all.map((o) => o.provider)),
    tier: uniq([...TIERS.filter((t) => all.some((o) => o.tier === t)), ...all.map((o) => o.tier)]),
    pricing: pricingKinds(all),
    region: uniq(all.map((o) => o.region)),
    scope: uniq(all.map(scopeOf)),
  };
  for (const f of FILTERS) {
    const s = el('select', { id: 'f-' + f, name: f, onchange: () => { state[f] = s.value; showAll = false; update(true); } },
      el('option', { value: '' }, 'all'),
      options[f].map((v) => el('option', { value: v }, f === 'pricing' ? pricingLabel(v) : f === 'scope' ? SCOPE_LABEL[v] || v : v)));
    if (state[f] && !options[f].includes(state[f])) s.append(el('option', { value: state[f] }, state[f] + ' (no offers)'));
    s.value = state[f] || '';
    selects[f] = s;
    form.append(el('label', { for: 'f-' + f }, f === 'gpu' ? 'GPU' : f, s));
  }
  const search = el('input', { type: 'search', id: 'f-q', name: 'q', value: state.q, placeholder: 'GPU, SKU, region…', autocomplete: 'off',
    oninput: () => { state.q = search.value.trim(); showAll = false; update(false); } });
  form.append(el('label', { for: 'f-q' }, 'search', search));
  const reset = el('button', { type: 'button', onclick: () => { for (const f of FILTERS) { state[f] = ''; selects[f].value = ''; } state.q = ''; search.value = ''; update(true); } }, 'Clear filters');
  const csvButton = el('button', { type: 'button', id: 'csv' }, 'Download CSV');
  form.append(el('div', { class: 'actions' }, reset, csvButton));

  const matrixKind = el('div', { class: 'segmented', role: 'radiogroup', 'aria-label': 'Pricing kind of the matrix' });
  const matrixBox = el('div', { class: 'scroll matrix-box', tabindex: '0', role: 'region', 'aria-label': 'Cheapest price by GPU and provider' });
  const count = el('p', { class: 'count', role: 'status', 'aria-live': 'polite' });
  const tableBox = el('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': 'Offers' });
  const nRecorded = all.filter(recorded).length;
  const nConstructed = all.filter(constructed).length;
  status.replaceWith(
    el('p', { class: 'lead' }, 'The cheapest price of every offer still listed, in US dollars per GPU-hour. Pick a cell or a filter to narrow the table; the address bar keeps the view.'),
    nRecorded ? el('p', { class: 'recorded-note', id: 'recorded-note', role: 'note' },
      `${nRecorded} of ${all.length} offers are recorded examples (loaded from a recorded archive, marked “recorded”, shown at the time they were recorded): they are not today's prices.` +
      (nConstructed ? ` ${nConstructed} of them come from responses constructed in the providers' formats, whose values are partly illustrative: not any provider's price.` : '')) : '',
    el('section', { 'aria-labelledby': 'm-h' }, el('h2', { id: 'm-h' }, 'Cheapest by GPU and provider'), matrixKind, matrixBox),
    el('section', { 'aria-labelledby': 't-h' }, el('h2', { id: 't-h' }, 'Offers'), form, count, tableBox),
  );

  function filtered(except) {
    const words = (state.q || '').toLowerCase().split(/\s+/).filter(Boolean);
    return all.filter((o) => FILTERS.every((f) => f === except || !state[f] || (f === 'scope' ? scopeOf(o) : o[f]) === state[f]) &&
      (!words.length || words.every((w) => [o.gpu, o.sku, o.provider, o.region, o.zone, o.gpu_name].some((v) => v && String(v).toLowerCase().includes(w)))));
  }
  function sorted(list) {
    const k = key[state.sort] || key.price;
    const dir = state.dir === 'desc' ? -1 : 1;
    return list.slice().sort((a, b) => {
      const x = k(a), y = k(b);
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return c * dir || a.price_usd_gpu_hour - b.price_usd_gpu_hour;
    });
  }

  function update(push) {
    setParams(state, push);
    renderMatrix();
    renderTable();
  }

  function renderMatrix() {
    const kind = state.pricing || state.m || 'on_demand';
    matrixKind.replaceChildren(
      ...options.pricing.map((k) => {
        const label = pricingLabel(k);
        const on = k === kind;
        return el('button', {
          type: 'button', role: 'radio', 'aria-checked': on ? 'true' : 'false', class: on ? 'on' : '',
          disabled: state.pricing && !on ? true : undefined,
          onclick: () => { state.m = k === 'on_demand' ? '' : k; update(true); },
        }, label);
      }),
    );
    // Like with like: the matrix holds one price scope (instance unless the scope
    // filter says gpu_only), so a GPU-only price never undercuts a whole machine.
    const scope = state.scope || 'instance';
    const list = filtered('pricing').filter((o) => o.pricing === kind && scopeOf(o) === scope);
    const otherScope = filtered('pricing').filter((o) => o.pricing === kind && scopeOf(o) !== scope).length;
    const gpus = uniq(list.map((o) => o.gpu));
    const provs = uniq(list.map((o) => o.provider));
    const best = new Map();
    for (const o of list) {
      const k = o.gpu + '|' + o.provider;
      const b = best.get(k);
      if (!b || o.price_usd_gpu_hour < b.price_usd_gpu_hour) best.set(k, o);
    }
    if (!gpus.length) {
      matrixBox.replaceChildren(el('p', { class: 'empty' }, `No ${pricingLabel(kind)} ${SCOPE_LABEL[scope] || scope} offers match the filters.`));
      return;
    }
    const table = el('table', { class: 'matrix', id: 'matrix' },
      el('caption', {}, `Cheapest ${pricingLabel(kind)} $/GPU-hour, ${scope === 'instance' ? 'instance prices (whole machines)' : 'GPU-only prices (the VM is extra)'}` +
        (otherScope ? `; ${otherScope} ${scope === 'instance' ? 'GPU-only' : 'instance'} offers are compared among themselves (filter scope)` : '') +
        (gpus.includes('unknown') ? '; the unknown row mixes GPUs the catalog could not place and has no cheapest' : '')),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'GPU'), provs.map((p) => el('th', { scope: 'col' }, p)))),
      el('tbody', {}, gpus.map((g) => {
        const rowBest = comparable(g) ? Math.min(...provs.map((p) => (best.get(g + '|' + p) || {}).price_usd_gpu_hour ?? Infinity)) : NaN;
        return el('tr', {}, el('th', { scope: 'row' }, g), provs.map((p) => {
          const o = best.get(g + '|' + p);
          if (!o) return el('td', { class: 'n none' }, el('span', { 'aria-label': 'no offer' }, '·'));
          const cheapest = o.price_usd_gpu_hour === rowBest;
          return el('td', { class: 'n' + (cheapest ? ' best' : '') },
            el('button', {
              type: 'button', class: 'cell',
              title: `${o.provider} ${o.sku} ${o.region}${o.zone ? ' ' + o.zone : ''}, seen ${when(o.observed_at)}`,
              'aria-label': `${g} at ${p}: $${money(o.price_usd_gpu_hour)} per GPU-hour${cheapest ? ', cheapest' : ''}; show these offers`,
              onclick: () => {
                Object.assign(state, { gpu: g, provider: p, pricing: kind });
                for (const f of FILTERS) selects[f].value = state[f] || '';
                update(true);
                tableBox.scrollIntoView({ block: 'nearest' });
              },
            }, money(o.price_usd_gpu_hour)));
        }));
      })),
    );
    matrixBox.replaceChildren(table);
  }

  function renderTable() {
    const list = sorted(filtered());
    const shown = showAll ? list : list.slice(0, PAGE);
    count.textContent = `${list.length} of ${all.length} offers` + (shown.length < list.length ? `, the first ${shown.length} shown` : '');
    const now = Date.now();
    const head = el('tr', {}, COLUMNS.map(([k, label]) => {
      const active = (state.sort || 'price') === k;
      const dir = active ? (state.dir === 'desc' ? 'descending' : 'ascending') : 'none';
      return el('th', { scope: 'col', 'aria-sort': dir, class: k === 'price' || k === 'age' ? 'n' : '' },
        el('button', {
          type: 'button', class: 'sort', dataset: { key: k },
          onclick: () => {
            if ((state.sort || 'price') === k) state.dir = state.dir === 'desc' ? '' : 'desc';
            else { state.sort = k === 'price' ? '' : k; state.dir = ''; }
            update(true);
          },
        }, label, el('span', { 'aria-hidden': 'true', class: 'arrow' }, active ? (state.dir === 'desc' ? ' ▼' : ' ▲') : '')));
    }));
    const body = el('tbody', {}, shown.map((o) => el('tr', {},
      el('td', {}, el('a', { href: href('/series', { gpu: o.gpu, provider: o.provider, pricing: o.pricing, region: o.region, sku: o.sku, zone: o.zone }) }, o.gpu)),
      el('td', {}, o.provider),
      el('td', {}, o.tier),
      el('td', {}, pricingLabel(o.pricing)),
      el('td', {}, o.region, o.zone && o.zone !== o.region ? el('span', { class: 'muted' }, ' ' + o.zone) : ''),
      el('td', {}, SCOPE_LABEL[scopeOf(o)] || scopeOf(o)),
      el('td', { class: 'sku' }, o.sku),
      el('td', { class: 'n' }, money(o.price_usd_gpu_hour)),
      ((r) => el('td', { class: 'risk' + (r.band !== undefined ? ' band-' + r.band : ''), title: r.title }, r.text))(riskOf(o)),
      ((j) => el('td', { class: 'n job', title: j.title }, j.text))(jobOf(o)),
      ((r) => el('td', { class: 'stock' + (r.dot ? ' stock-' + r.dot : ''), title: r.title },
        r.dot ? el('span', { class: 'dot', 'aria-hidden': 'true' }, r.dot === 'in' ? '● ' : '○ ') : '', r.text))(stockOf(o)),
      el('td', { class: 'n', title: when(o.observed_at) + (constructed(o) ? ' (recorded example from a constructed response: an illustrative value, not a provider\'s price)' : recorded(o) ? ' (recorded example, not a current price)' : '') }, ago(o.observed_at, now),
        recorded(o) ? el('span', { class: 'badge recorded' }, ' recorded') : ''),
    )));
    const table = el('table', { id: 'offers', class: 'offers' }, el('caption', { class: 'sr-only' }, 'Offers matching the filters'), el('thead', {}, head), body);
    const more = shown.length < list.length
      ? el('button', { type: 'button', class: 'more', onclick: () => { showAll = true; renderTable(); } }, `Show all ${list.length}`)
      : '';
    if (!list.length) tableBox.replaceChildren(el('p', { class: 'empty' }, 'No offer matches these filters.'));
    else tableBox.replaceChildren(table, more);
  }

  csvButton.addEventListener('click', () => {
    const list = sorted(filtered());
    const header = ['observed_at', 'provider', 'tier', 'sku', 'gpu', 'gpu_count', 'region', 'zone', 'pricing', 'price_scope', 'price_usd_hour', 'price_usd_gpu_hour', 'origin'];
    const text = csv(header, list.map((o) => header.map((h) => (h === 'origin' ? (recorded(o) ? 'recorded' : 'live') : h === 'price_scope' ? scopeOf(o) : o[h]))));
    const name = ['gpuprice', ...FILTERS.map((f) => state[f]), state.q].filter(Boolean).join('-').replace(/[^A-Za-z0-9_.-]+/g, '_') + '.csv';
    download(name, 'text/csv', text);
  });

  window.addEventListener('popstate', () => {
    Object.assign(state, readState());
    for (const f of FILTERS) selects[f].value = state[f] || '';
    search.value = state.q || '';
    renderMatrix();
    renderTable();
  });
  update(false);
}

function readState() {
  const q = params();
  const s = {};
  for (const f of [...FILTERS, 'q', 'sort', 'dir', 'm']) s[f] = q.get(f) || '';
  return s;
}

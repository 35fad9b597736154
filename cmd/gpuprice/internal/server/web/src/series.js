// The series view: one GPU at one provider (and region) over time, with a line per
// pricing kind (the cheapest SKU and zone at each bar), the market's p10–p90 band
// for the chosen pricing kind (every provider's series of that GPU), and the
// volatility figures of each series. Alerts link here.

import { get, rows, problem } from './api.js';
import { chart, align, COLORS } from './chart.js';
import { el, money, pct, params, href, PRICING, pricingLabel, quantile, isNum } from './util.js';

const WINDOWS = ['7d', '30d', '90d', '180d', '365d'];

/** series renders the series view into main. */
export async function series(main) {
  const q = params();
  const state = {
    gpu: q.get('gpu') || '',
    provider: q.get('provider') || '',
    pricing: q.get('pricing') || 'on_demand',
    region: q.get('region') || '',
    since: q.get('since') || '90d',
    bar: q.get('bar') || '',
  };
  const bar = state.bar || (parseInt(state.since, 10) <= 14 ? '1h' : '1d');
  const title = [state.gpu || 'every GPU', state.provider && 'at ' + state.provider, state.region && 'in ' + state.region].filter(Boolean).join(' ');
  main.append(el('h1', {}, title));
  if (!state.gpu) {
    main.append(el('p', { class: 'error', role: 'alert' }, 'Pick a GPU: follow a link from the price board, or add ?gpu=H100-SXM-80GB&provider=aws to the address.'));
    return;
  }
  const controls = el('form', { class: 'filters', onsubmit: (e) => e.preventDefault() },
    el('label', { for: 's-pricing' }, 'band for', el('select', { id: 's-pricing', onchange: (e) => go({ pricing: e.target.value }) },
      PRICING.map(([k, l]) => el('option', { value: k, selected: k === state.pricing }, l)))),
    el('label', { for: 's-since' }, 'window', el('select', { id: 's-since', onchange: (e) => go({ since: e.target.value }) },
      [...new Set([...WINDOWS, state.since])].map((w) => el('option', { value: w, selected: w === state.since }, w)))),
    el('label', { for: 's-bar' }, 'bar', el('select', { id: 's-bar', onchange: (e) => go({ bar: e.target.value }) },
      ['1h', '1d'].map((b) => el('option', { value: b, selected: b === bar }, b === '1h' ? 'hour' : 'day')))),
  );
  const status = el('p', { class: 'status', role: 'status' }, 'Loading the series…');
  main.append(
    el('p', { class: 'lead' }, 'Price over time of every pricing kind (the cheapest SKU and zone at each bar, collected and imported history alike), against the middle 80% of the market (p10–p90 of every provider\'s ', el('strong', {}, pricingLabel(state.pricing)), ' series of this GPU).'),
    controls, status,
  );
  function go(change) {
    location.assign(href('/series', { ...state, ...change }));
  }

  const filter = { gpu: state.gpu, provider: state.provider, region: state.region, since: state.since, bar };
  let own, market, vol;
  try {
    [own, market, vol] = await Promise.all([
      get('/api/v1/series', filter),
      get('/api/v1/series', { gpu: state.gpu, pricing: state.pricing, since: state.since, bar }),
      get('/api/v1/volatility', { gpu: state.gpu, provider: state.provider, region: state.region, window: state.since, bar }),
    ]);
  } catch (e) {
    status.replaceWith(problem(e, 'The series could not be read'));
    return;
  }
  const ownBars = rows(own, 'bars');
  const marketBars = rows(market, 'bars');

  // One line per pricing kind: the cheapest close across this provider's series at each bar.
  const lines = [];
  for (const [kind, label] of PRICING) {
    const m = new Map();
    for (const b of ownBars) {
      if (b.pricing !== kind || !isNum(b.close)) continue;
      const t = Date.parse(b.start) / 1000;
      if (!m.has(t) || b.close < m.get(t)) m.set(t, b.close);
    }
    if (m.size) lines.push({ kind, label, points: [...m].sort((a, b) => a[0] - b[0]) });
  }
  // The market band: p10 and p90 of every series' close at each bar.
  const byTime = new Map();
  for (const b of marketBars) {
    if (!isNum(b.close)) continue;
    const t = Date.parse(b.start) / 1000;
    if (!byTime.has(t)) byTime.set(t, []);
    byTime.get(t).push(b.close);
  }
  const times = [...byTime.keys()].sort((a, b) => a - b);
  const lo = times.map((t) => [t, quantile(byTime.get(t), 0.1)]);
  const hi = times.map((t) => [t, quantile(byTime.get(t), 0.9)]);
  const { xs, cols } = align([...lines.map((l) => l.points), lo, hi]);
  const n = lines.length;
  const fig = chart({
    title: `${state.gpu}${state.provider ? ' at ' + state.provider : ''}${state.region ? ' ' + state.region : ''}, $/GPU-hour per ${bar === '1h' ? 'hour' : 'day'} (last ${state.since})`,
    xs,
    lines: lines.map((l, i) => ({ label: l.label, values: cols[i], color: COLORS[l.kind], dash: l.kind.startsWith('reserved') ? [6, 4] : undefined })),
    band: times.length ? { label: `market ${pricingLabel(state.pricing)} p10–p90`, lo: cols[n], hi: cols[n + 1] } : undefined,
    fmt: money,
  });
  fig.id = 'series-chart';
  const rest = [fig];
  if (!ownBars.length) rest.unshift(el('p', { class: 'empty' }, 'No bars for this series in the window: widen the window or check the filters.'));

  const vs = rows(vol, 'series', 'volatility');
  rest.push(el('h2', {}, 'Volatility over the window'));
  if (!vs.length) {
    rest.push(el('p', { class: 'empty' }, 'Not enough bars for volatility figures.'));
  } else {
    const head = ['series', 'pricing', 'bars', 'annualised', 'CV', 'range', 'max drawdown', 'changes', 'min', 'max', 'close'];
    rest.push(el('div', { class: 'scroll' }, el('table', { id: 'volatility' },
      el('caption', { class: 'sr-only' }, 'Volatility of each series'),
      el('thead', {}, el('tr', {}, head.map((h, i) => el('th', { scope: 'col', class: i > 1 ? 'n' : '' }, h)))),
      el('tbody', {}, vs.map((v) => el('tr', {},
        el('th', { scope: 'row', class: 'sku' }, [v.provider, v.sku, v.region, v.zone && v.zone !== v.region ? v.zone : ''].filter(Boolean).join(' ')),
        el('td', {}, pricingLabel(v.pricing)),
        el('td', { class: 'n' }, v.bars ?? '–'),
        el('td', { class: 'n' }, pct(v.annualised)),
        el('td', { class: 'n' }, pct(v.cv)),
        el('td', { class: 'n' }, pct(v.range)),
        el('td', { class: 'n' }, pct(v.max_drawdown)),
        el('td', { class: 'n' }, v.changes ?? '–'),
        el('td', { class: 'n' }, money(v.min)),
        el('td', { class: 'n' }, money(v.max)),
        el('td', { class: 'n' }, money(v.close)),
      ))),
    )));
    rest.push(el('p', { class: 'note' }, 'Annualised: standard deviation of log returns between bars × √(bars per year). CV: standard deviation over mean of the closes. Range: (max − min) / mean. Max drawdown: the largest fall from a running high. See docs/analytics.md.'));
  }
  rest.push(el('p', {}, el('a', { href: href('/', { gpu: state.gpu, provider: state.provider, region: state.region }) }, 'Current offers of this series on the board')));
  status.replaceWith(...rest);
}


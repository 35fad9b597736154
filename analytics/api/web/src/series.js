// The series view: one GPU at one provider (and region) over time. For each pricing
// kind it draws the series of the cheapest offer on sale now (or the SKU and zone the
// address names), from its bars: collected and imported history alike. Behind the
// lines, the market's p10–p90 band of the chosen pricing kind, day by day (every
// provider's day prices of this GPU: the band of /api/v1/series),
// then the volatility figures of every series of the GPU at the provider. Alerts
// link here.

import { get, rows, data, problem } from './api.js';
import { chart, align, COLORS, EXTRA } from './chart.js';
import { el, money, pct, fixed, params, href, pricingLabel, pricingKinds, isNum, when, day, scrollBox } from './util.js';

const WINDOWS = ['7d', '30d', '90d', '180d', '365d'];

/** series renders the series view into main. */
export async function series(main) {
  const q = params();
  const state = {
    gpu: q.get('gpu') || '',
    provider: q.get('provider') || '',
    pricing: q.get('pricing') || 'on_demand',
    region: q.get('region') || '',
    sku: q.get('sku') || '',
    zone: q.get('zone') || '',
    since: q.get('since') || '30d',
    bar: q.get('bar') || '',
  };
  const bar = state.bar || (parseInt(state.since, 10) <= 7 ? '1h' : '1d');
  const where = [state.provider && 'at ' + state.provider, state.region && 'in ' + state.region].filter(Boolean).join(' ');
  main.append(el('h1', {}, (state.gpu || 'Series') + (where ? ' ' + where : '')));
  if (!state.gpu || !state.provider) {
    main.append(el('p', { class: 'error', role: 'alert' }, 'Name a GPU and a provider: follow a link from the price board, or add ?gpu=H100-SXM-80GB&provider=lambda to the address.'));
    return;
  }
  const go = (change) => location.assign(href('/series', { ...state, ...change }));
  const controls = el('form', { class: 'filters', onsubmit: (e) => e.preventDefault() },
    el('label', { for: 's-since' }, 'window', el('select', { id: 's-since', onchange: (e) => go({ since: e.target.value, bar: '' }) },
      [...new Set([...WINDOWS, state.since])].map((w) => el('option', { value: w, selected: w === state.since }, w)))),
    el('label', { for: 's-bar' }, 'bar', el('select', { id: 's-bar', onchange: (e) => go({ bar: e.target.value }) },
      ['1h', '1d'].map((b) => el('option', { value: b, selected: b === bar }, b === '1h' ? 'hour' : 'day')))),
  );
  const status = el('p', { class: 'status', role: 'status' }, 'Loading the series…');
  main.append(controls, status);

  // The offers of this GPU at this provider (every series ever seen, so a withdrawn
  // one can still be drawn), their volatility, and the market's percentiles.
  let offers, vol, hist;
  try {
    [offers, vol, hist] = await Promise.all([
      get('/api/v1/prices', { gpu: state.gpu, provider: state.provider, region: state.region, 'all-series': 'true' }).then(rows),
      get('/api/v1/volatility', { gpu: state.gpu, provider: state.provider, region: state.region, window: state.since, bar }).then(rows),
      get('/api/v1/history', { gpu: state.gpu, pricing: state.pricing, since: state.since }).then(data),
    ]);
  } catch (e) {
    status.replaceWith(problem(e, 'The series could not be read'));
    return;
  }
  if (!offers.length) {
    status.replaceWith(el('p', { class: 'empty' }, `No ${state.gpu} offer at ${state.provider}${state.region ? ' in ' + state.region : ''} has been seen.`));
    return;
  }
  // One series per pricing kind: the one the address names, else the cheapest now.
  const kinds = pricingKinds(offers);
  const picked = [];
  for (const kind of kinds) {
    let cands = offers.filter((o) => o.pricing === kind);
    if (kind === state.pricing && state.sku) cands = cands.filter((o) => o.sku === state.sku && (!state.zone || o.zone === state.zone));
    if (!cands.length) continue;
    picked.push(cands.reduce((a, b) => (b.price_usd_gpu_hour < a.price_usd_gpu_hour ? b : a)));
  }
  let got;
  try {
    got = await Promise.all(picked.map((o) => get('/api/v1/series', {
      provider: o.provider, sku: o.sku, region: o.region, zone: o.zone, pricing: o.pricing, since: state.since, bar,
    }).then(data)));
  } catch (e) {
    status.replaceWith(problem(e, 'The series could not be read'));
    return;
  }
  // Each line: its bars' closes; the price in force when the window opened (the
  // bar carried in) at the window's start; the last close held until the offer was
  // last seen (a price that did not change has no newer bar). Past its last
  // sighting (last_seen) a price is carried, not observed: that part is drawn
  // dashed and labelled "last seen …". A withdrawn series (its provider was
  // collected since without it) stops where its price ends (withdrawn).
  const width = bar === '1h' ? 3600 : 86400;
  const drawn = got.map((s, i) => {
    const from = Date.parse(s.from) / 1000;
    const to = Date.parse(s.to) / 1000;
    const end = s.withdrawn ? Math.min(Date.parse(s.withdrawn) / 1000, to) : to;
    const points = (s.bars || []).filter((b) => isNum(b.close) && Date.parse(b.start) / 1000 < end).map((b) => [Date.parse(b.start) / 1000, b.close]);
    if (s.carried_in && isNum(s.carried_in.close) && (!points.length || points[0][0] > from)) points.unshift([from, s.carried_in.close]);
    const line = { kind: picked[i].pricing, offer: picked[i], points, carried: [], lastSeen: s.last_seen, withdrawn: s.withdrawn && Date.parse(s.withdrawn) / 1000 <= to ? s.withdrawn : '' };
    if (!points.length) return line;
    const [lastT, close] = points[points.length - 1];
    const seen = s.last_seen ? Math.min(Date.parse(s.last_seen) / 1000, end) : Math.min(Date.parse(picked[i].observed_at) / 1000, end);
    if (seen > lastT) points.push([seen, close]);
    // More than a bar without a sighting before the price ends: carried.
    const since = Math.max(seen, lastT);
    if (s.last_seen && end - since > width) line.carried = [[since, close], [end, close]];
    return line;
  }).filter((l) => l.points.length);
  // The chart's lines: each series' observed part, then its carried part.
  const lines = drawn.flatMap((l) => {
    const color = COLORS[l.kind] || EXTRA[drawn.indexOf(l) % EXTRA.length];
    const label = pricingLabel(l.kind);
    const parts = [{ label, points: l.points, color, offer: l.offer }];
    if (l.carried.length) parts.push({ label: `${label} (carried, last seen ${day(l.lastSeen)})`, points: l.carried, color, dash: [6, 4], offer: l.offer });
    return parts;
  });
  const bandOf = got[picked.findIndex((o) => o.pricing === state.pricing)] || got[0];
  const bandDays = ((bandOf && bandOf.band) || []).map((d) => Date.parse(d.day) / 1000);
  // The band's days are on the time axis too, so that it is drawn day by day.
  const { xs, cols } = align([...lines.map((l) => l.points), lines.length ? bandDays.map((t) => [t, null]) : []]);
  cols.pop();
  const overall = hist && hist.overall;
  // The market band of the chosen pricing kind, day by day (from its series'
  // answer): each bar takes its day's p10 and p90.
  const byDay = new Map(((bandOf && bandOf.band) || []).map((d) => [Date.parse(d.day) / 1000, d]));
  const dayOf = (x) => Math.floor(x / 86400) * 86400;
  const band = byDay.size && xs.length && xs.some((x) => byDay.has(dayOf(x)))
    ? {
      label: `market ${pricingLabel(bandOf.pricing)} p10–p90`,
      lo: xs.map((x) => (byDay.has(dayOf(x)) ? byDay.get(dayOf(x)).p10 : null)),
      hi: xs.map((x) => (byDay.has(dayOf(x)) ? byDay.get(dayOf(x)).p90 : null)),
    }
    : undefined;
  const fig = chart({
    title: `${state.gpu} at ${state.provider}${state.region ? ' ' + state.region : ''}: $/GPU-hour per ${bar === '1h' ? 'hour' : 'day'}, last ${state.since}`,
    xs,
    lines: lines.map((l, i) => ({ label: l.label, values: cols[i], color: l.color, dash: l.dash })),
    band,
    fmt: money,
  });
  fig.id = 'series-chart';
  const shown = el('ul', { class: 'legend-notes' }, drawn.map((l) => el('li', { class: l.withdrawn ? 'withdrawn' : undefined },
    el('strong', {}, pricingLabel(l.kind)), ': ', seriesName(l.offer), ` — ${money(l.offer.price_usd_gpu_hour)} $/GPU-h, last seen ${when(l.lastSeen || l.offer.observed_at)}`,
    l.withdrawn ? `; withdrawn: no longer listed by ${l.offer.provider}, no price from ${day(l.withdrawn)}` : '', ' (',
    el('a', { href: href('/api/v1/series', { provider: l.offer.provider, sku: l.offer.sku, region: l.offer.region, zone: l.offer.zone, pricing: l.offer.pricing, since: state.since, bar, format: 'csv' }) }, 'bars as CSV'), ')')));
  const rest = [fig, el('p', { class: 'note' }, 'Lines: the series of each pricing kind\'s cheapest offer (a step holds a price until it changed). Band: p10 to p90 of every provider\'s price of this GPU, day by day.'), shown];
  const carried = drawn.filter((l) => l.carried.length);
  if (carried.length) {
    fig.append(el('p', { class: 'note carried-note', role: 'note' }, 'Dashed: ', carried.map((l) => `${pricingLabel(l.kind)} last seen ${day(l.lastSeen)}`).join(', '),
      '; after its last sighting nothing was observed, and the price shown is carried from it, not a fresh price.'));
  }
  if (!lines.length) rest.unshift(el('p', { class: 'empty' }, 'No bars in this window: widen the window (the bars are built after each collection and import).'));

  if (overall) rest.push(percentiles(hist, state));
  rest.push(el('h2', {}, 'Volatility over the window'));
  if (!vol.length) {
    rest.push(el('p', { class: 'empty' }, 'Not enough bars for volatility figures.'));
  } else {
    const head = ['series', 'pricing', 'bars', 'annualised', 'CV', 'range', 'max drawdown', 'changes', 'min', 'max', 'close'];
    const isShown = (v) => lines.some((l) => l.offer.sku === v.sku && l.offer.zone === v.zone && l.offer.region === v.region && l.offer.pricing === v.pricing);
    rest.push(scrollBox(el('table', { id: 'volatility' },
      el('caption', { class: 'sr-only' }, 'Volatility of each series'),
      el('thead', {}, el('tr', {}, head.map((h, i) => el('th', { scope: 'col', class: i > 1 ? 'n' : '' }, h)))),
      el('tbody', {}, vol.map((v) => el('tr', { class: isShown(v) ? 'current' : '' },
        el('th', { scope: 'row', class: 'sku' }, el('a', { href: href('/series', { ...state, pricing: v.pricing, sku: v.sku, zone: v.zone, region: v.region }) }, seriesName(v))),
        el('td', {}, pricingLabel(v.pricing)),
        el('td', { class: 'n' }, v.bars ?? '–'),
        el('td', { class: 'n', title: isNum(v.annualised) ? undefined : 'too few bars in the window' }, pct(v.annualised)),
        el('td', { class: 'n', title: isNum(v.cv) ? undefined : 'too few bars in the window' }, pct(v.cv)),
        el('td', { class: 'n', title: isNum(v.range) ? undefined : 'too few bars in the window' }, pct(v.range)),
        el('td', { class: 'n', title: isNum(v.max_drawdown) ? undefined : 'too few bars in the window' }, pct(v.max_drawdown)),
        el('td', { class: 'n' }, v.changes ?? '–'),
        el('td', { class: 'n' }, money(v.min)),
        el('td', { class: 'n' }, money(v.max)),
        el('td', { class: 'n' }, money(v.close)),
      ))),
    )));
    rest.push(el('p', { class: 'note' }, 'Annualised: standard deviation of the log returns between bars, scaled to a year. CV: standard deviation over the mean of the closes. Range: (max − min) over the mean. Max drawdown: the largest fall from a running high. Definitions: docs/analytics.md.'));
  }
  rest.push(el('p', {}, el('a', { href: href('/', { gpu: state.gpu, provider: state.provider, region: state.region }) }, 'These offers on the price board')));
  status.replaceWith(...rest);
}

function seriesName(o) {
  return [o.sku, o.region, o.zone && o.zone !== o.region ? o.zone : ''].filter(Boolean).join(' · ');
}

// percentiles lays out the window's negotiation figures: the market's and this provider's.
function percentiles(h, state) {
  const mine = (h.providers || []).find((p) => p.provider === state.provider);
  const head = ['', 'series', 'p10', 'p25', 'p50', 'p75', 'p90', 'min', 'latest', 'trend / 30d'];
  const row = (label, s) => el('tr', {}, el('th', { scope: 'row' }, label), el('td', { class: 'n' }, s.series ?? '–'),
    ['p10', 'p25', 'p50', 'p75', 'p90', 'min', 'latest'].map((k) => el('td', { class: 'n' }, money(s[k]))),
    el('td', { class: 'n' }, isNum(s.trend_pct_per_30d) ? (s.trend_pct_per_30d > 0 ? '+' : '') + fixed(s.trend_pct_per_30d, 1) + '%' : '–'));
  return scrollBox(el('table', { id: 'percentiles' },
    el('caption', {}, `${state.gpu} ${pricingLabel(state.pricing)} day prices, $/GPU-hour, last ${state.since}`),
    el('thead', {}, el('tr', {}, head.map((x, i) => el('th', { scope: 'col', class: i ? 'n' : '' }, x)))),
    el('tbody', {}, row('every provider', h.overall), mine ? row(state.provider, mine) : '')));
}

// Firing alerts and source health: what needs a look now.

import { get, rows, data, problem } from './api.js';
import { el, when, ago, day, fixed, href, isNum, params, pricingLabel, scrollBox } from './util.js';

/** alertItems flattens the alerts answer into [{state, rule, subject, summary, …}]: a list, lists under
 * firing/resolved/recent, the alert state's map of entries, or an evaluation report's rules. */
export function alertItems(body) {
  const out = [];
  const add = (a, state) => out.push({
    ...a,
    state: a.state || a.status || state || (a.ends_at || a.firing === false ? 'resolved' : 'firing'),
  });
  const each = (v, state) => (Array.isArray(v) ? v : v && typeof v === 'object' ? Object.values(v) : []).forEach((a) => a && add(a, state));
  if (Array.isArray(body)) each(body);
  else if (body && typeof body === 'object') {
    each(body.firing, 'firing');
    for (const k of ['resolved', 'recently_resolved']) each(body[k], 'resolved');
    each(body.alerts);
    // The alert history (/api/v1/alerts' recent): each episode with the figures it
    // fired on and, once resolved, those it resolved on. What fires now comes from
    // the evaluation below when the answer has one.
    const evaluated = Array.isArray(body.rules) && body.rules.length > 0;
    for (const ep of Array.isArray(body.recent) ? body.recent : []) {
      if (!ep || (ep.state === 'firing' && evaluated)) continue;
      const r = ep.resolved || null;
      out.push({ ...(ep.fired || {}), rule: ep.rule, kind: ep.kind, subject: ep.subject, state: ep.state, starts_at: ep.starts_at,
        ends_at: ep.ends_at, firing: ep.state === 'firing', resolvedValue: r ? r.value : undefined, resolvedSummary: r ? r.summary : '' });
    }
    // An evaluation report: every rule's instances; firing ones, and those that resolved at this evaluation.
    if (Array.isArray(body.rules)) {
      for (const r of body.rules) {
        if (r.error) out.push({ rule: r.rule, kind: r.kind, state: 'error', summary: r.error });
        for (const i of r.instances || []) {
          if (i.firing || i.state === 'resolved') out.push({ ...i, rule: i.rule || r.rule, kind: i.kind || r.kind, transition: i.state, state: i.firing ? 'firing' : 'resolved' });
        }
      }
    }
  }
  return out;
}

// details lays out the figures an alert compares, each with when it held (else its detail figures).
function details(a) {
  if (Array.isArray(a.compared) && a.compared.length) {
    return el('ul', { class: 'compared' }, a.compared.map((p) => el('li', {},
      el('span', { class: 'muted' }, String(p.label || '').replace(/_/g, ' '), ' '),
      p.unit === 'usd_gpu_hour' ? '$' + fixed(p.value, 4) + '/GPU-h' : p.unit === 'ratio' ? fixed(p.value, 4) : '',
      p.at ? el('span', { class: 'muted' }, (p.unit === 'ratio' ? ' on ' + day(p.at) : ' at ' + when(p.at))) : '')));
  }
  const d = a.detail || {};
  const keys = Object.keys(d).sort();
  if (!keys.length) return '';
  return el('div', { class: 'muted' }, keys.map((k) => `${k.replace(/_/g, ' ')} ${isNum(d[k]) ? +d[k].toFixed(4) : d[k]}`).join(' · '));
}

// figure writes an alert's value or threshold in its unit.
function figure(v, unit) {
  if (!isNum(v)) return '–';
  if (unit === 'usd_gpu_hour') return '$' + v.toFixed(4) + '/GPU-h';
  if (unit === 'pct') return (v > 0 ? '+' : '') + v.toFixed(2) + ' %';
  if (unit === 'runs') return v + ' runs';
  return +v.toFixed(4) + (unit ? ' ' + unit : '');
}

/** alertLink returns the series view of an alert, from its link or its labels. */
function alertLink(a) {
  const given = a.link || a.url || (a.annotations && (a.annotations.link || a.annotations.url));
  if (given) {
    try {
      const u = new URL(given, location.origin);
      return u.pathname + u.search;
    } catch {
      /* fall through to the labels */
    }
  }
  const r = a.series || {};
  if (r.source) return href('/sources', { source: r.source });
  if (r.gpu) return href('/series', { gpu: r.gpu, provider: r.provider, pricing: r.pricing, region: r.region, sku: r.sku, zone: r.zone });
  const l = a.labels || {};
  if (!l.gpu) return '';
  return href('/series', { gpu: l.gpu, provider: l.provider, pricing: l.pricing, region: l.region });
}

/** ALERTS_WINDOW is how far back the alerts view lists resolved alerts (the badge asks the same). */
export const ALERTS_WINDOW = '7d';
const WINDOW = ALERTS_WINDOW;

/** alerts renders firing and recently resolved alerts. */
export async function alerts(main) {
  main.append(el('h1', {}, 'Alerts'));
  const status = el('p', { class: 'status', role: 'status' }, 'Loading alerts…');
  main.append(status);
  let items;
  try {
    items = alertItems(data(await get('/api/v1/alerts', { window: WINDOW })));
  } catch (e) {
    status.replaceWith(problem(e, 'Alerts could not be read'));
    return;
  }
  const firing = items.filter((a) => a.state === 'firing');
  const resolved = items.filter((a) => a.state === 'resolved');
  const errors = items.filter((a) => a.state === 'error');
  const list = (xs, id, empty) => (xs.length
    ? scrollBox(el('table', { id, class: 'alerts' },
      el('thead', {}, el('tr', {}, ['rule', 'what', 'value', 'threshold', 'since', 'ended'].map((h, i) => el('th', { scope: 'col', class: i === 2 || i === 3 ? 'n' : '' }, h)))),
      el('tbody', {}, xs.map((a) => {
        const link = alertLink(a);
        return el('tr', {},
          el('th', { scope: 'row' }, a.rule || '–', a.kind ? el('div', { class: 'muted' }, a.kind) : ''),
          el('td', { class: 'wrap' }, link ? el('a', { href: link }, a.subject || 'series') : a.subject || '–', a.summary ? el('div', {}, a.summary) : '', details(a),
            isNum(a.resolvedValue) ? el('div', { class: 'resolved-on' }, 'Resolved on ', figure(a.resolvedValue, a.unit), a.resolvedSummary ? ': ' + a.resolvedSummary : '') : ''),
          el('td', { class: 'n' }, figure(a.value, a.unit)),
          el('td', { class: 'n' }, figure(a.threshold, a.unit)),
          el('td', { title: when(a.starts_at) }, a.starts_at ? ago(a.starts_at) + ' ago' : '–'),
          el('td', {}, a.ends_at ? when(a.ends_at) : ''));
      }))))
    : el('p', { class: 'empty' }, empty));
  status.replaceWith(
    el('h2', {}, 'Firing (', String(firing.length), ')'), list(firing, 'alerts-firing', 'Nothing is firing.'),
    el('h2', {}, 'Resolved in the last ', WINDOW, ' (', String(resolved.length), ')'), list(resolved, 'alerts-resolved', 'Nothing resolved in the last ' + WINDOW + '.'),
    errors.length ? [el('h2', {}, 'Rules that could not be evaluated'), errors.map((a) => el('p', { class: 'error' }, a.rule, ': ', a.summary))] : '',
    el('p', { class: 'note' }, 'Rules are set in the configuration (alerts.rules); see docs/alerts.md.'),
  );
}

/** sources renders every source with its last run. */
export async function sources(main) {
  main.append(el('h1', {}, 'Sources'));
  const status = el('p', { class: 'status', role: 'status' }, 'Loading sources…');
  main.append(status);
  let list;
  try {
    list = rows(await get('/api/v1/sources'), 'sources');
  } catch (e) {
    status.replaceWith(problem(e, 'Sources could not be read'));
    return;
  }
  const now = Date.now();
  const head = ['source', 'tier', 'method', 'schedule', 'last run', 'status', 'rows', 'quarantined', 'error'];
  const table = el('table', { id: 'sources', class: 'sources' },
    el('caption', { class: 'sr-only' }, 'Sources and their last runs'),
    el('thead', {}, el('tr', {}, head.map((h, i) => el('th', { scope: 'col', class: i === 6 || i === 7 ? 'n' : '' }, h)))),
    el('tbody', {}, list.map((s) => {
      const r = s.last_run;
      const st = r ? r.status : s.enabled === false ? 'disabled' : 'never run';
      const wanted = params().get('source') === s.name;
      return el('tr', { class: 'st-' + String(st).replace(/\W+/g, '-') + (wanted ? ' current' : ''), id: 'source-' + s.name },
        el('th', { scope: 'row' }, s.name, s.enabled === false ? el('div', { class: 'muted' }, 'disabled') : ''),
        el('td', {}, s.tier || '–'),
        el('td', {}, s.method || '–', Array.isArray(s.pricing) && s.pricing.length ? el('div', { class: 'muted' }, s.pricing.map(pricingLabel).join(', ')) : ''),
        el('td', { class: 'mono' }, s.schedule || '–'),
        el('td', { title: r ? when(r.finished_at) : '' }, r ? ago(r.finished_at, now) + ' ago' : '–'),
        el('td', {}, el('span', { class: 'badge' }, st)),
        el('td', { class: 'n' }, r ? r.rows_accepted : '–'),
        el('td', { class: 'n' }, r ? r.rows_quarantined : '–'),
        el('td', { class: 'error-text' }, r && r.error ? r.error : ''));
    })));
  const wanted = params().get('source');
  if (wanted) requestAnimationFrame(() => { const row = document.getElementById('source-' + wanted); if (row) row.scrollIntoView({ block: 'center' }); });
  status.replaceWith(scrollBox(table),
    el('p', { class: 'note' }, 'Rows that failed validation, with the reason: ', el('code', {}, 'gpuprice quarantine'), ' or ', el('a', { href: '/api/v1/quarantine' }, '/api/v1/quarantine'), '.'));
}

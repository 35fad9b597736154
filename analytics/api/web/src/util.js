// Small helpers shared by the views: DOM building, number and time formatting,
// URL state and CSV.

/** el builds an element: el('td', {class: 'n'}, 'text', child, …). */
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

/** isNum reports whether v is a finite number (null and undefined are missing values). */
export const isNum = (v) => typeof v === 'number' && Number.isFinite(v);

/** money formats $/GPU-hour: 2 decimals from $1 up, 3 significant below; '–' when missing. */
export function money(v) {
  if (!isNum(v)) return '–';
  if (Math.abs(v) >= 1) return v.toFixed(2);
  return v.toPrecision(3);
}

/** fixed formats with d decimals, '–' when missing. */
export const fixed = (v, d) => (isNum(v) ? v.toFixed(d) : '–');

/** pct formats a fraction as a percentage. */
export const pct = (v, d = 1) => (isNum(v) ? (v * 100).toFixed(d) + '%' : '–');

/** sci formats big counts as 7e9-style text people type (7B → "7e9"). */
export function big(v) {
  if (!isNum(v)) return '–';
  if (Math.abs(v) >= 1e5) return v.toExponential(3).replace(/\.?0+e/, 'e').replace('e+', 'e');
  return String(Math.round(v * 1000) / 1000);
}

/** ago says how long ago a time was: "5m", "3h", "2d". */
export function ago(t, now = Date.now()) {
  const ms = now - new Date(t).getTime();
  if (!Number.isFinite(ms)) return '–';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return s + 's';
  if (s < 90 * 60) return Math.round(s / 60) + 'm';
  if (s < 36 * 3600) return Math.round(s / 3600) + 'h';
  return Math.round(s / 86400) + 'd';
}

/** when formats a time as UTC "2026-01-02 15:04Z". */
export function when(t) {
  const d = new Date(t);
  if (!t || Number.isNaN(d.getTime()) || d.getTime() <= 0) return '–';
  return d.toISOString().slice(0, 16).replace('T', ' ') + 'Z';
}

/** day formats a time as its UTC date. */
export const day = (t) => new Date(t).toISOString().slice(0, 10);

/** params returns the page's query parameters. */
export const params = () => new URLSearchParams(location.search);

/** setParams writes the given state into the URL (empty values dropped) without reloading. */
export function setParams(state, push = false) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(state)) if (v !== '' && v !== undefined && v !== null) q.set(k, v);
  const s = q.toString();
  const url = location.pathname + (s ? '?' + s : '') + location.hash;
  if (url === location.pathname + location.search + location.hash) return;
  history[push ? 'pushState' : 'replaceState'](null, '', url);
}

/** href builds a link to path with the non-empty params. */
export function href(path, state) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(state)) if (v !== '' && v !== undefined && v !== null) q.set(k, v);
  const s = q.toString();
  return path + (s ? '?' + s : '');
}

/**
 * csv renders rows (arrays) as RFC 4180 text. A cell a spreadsheet would run as a
 * formula (= + - @ tab CR first, not a number) gets a leading ' (OWASP), as the
 * server's CSV does (schemas/textsafe.CSV).
 */
export function csv(header, rows) {
  const guard = (s) => (/^[=+\-@\t\r]/.test(s) && !(/^[+-]/.test(s) && s.trim() !== '' && !isNaN(Number(s))) ? "'" + s : s);
  const cell = (v) => {
    const s = guard(v === null || v === undefined ? '' : String(v));
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

/** download offers text as a file. */
export function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** PRICING lists the pricing kinds in display order with their labels. */
export const PRICING = [
  ['on_demand', 'on-demand'],
  ['spot', 'spot'],
  ['reserved_1y', 'reserved 1y'],
  ['reserved_3y', 'reserved 3y'],
  ['low_priority', 'low priority'],
];
export const pricingLabel = (p) => (PRICING.find(([k]) => k === p) || [p, String(p).replace(/_/g, ' ')])[1];

/**
 * pricingRank orders pricing kinds by term, as the CLI and the report do (analytics.PricingRank):
 * on-demand, spot, then by months (commitment_1m, commitment_6m, reserved_1y, commitment_12m, …), the rest last.
 */
export function pricingRank(p) {
  if (p === 'on_demand') return 0;
  if (p === 'spot') return 1;
  const m = p === 'reserved_1y' ? 12 : p === 'reserved_3y' ? 36 : Number((/^commitment_(\d+)m$/.exec(p) || [])[1] || 0);
  if (m > 0) return 10 + m * 2 + (p.startsWith('reserved_') ? 1 : 0);
  return 1 << 20;
}

/** pricingKinds lists the pricing kinds present in rows by term (pricingRank), others by name. */
export function pricingKinds(rows) {
  const seen = [...new Set(rows.map((o) => o.pricing))].filter(Boolean);
  return seen.sort((a, b) => pricingRank(a) - pricingRank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** TIERS lists the market tiers. */
export const TIERS = ['hyperscaler', 'specialist', 'marketplace'];

/** uniq returns the sorted distinct non-empty values. */
export const uniq = (xs) => [...new Set(xs.filter((x) => x !== '' && x !== undefined && x !== null))].sort();

/** median of numbers (missing values skipped); null for none. */
export function quantile(xs, q) {
  const v = xs.filter(isNum).sort((a, b) => a - b);
  if (!v.length) return null;
  const i = (v.length - 1) * q;
  const lo = Math.floor(i), hi = Math.ceil(i);
  return v[lo] + (v[hi] - v[lo]) * (i - lo);
}

/** scrollBox wraps a wide table in a box that scrolls sideways on its own, reachable
 * and scrollable from the keyboard, named after the table's caption. */
export function scrollBox(...children) {
  const box = el('div', { class: 'scroll', tabindex: '0', role: 'region' }, ...children);
  const cap = box.querySelector('caption');
  box.setAttribute('aria-label', (cap && cap.textContent.trim()) || 'table');
  return box;
}

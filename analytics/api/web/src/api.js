// The JSON API client: every view reads /api/v1/… (same numbers as the CLI's
// --format json) and shows the API's own error text when a request fails.

import { el } from './util.js';

/** APIError carries the HTTP status and the API's error message. */
export class APIError extends Error {
  constructor(status, message, param) {
    super(message);
    this.status = status;
    this.param = param;
  }
}

/**
 * get fetches path?params as JSON; params with empty values are left out. An
 * answer's `recorded` is noted (recorded, onRecorded) unless opts.note is false
 * (a request that is not the view's own, such as the navigation's alert count).
 */
export async function get(path, params = {}, opts = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== '' && v !== undefined && v !== null) q.set(k, v);
  const url = path + (q.toString() ? '?' + q : '');
  let resp;
  try {
    resp = await fetch(url, { headers: { Accept: 'application/json' } });
  } catch (e) {
    throw new APIError(0, `${url}: the server did not answer (${e.message})`);
  }
  const text = await resp.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: reported below */
  }
  if (!resp.ok) {
    let msg = (body && (body.error || body.message)) || text.trim() || resp.statusText;
    if (typeof msg === 'object') msg = msg.message || JSON.stringify(msg);
    if (body && Array.isArray(body.did_you_mean) && body.did_you_mean.length) msg += ` (did you mean ${body.did_you_mean.join(', ')}?)`;
    throw new APIError(resp.status, msg, body && (body.parameter || body.param));
  }
  if (body === null && text) throw new APIError(resp.status, `${url}: not JSON`);
  if (opts.note !== false && body && typeof body === 'object' && body.recorded && typeof body.recorded === 'object') noteRecorded(body.recorded);
  return body;
}

/**
 * recorded is, per provider, the most series of a recorded example any answer read
 * so far held (the API's `recorded`: by row, whatever ran since); onRecorded's
 * listeners hear of each answer that had some.
 */
export const recorded = {};
const listeners = [];
/** onRecorded calls fn whenever an answer read rows of a recorded example. */
export const onRecorded = (fn) => listeners.push(fn);
function noteRecorded(m) {
  for (const [p, n] of Object.entries(m)) if (typeof n === 'number' && n > 0) recorded[p] = Math.max(recorded[p] || 0, n);
  for (const fn of listeners) fn(recorded);
}

/** data returns an answer's value: /api/v1 wraps it as {data, matched}. */
export const data = (body) => (body && typeof body === 'object' && !Array.isArray(body) && 'data' in body ? body.data : body);

/** matched says how typed names were resolved ("gpu h100 matched family: H100-SXM-80GB, …"), for names that were not exact. */
export function matched(body) {
  const ms = (body && Array.isArray(body.matched) && body.matched) || [];
  return ms.filter((m) => m.how && m.how !== 'exact').map((m) => `${m.kind} “${m.input}” matched ${m.how}: ${(m.names || []).join(', ')}`);
}

/** rows returns the array of rows of an answer, whether it is an array or an object holding one. */
export function rows(body, ...keys) {
  body = data(body);
  if (Array.isArray(body)) return body;
  if (!body || typeof body !== 'object') return [];
  for (const k of [...keys, 'rows', 'data', 'items', 'results']) if (Array.isArray(body[k])) return body[k];
  return [];
}

/** problem renders an error for the user, in a live region. */
export function problem(err, what) {
  return el('p', { class: 'error', role: 'alert' }, what ? what + ': ' : '', err.message || String(err));
}

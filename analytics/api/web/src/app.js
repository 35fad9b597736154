// gpuprice web app: one page shell, a view per path. Every view reads the JSON
// API under /api/v1; nothing is fetched from anywhere else.

import { board } from './board.js';
import { series } from './series.js';
import { spreads } from './spreads.js';
import { indexView } from './indexview.js';
import { tokens } from './tokens.js';
import { terms } from './terms.js';
import { availability } from './availability.js';
import { alerts, sources, alertItems, ALERTS_WINDOW } from './health.js';
import { get, data, recorded, onRecorded } from './api.js';
import { el } from './util.js';

const VIEWS = {
  '/': ['Prices', board],
  '/series': ['Series', series],
  '/spreads': ['Spreads', spreads],
  '/index': ['Index', indexView],
  '/tokens': ['Tokens', tokens],
  '/terms': ['Terms', terms],
  '/availability': ['Availability', availability],
  '/alerts': ['Alerts', alerts],
  '/sources': ['Sources', sources],
};

function nav(path) {
  const links = Object.entries(VIEWS).filter(([p]) => p !== '/series').map(([p, [label]]) =>
    el('li', {}, el('a', { href: p, 'aria-current': p === path ? 'page' : undefined, id: 'nav-' + label.toLowerCase() }, label)));
  return el('nav', { 'aria-label': 'Views' }, el('a', { href: '/', class: 'brand' }, 'gpuprice'), el('ul', {}, links));
}

async function main() {
  // A hash route (#/series?gpu=…, as some links are written) is the same view as its path.
  if (/^#\/[a-z]*(\?|$)/.test(location.hash)) history.replaceState(null, '', location.hash.slice(1));
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const view = VIEWS[path];
  const header = document.querySelector('header');
  header.replaceChildren(nav(path));
  const root = document.getElementById('main');
  root.replaceChildren();
  if (!view) {
    root.append(el('h1', {}, 'Not found'), el('p', {}, 'No view at ', path, '. ', el('a', { href: '/' }, 'Back to the prices')));
    return;
  }
  document.title = view[0] + ' · gpuprice';
  // The number of firing alerts in the navigation, read alongside the view (and
  // placed before the page says it is ready); the view does not wait on it.
  const badge = get('/api/v1/alerts', { window: ALERTS_WINDOW }, { note: false })
    .then((b) => alertItems(data(b)).filter((a) => a.state === 'firing').length)
    .catch(() => 0);
  // An answer that read rows of a recorded example (gpuprice reparse examples/recorded)
  // says so, by row, whatever ran since: the API's `recorded` of every answer the view
  // read (api.js), also of those read later (a form sent). The price board marks
  // each recorded offer itself.
  const showRecorded = () => {
    if (path === '/' || !Object.keys(recorded).length) return;
    const names = Object.keys(recorded).sort();
    const series = names.reduce((n, p) => n + recorded[p], 0);
    const text = `Recorded example: ${series} series of ${names.join(', ')} read by this view come from a recorded archive (loaded by gpuprice reparse): their prices keep the time they were recorded at and are not today's prices, nor is what is computed from them; a recorded archive may hold responses constructed in the providers' formats, whose values are partly illustrative (the price board counts them).`;
    let note = document.getElementById('recorded-note');
    if (note) {
      note.textContent = text;
      return;
    }
    note = el('p', { class: 'recorded-note', id: 'recorded-note', role: 'note' }, text);
    const h1 = root.querySelector('h1');
    if (h1) h1.after(note); else root.prepend(note);
  };
  try {
    await view[1](root);
  } catch (e) {
    root.append(el('p', { class: 'error', role: 'alert' }, 'This view failed: ', e.message));
    throw e;
  }
  showRecorded();
  onRecorded(showRecorded);
  const n = await badge;
  if (n) document.getElementById('nav-alerts').append(el('span', { class: 'count-badge', title: n + ' alerts firing' }, String(n), el('span', { class: 'sr-only' }, ' firing')));
  root.setAttribute('aria-busy', 'false');
  document.body.dataset.ready = 'true';
}

main();

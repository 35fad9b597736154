// The tokens calculator: model parameters, MFU and a token budget → the effective
// $ per 1B training tokens of every current offering, with the arithmetic of the
// chosen one written out. The numbers come from /api/v1/tokens, the same code as
// `gpuprice tokens --format json`.

import { get, rows, matched, problem } from './api.js';
import { el, money, fixed, big, params, setParams, href, PRICING, pricingLabel, isNum, scrollBox } from './util.js';

const FIELDS = ['params', 'mfu', 'tokens', 'precision', 'gpus', 'nodes', 'gpu', 'provider', 'pricing'];

/** tokens renders the calculator into main. */
export async function tokens(main) {
  const q = params();
  const state = Object.fromEntries(FIELDS.map((f) => [f, q.get(f) || '']));
  if (!state.params) state.params = '7e9';
  main.append(el('h1', {}, 'Cost of training tokens'),
    el('p', { class: 'lead' }, '$ per 1B tokens = $/GPU-hour × 1e9 × 6 × params / (peak dense FLOP/s × MFU × 3600). Leave MFU empty to use the published band\'s midpoint for the job on each offering: a job that fits one node of NVLink-class GPUs is single-node NVLink whatever the fabric between nodes; the interconnect counts only when the job (GPUs, nodes; default one node) crosses nodes.'));
  const input = (name, label, attrs) => el('label', { for: 't-' + name }, label,
    el('input', { id: 't-' + name, name, value: state[name], autocomplete: 'off', ...attrs }));
  const form = el('form', { class: 'filters calc', id: 'tokens-form' },
    input('params', 'parameters', { required: true, inputmode: 'decimal', placeholder: '7e9', pattern: '[0-9.eE+]+', 'aria-describedby': 't-help' }),
    input('mfu', 'MFU', { inputmode: 'decimal', placeholder: 'band midpoint', pattern: '0?\\.[0-9]+|1' }),
    input('tokens', 'tokens in the run', { inputmode: 'decimal', placeholder: 'e.g. 1.4e12', pattern: '[0-9.eE+]*' }),
    input('gpus', 'job GPUs', { inputmode: 'numeric', placeholder: 'one node', pattern: '[0-9]*' }),
    input('nodes', 'job nodes', { inputmode: 'numeric', placeholder: '1', pattern: '[0-9]*' }),
    el('label', { for: 't-precision' }, 'precision', el('select', { id: 't-precision', name: 'precision' },
      ['bf16', 'fp8'].map((p) => el('option', { value: p, selected: p === (state.precision || 'bf16') }, p)))),
    input('gpu', 'GPU', { placeholder: 'any, e.g. H100-SXM-80GB' }),
    input('provider', 'provider', { placeholder: 'any' }),
    el('label', { for: 't-pricing' }, 'pricing', el('select', { id: 't-pricing', name: 'pricing' },
      el('option', { value: '' }, 'all'), PRICING.map(([k, l]) => el('option', { value: k, selected: k === state.pricing }, l)))),
    el('div', { class: 'actions' }, el('button', { type: 'submit', id: 't-go' }, 'Calculate')),
  );
  const help = el('p', { id: 't-help', class: 'note' }, 'Numbers as 7e9, 70000000000 or 1.4e12.');
  const out = el('div', { id: 'tokens-out', 'aria-live': 'polite' });
  main.append(form, help, out);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    for (const f of FIELDS) state[f] = (form.elements[f].value || '').trim();
    if (state.precision === 'bf16') state.precision = '';
    setParams(state, true);
    run();
  });
  window.addEventListener('popstate', () => location.reload());

  async function run() {
    out.replaceChildren(el('p', { class: 'status', role: 'status' }, 'Calculating…'));
    let list, notes;
    try {
      const body = await get('/api/v1/tokens', { ...state, limit: 100 });
      list = rows(body);
      notes = matched(body).map((m) => el('p', { class: 'note matched' }, m));
    } catch (e) {
      out.replaceChildren(problem(e, 'No answer'));
      return;
    }
    if (!list.length) {
      out.replaceChildren(...notes, el('p', { class: 'empty' }, 'No current offering matches (or none has a published MFU band: give an MFU).'));
      return;
    }
    const explain = el('div', { class: 'explain' });
    const show = (r) => explain.replaceChildren(...arithmetic(r, state.precision || 'bf16'));
    const best = list[0];
    const c = best.cost;
    const answer = el('p', { class: 'answer' },
      'Cheapest: ', el('strong', { id: 'tokens-answer', dataset: { value: String(c.usd_per_1b_tokens) } }, '$' + fixed(c.usd_per_1b_tokens, 4)),
      ' per 1B tokens on ', `${best.gpu} at ${best.provider} (${pricingLabel(best.pricing)}, ${best.region || 'any region'})`,
      isNum(c.run_usd) && c.run_usd > 0 ? ['; the run: ', el('strong', { id: 'tokens-run' }, '$' + fixed(c.run_usd, 2)), ` for ${fixed(c.gpu_hours, 1)} GPU-hours`] : '',
      '.');
    const head = ['GPU', 'provider', 'pricing', 'SKU', 'region', '$/GPU-h', 'MFU', 'tokens/GPU-h', '$ per 1B tokens'];
    if (isNum(c.run_usd) && c.run_usd > 0) head.push('GPU-hours', 'run $');
    const table = el('table', { id: 'tokens-table' },
      el('caption', { class: 'sr-only' }, 'Offerings, cheapest per token first'),
      el('thead', {}, el('tr', {}, head.map((h, i) => el('th', { scope: 'col', class: i > 4 ? 'n' : '' }, h)))),
      el('tbody', {}, list.map((r, i) => {
        const tr = el('tr', { tabindex: '0', class: i === 0 ? 'current' : '', 'aria-label': `Show the arithmetic for ${r.gpu} at ${r.provider}` },
          el('td', {}, r.gpu), el('td', {}, r.provider), el('td', {}, pricingLabel(r.pricing)), el('td', { class: 'sku' }, r.sku),
          el('td', {}, r.region), el('td', { class: 'n' }, money(r.cost.price_usd_gpu_hour)), el('td', { class: 'n' }, fixed(r.cost.mfu, 3)),
          el('td', { class: 'n' }, isNum(r.cost.tokens_per_gpu_hour) ? Math.round(r.cost.tokens_per_gpu_hour).toLocaleString('en-US') : '–'),
          el('td', { class: 'n' }, fixed(r.cost.usd_per_1b_tokens, 4)),
          head.length > 9 ? [el('td', { class: 'n' }, fixed(r.cost.gpu_hours, 1)), el('td', { class: 'n' }, fixed(r.cost.run_usd, 2))] : '');
        const pick = () => {
          for (const x of tr.parentNode.children) x.classList.remove('current');
          tr.classList.add('current');
          show(r);
        };
        tr.addEventListener('click', pick);
        tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pick(); } });
        return tr;
      })));
    show(best);
    out.replaceChildren(...notes, answer, el('h2', {}, 'The arithmetic'), explain,
      el('h2', {}, 'Every offering'), el('p', { class: 'note' }, 'Pick a row to see its arithmetic.'), scrollBox(table));
  }
  run();
}

// arithmetic writes out the formula with one offering's numbers.
function arithmetic(r, precision) {
  const c = r.cost;
  const lines = [
    `FLOPs per token      = 6 × params = 6 × ${big(c.params)} = ${big(6 * c.params)}`,
    `tokens per GPU-hour  = peak × MFU × 3600 / (6 × params)`,
    `                     = ${c.peak_tflops} TFLOPS × 1e12 × ${c.mfu} × 3600 / ${big(6 * c.params)} = ${Math.round(c.tokens_per_gpu_hour).toLocaleString('en-US')}`,
    `$ per 1B tokens      = $/GPU-h × 1e9 / tokens per GPU-hour`,
    `                     = ${c.price_usd_gpu_hour} × 1e9 / ${Math.round(c.tokens_per_gpu_hour)} = $${fixed(c.usd_per_1b_tokens, 4)}`,
  ];
  if (isNum(c.tokens) && c.tokens > 0) {
    lines.push(`GPU-hours for the run = ${big(c.tokens)} tokens / ${Math.round(c.tokens_per_gpu_hour)} = ${fixed(c.gpu_hours, 2)}`);
    lines.push(`cost of the run       = ${fixed(c.gpu_hours, 2)} GPU-h × $${c.price_usd_gpu_hour} = $${fixed(c.run_usd, 2)}`);
  }
  return [
    el('p', {}, `${r.gpu} at ${r.provider}, ${r.sku} ${r.region} (${pricingLabel(r.pricing)}), ${precision}; MFU from ${r.mfu_source || '–'}.`),
    el('pre', { id: 'tokens-arithmetic', tabindex: '0', 'aria-label': 'The arithmetic' }, lines.join('\n')),
    el('p', {}, el('a', { href: href('/series', { gpu: r.gpu, provider: r.provider, pricing: r.pricing, region: r.region }) }, 'This offering\'s price over time')),
  ];
}

// Every setting with its value, validated by the node's own Validate on save; a live
// preview of the context a new session of a chosen project gets; the AI provider chain.
import { get, put } from './api.js';
import { el, clear, errorBox, toast } from './ui.js';
import { lastStatus } from './main.js';

export async function settingsPage(main) {
  main.append(el('h1', { text: 'Settings' }));
  let st;
  try { st = await get('/api/viewer/settings'); } catch (err) { main.append(errorBox(err)); return; }
  const file = st.file || {};
  const inputs = new Map();
  const rows = st.fields.map((f) => {
    const id = 'set-' + f.name;
    const cur = file[f.name];
    const eff = st.effective[f.name] ?? st.defaults[f.name];
    let input;
    if (f.kind === 'bool') {
      input = el('select', { id, name: f.name },
        el('option', { value: '', text: `default (${eff ? 'on' : 'off'})` }),
        el('option', { value: 'true', text: 'on' }), el('option', { value: 'false', text: 'off' }));
      input.value = cur === undefined ? '' : String(cur);
    } else if (f.kind === 'map') {
      input = el('textarea', { id, name: f.name, rows: '2', placeholder: eff ? JSON.stringify(eff) : '{}' });
      input.value = cur === undefined ? '' : JSON.stringify(cur);
    } else {
      input = el('input', { id, name: f.name, autocomplete: 'off', spellcheck: 'false',
        placeholder: eff === undefined ? '' : (Array.isArray(eff) ? eff.join(', ') : String(eff)) });
      input.value = cur === undefined ? '' : (Array.isArray(cur) ? cur.join(', ') : String(cur));
    }
    inputs.set(f.name, [f, input]);
    return el('div', { class: 'setting' },
      el('label', { for: id }, el('code', { text: f.name }), f.restart ? el('span', { class: 'tag', title: 'the node reads this when it starts', text: 'restart' }) : null),
      input);
  });
  const err = el('p', { class: 'error', role: 'alert', id: 'settings-error' });
  const form = el('form', { class: 'settings', id: 'settings', onsubmit: async (e) => {
    e.preventDefault();
    err.textContent = '';
    const out = {};
    try {
      for (const [name, [f, input]] of inputs) {
        const v = input.value.trim();
        if (v === '') continue;
        out[name] = parse(f.kind, v, name);
      }
      const saved = await put('/api/viewer/settings', out);
      toast('Saved to ' + saved.path + ' — restart the node to apply (memnode stop; memnode start)');
    } catch (x) { err.textContent = x.message; }
  } },
  el('p', { class: 'muted' }, 'Saved to ', el('code', { text: st.path }), '. Empty fields use the value shown greyed (environment, flags or defaults). AI keys are not settings: they live in the key store (memnode keys set PROVIDER) and are never shown here.'),
  el('div', { class: 'grid' }, rows), err,
  el('div', { class: 'row end' }, el('button', { type: 'submit', id: 'settings-save', text: 'Save' })));
  main.append(form, aiPanel(st), keysPanel(), previewPanel());
}

function parse(kind, v, name) {
  switch (kind) {
    case 'bool': return v === 'true';
    case 'int': {
      if (!/^-?\d+$/.test(v)) throw new Error(`settings: ${name} must be a whole number`);
      return Number(v);
    }
    case 'list': return v.split(',').map((x) => x.trim()).filter(Boolean);
    case 'map': try { return JSON.parse(v); } catch { throw new Error(`settings: ${name} must be a JSON object like {"openai": "gpt-4o-mini"}`); }
    default: return v;
  }
}

function aiPanel(st) {
  const chain = (st.effective.ai_providers || []).concat(['offline']);
  const ai = lastStatus?.compressor?.ai;
  return el('section', { class: 'panel', id: 'ai' }, el('h2', { text: 'AI providers' }),
    el('p', {}, 'Chain: ', chain.map((p, i) => el('span', {}, i ? ' → ' : '', el('code', { text: p })))),
    el('p', { text: 'Compressor: ' + (lastStatus?.compressor?.name || '') }),
    ai ? el('p', { text: 'Budget left today: ' + (ai.budget_left < 0 ? 'unlimited' : ai.budget_left + ' tokens') }) : null,
    ai ? el('table', { class: 'table' },
      el('thead', {}, el('tr', {}, ['Provider', 'Model', 'Calls', 'Tokens in / out', 'Errors', 'Last error'].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, (ai.providers || []).map((p) => el('tr', {},
        el('td', { text: p.name }), el('td', { text: p.model }), el('td', { text: String(p.calls) }),
        el('td', { text: `${p.input_tokens} / ${p.output_tokens}` }),
        el('td', { text: Object.entries(p.errors || {}).map(([k, v]) => `${k}: ${v}`).join(', ') }),
        el('td', { text: (p.disabled_until ? 'off until ' + new Date(p.disabled_until).toLocaleTimeString() + ' — ' : '') + (p.last_error || '') }))))) : null,
    el('p', { class: 'muted', text: 'Keys: memnode keys set PROVIDER stores a key in the OS keyring (or the encrypted key file); the viewer never shows one.' }));
}

function previewPanel() {
  const project = el('input', { id: 'preview-project', autocomplete: 'off', placeholder: 'project name' });
  const out = el('pre', { class: 'code preview', id: 'preview', text: '' });
  const show = async () => {
    if (!project.value.trim()) return;
    try { out.textContent = await get('/api/context', { project: project.value.trim() }) || '(empty: nothing recorded for this project yet)'; } catch (err) { clear(out).append(errorBox(err)); }
  };
  project.addEventListener('change', show);
  return el('section', { class: 'panel' }, el('h2', { text: 'Context preview' }),
    el('p', { class: 'muted', text: 'What a new session of this project would be told at start.' }),
    el('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); show(); } },
      el('label', { for: 'preview-project' }, el('span', { text: 'Project' }), project), el('button', { type: 'submit', text: 'Preview' })), out);
}

// keysPanel writes AI keys to the key store; a stored key is never shown, only named.
function keysPanel() {
  const provider = el('select', { id: 'key-provider' }, ['anthropic', 'openai', 'gemini'].map((p) => el('option', { value: p, text: p })));
  const key = el('input', { id: 'key-value', type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: 'paste the key' });
  const state = el('p', { id: 'keys-state', class: 'muted', 'aria-live': 'polite' });
  const show = (k) => {
    state.textContent = k.error ? 'Key store: ' + k.error
      : `Key store: ${k.backend}. Keys stored for: ${k.stored.length ? k.stored.join(', ') : 'none'}. They apply when the node restarts.`;
  };
  get('/api/viewer/keys').then(show, (err) => { state.textContent = err.message; });
  return el('section', { class: 'panel', id: 'keys' }, el('h2', { text: 'AI provider keys' }), state,
    el('form', { class: 'row', onsubmit: async (e) => {
      e.preventDefault();
      const v = key.value;
      key.value = '';
      if (!v) return;
      try { show(await put('/api/viewer/keys/' + provider.value, { key: v })); toast(provider.value + ' key stored'); } catch (err) { toast(err.message, true); }
    } },
    el('label', { for: 'key-provider' }, el('span', { text: 'Provider' }), provider),
    el('label', { for: 'key-value' }, el('span', { text: 'Key (never shown again)' }), key),
    el('button', { type: 'submit', id: 'key-save', text: 'Store key' })));
}

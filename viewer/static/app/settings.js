// Settings grouped as people think of them (capture, context, AI, …), each with what it
// does, its unit, range and default, saved as you change it (validated by the node's own
// rules). What a running node can apply does so at once; the rest is marked and waits for
// the restart button, which keeps this page logged in. The context preview re-renders as
// the settings change, for a chosen project. AI keys go to the key store, never here.
import { get, put, post } from './api.js';
import { el, clear, errorBox, toast } from './ui.js';
import { lastStatus } from './main.js';

const GROUPS = { capture: 'Capture', context: 'Context', ai: 'AI', search: 'Search', sync: 'Sync', team: 'Team', viewer: 'Viewer', node: 'Node' };
const WORDS = { ai: 'AI', mdns: 'mDNS', fsync: 'Fsync', urls: 'URLs', api: 'API' };
const SAVE_AFTER = 600; // ms after the last change
const PREVIEW_AFTER = 300; // ms

// title turns a settings.json key into words: context_full_count → Context full count.
function title(name) {
  const w = name.split('_').map((x) => WORDS[x] || x);
  return w.map((x, i) => (i ? x : x[0].toUpperCase() + x.slice(1))).join(' ');
}

function shown(v) {
  if (v === undefined || v === null || v === '') return 'none';
  if (Array.isArray(v)) return v.length ? v.join(', ') : 'none';
  if (typeof v === 'object') return Object.keys(v).length ? Object.entries(v).map(([k, x]) => k + '=' + x).join(', ') : 'none';
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  return String(v);
}

export async function settingsPage(main) {
  main.append(el('h1', { text: 'Settings' }));
  let st;
  try { st = await get('/api/viewer/settings'); } catch (err) { main.append(errorBox(err)); return; }
  const file = st.file || {};
  const inputs = new Map();
  const err = el('p', { class: 'error', role: 'alert', id: 'settings-error' });
  const state = el('p', { class: 'muted', id: 'settings-state', 'aria-live': 'polite' });
  const restartBox = el('div', { class: 'restart', id: 'restart-box' });
  const preview = previewPanel();
  let timer = 0;

  function row(f) {
    const id = 'set-' + f.name;
    const cur = file[f.name];
    const def = st.defaults[f.name] ?? { int: 0, bool: false, list: [], map: {} }[f.kind];
    let input;
    if (f.kind === 'bool') {
      input = el('select', { id, name: f.name },
        el('option', { value: '', text: `default (${def ? 'on' : 'off'})` }),
        el('option', { value: 'true', text: 'on' }), el('option', { value: 'false', text: 'off' }));
      input.value = cur === undefined ? '' : String(cur);
    } else if (f.choices && f.kind === 'string') {
      input = el('select', { id, name: f.name }, el('option', { value: '', text: `default (${shown(def) === '—' ? f.choices[0] : shown(def)})` }),
        f.choices.map((c) => el('option', { value: c, text: c })));
      input.value = cur === undefined ? '' : String(cur);
    } else if (f.kind === 'map') {
      input = el('input', { id, name: f.name, autocomplete: 'off', spellcheck: 'false', placeholder: 'provider=value, …' });
      input.value = cur === undefined ? '' : Object.entries(cur).map(([k, v]) => k + '=' + v).join(', ');
    } else if (f.kind === 'int') {
      input = el('input', { id, name: f.name, type: 'number', inputmode: 'numeric', min: f.min ?? null, max: f.max ?? null, step: '1',
        placeholder: shown(def) });
      input.value = cur === undefined ? '' : String(cur);
    } else {
      input = el('input', { id, name: f.name, autocomplete: 'off', spellcheck: 'false', placeholder: f.kind === 'list' ? 'comma-separated' : (def ? String(def) : '') });
      input.value = cur === undefined ? '' : (Array.isArray(cur) ? cur.join(', ') : String(cur));
    }
    inputs.set(f.name, [f, input]);
    input.addEventListener(input.tagName === 'SELECT' ? 'change' : 'input', () => { clearTimeout(timer); timer = setTimeout(save, SAVE_AFTER); });
    const range = f.min !== undefined && f.max !== undefined && f.max < 1e9 ? `${f.min}–${f.max}` : '';
    return el('div', { class: 'setting', dataset: { name: f.name, live: String(!f.restart) } },
      el('div', { class: 'set-head' },
        el('label', { for: id, text: title(f.name) }),
        f.restart ? el('span', { class: 'tag', title: 'the node reads this when it starts', text: 'restart' })
          : el('span', { class: 'tag live', title: 'a change applies at once', text: 'live' })),
      el('p', { class: 'help', id: id + '-help', text: f.help }),
      el('div', { class: 'set-input' }, input, f.unit ? el('span', { class: 'unit', text: f.unit }) : null),
      el('p', { class: 'meta' }, el('code', { text: f.name }), ' · default ', el('span', { text: shown(def) }), range ? ' · ' + range : ''));
  }

  const byGroup = new Map((st.groups || []).map((g) => [g, []]));
  for (const f of st.fields) {
    if (!byGroup.has(f.group)) byGroup.set(f.group, []);
    byGroup.get(f.group).push(f);
  }
  const sections = [...byGroup].filter(([, fs]) => fs.length).map(([g, fs]) => el('section', { class: 'panel group', id: 'group-' + g },
    el('h2', { text: GROUPS[g] || g }),
    el('div', { class: 'grid' }, fs.map(row)),
    g === 'ai' ? [aiPanel(st), keysPanel()] : null,
    g === 'context' ? preview.box : null));
  for (const [, [, input]] of inputs) input.setAttribute('aria-describedby', input.id + '-help');

  function collect() {
    const out = {};
    for (const [name, [f, input]] of inputs) {
      const v = input.value.trim();
      if (v === '') continue;
      out[name] = parse(f.kind, v, name);
    }
    return out;
  }
  function showState(s) {
    clear(restartBox);
    const pending = s.pending || [];
    if (pending.length) {
      restartBox.append(el('p', {}, 'Saved, waiting for a restart: ', pending.map((n, i) => [i ? ', ' : '', el('code', { text: n })])),
        s.can_restart ? el('button', { type: 'button', id: 'restart', onclick: restart, text: 'Restart the node' })
          : el('p', { class: 'muted', text: 'Run memnode stop && memnode start to apply them.' }));
    }
  }
  async function save() {
    clearTimeout(timer);
    err.textContent = '';
    let body;
    try { body = collect(); } catch (x) { err.textContent = x.message; return; }
    try {
      st = await put('/api/viewer/settings', body);
      state.textContent = 'Saved ' + new Date().toLocaleTimeString() + '. Live settings apply at once.';
      showState(st);
      preview.refresh();
    } catch (x) { err.textContent = x.message; }
  }
  async function restart() {
    const button = document.getElementById('restart');
    if (button) button.disabled = true;
    state.textContent = 'Restarting the node…';
    try { await post('/api/viewer/restart'); } catch (x) { err.textContent = x.message; if (button) button.disabled = false; return; }
    // Up again — a node started after this one — with this page's session (kept in the
    // data dir).
    const before = st.started;
    const again = async () => { try { return (await get('/api/viewer/settings')).started !== before; } catch { return false; } };
    const t0 = Date.now();
    while (!(await again())) {
      if (Date.now() - t0 > 120000) { err.textContent = 'The node did not come back within 2 minutes: see memnode status and the Logs page.'; return; }
      await new Promise((r) => setTimeout(r, 250));
    }
    toast('The node restarted; every setting applies');
    document.body.dataset.restarted = String(Number(document.body.dataset.restarted || 0) + 1);
    const main2 = document.getElementById('main');
    clear(main2);
    settingsPage(main2);
  }

  main.append(
    el('p', { class: 'muted' }, 'Saved to ', el('code', { text: st.path }), ' as you change them (checked by the node first). ',
      el('span', { class: 'tag live', text: 'live' }), ' settings apply at once; ', el('span', { class: 'tag', text: 'restart' }),
      ' ones when the node restarts. An empty field uses its default (or an environment override).'),
    el('form', { class: 'settings', id: 'settings', onsubmit: (e) => { e.preventDefault(); save(); } },
      sections,
      el('div', { class: 'row sticky' }, el('div', { class: 'grow-1' }, err, state, restartBox),
        el('button', { type: 'submit', id: 'settings-save', text: 'Save now' }))));
  showState(st);
  return () => { clearTimeout(timer); preview.stop(); };
}

function parse(kind, v, name) {
  switch (kind) {
    case 'bool': return v === 'true';
    case 'int': {
      if (!/^-?\d+$/.test(v)) throw new Error(`settings: ${name} must be a whole number`);
      return Number(v);
    }
    case 'list': return v.split(',').map((x) => x.trim()).filter(Boolean);
    case 'map': {
      if (v.startsWith('{')) { try { return JSON.parse(v); } catch { /* below */ } }
      const out = {};
      for (const part of v.split(',').map((x) => x.trim()).filter(Boolean)) {
        const [k, ...rest] = part.split('=');
        if (!k || !rest.length) throw new Error(`settings: ${name} takes provider=value pairs, like openai=gpt-4o-mini`);
        out[k.trim()] = rest.join('=').trim();
      }
      return out;
    }
    default: return v;
  }
}

function aiPanel(st) {
  const chain = (st.effective.ai_providers || []).concat(['offline']);
  const ai = lastStatus?.compressor?.ai;
  return el('div', { class: 'sub', id: 'ai' }, el('h3', { text: 'Provider chain now' }),
    el('p', {}, chain.map((p, i) => el('span', {}, i ? ' → ' : '', el('code', { text: p }))),
      ' · compressor ', el('code', { text: lastStatus?.compressor?.name || '' }),
      ai ? ' · budget left today: ' + (ai.budget_left < 0 ? 'unlimited' : ai.budget_left + ' tokens') : ''),
    ai ? el('table', { class: 'table' },
      el('thead', {}, el('tr', {}, ['Provider', 'Model', 'Calls', 'Tokens in / out', 'Errors', 'Last error'].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, (ai.providers || []).map((p) => el('tr', {},
        el('td', { text: p.name }), el('td', { text: p.model }), el('td', { text: String(p.calls) }),
        el('td', { text: `${p.input_tokens} / ${p.output_tokens}` }),
        el('td', { text: Object.entries(p.errors || {}).map(([k, v]) => `${k}: ${v}`).join(', ') }),
        el('td', { text: (p.disabled_until ? 'off until ' + new Date(p.disabled_until).toLocaleTimeString() + ' — ' : '') + (p.last_error || '') }))))) : null);
}

// previewPanel shows the context a new session of the chosen project starts with, drawn
// again PREVIEW_AFTER ms after a saved change or a new project.
function previewPanel() {
  const project = el('select', { id: 'preview-project' }, el('option', { value: '', text: 'choose a project' }));
  const out = el('pre', { class: 'code preview', id: 'preview', text: 'Choose a project to see the context its next session starts with.' });
  let timer = 0, gen = 0;
  const show = async () => {
    if (!project.value) return;
    const g = ++gen;
    try {
      const text = await get('/api/context', { project: project.value });
      if (g === gen) { out.textContent = text || '(empty: nothing recorded for this project yet)'; out.dataset.renders = String(Number(out.dataset.renders || 0) + 1); }
    } catch (err) { if (g === gen) clear(out).append(errorBox(err)); }
  };
  const refresh = () => { clearTimeout(timer); timer = setTimeout(show, PREVIEW_AFTER); };
  project.addEventListener('change', refresh);
  get('/api/viewer/facets').then((fc) => {
    for (const p of fc.projects) project.append(el('option', { value: p, text: p }));
    if (fc.projects.length === 1) { project.value = fc.projects[0]; refresh(); }
  }, () => {});
  const box = el('div', { class: 'sub', id: 'context-preview' }, el('h3', { text: 'Context preview' }),
    el('p', { class: 'muted', text: 'What a new session of this project is told at start, with the settings above.' }),
    el('label', { for: 'preview-project', class: 'inline' }, el('span', { text: 'Project' }), project), out);
  return { box, refresh, stop: () => clearTimeout(timer) };
}

// keysPanel writes AI keys to the key store; a stored key is never shown, only named.
function keysPanel() {
  const provider = el('select', { id: 'key-provider' }, ['anthropic', 'openai', 'gemini'].map((p) => el('option', { value: p, text: p })));
  const key = el('input', { id: 'key-value', type: 'password', autocomplete: 'off', spellcheck: 'false', placeholder: 'paste the key' });
  const state = el('p', { id: 'keys-state', class: 'muted', 'aria-live': 'polite' });
  const show = (k) => {
    state.textContent = k.error ? 'Key store: ' + k.error
      : `Key store: ${k.backend}. Keys stored for: ${k.stored.length ? k.stored.join(', ') : 'none'}. A new key applies when the node restarts.`;
  };
  get('/api/viewer/keys').then(show, (err) => { state.textContent = err.message; });
  const store = async () => {
    const v = key.value;
    key.value = '';
    if (!v) return;
    try { show(await put('/api/viewer/keys/' + provider.value, { key: v })); toast(provider.value + ' key stored'); } catch (err) { toast(err.message, true); }
  };
  // A div, not a form: it sits inside the settings form (Enter in the key box stores the key).
  key.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); store(); } });
  return el('div', { class: 'sub', id: 'keys' }, el('h3', { text: 'Provider keys' }), state,
    el('div', { class: 'row' },
      el('label', { for: 'key-provider' }, el('span', { text: 'Provider' }), provider),
      el('label', { for: 'key-value' }, el('span', { text: 'Key (never shown again)' }), key),
      el('button', { type: 'button', id: 'key-save', onclick: store, text: 'Store key' })));
}

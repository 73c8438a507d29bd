// The tail of the node's and the hooks' logs (redacted when written): level and component
// filters, wrap, pause, peer IDs shortened. Lines are parsed from logfmt (slog's text
// handler) into time, level, component, message and the rest.
import { get } from './api.js';
import { el, clear, errorBox } from './ui.js';

const LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'];
// A libp2p peer ID (base58, 12D3KooW… or Qm…) is shown by its last 6 characters, as the
// devices page and the CLI name devices.
const PEER = /\b(12D3KooW|Qm)[1-9A-HJ-NP-Za-km-z]{38,50}\b/g;

// parse splits one logfmt line; a line that is not logfmt (the start-up lines, a panic) is
// all message, at INFO.
export function parse(line) {
  const f = {};
  for (const m of line.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    let v = m[2];
    if (v.startsWith('"')) { try { v = JSON.parse(v); } catch { v = v.slice(1, -1); } }
    if (!(m[1] in f)) f[m[1]] = v;
  }
  if (!f.level || !f.msg) return { time: '', level: 'INFO', component: '', msg: line, rest: '' };
  const rest = line.replace(/(^|\s)(time|level|msg|component)=("(?:[^"\\]|\\.)*"|\S*)/g, '').trim();
  return { time: (f.time || '').replace(/^\d{4}-\d\d-\d\dT/, '').replace(/(\.\d{3})\d*/, '$1').replace(/Z$|[+-]\d\d:\d\d$/, ''),
    level: f.level.toUpperCase(), component: f.component || 'node', msg: f.msg, rest };
}

const short = (s) => s.replace(PEER, (id) => '…' + id.slice(-6));

export function logsPage(main) {
  const which = el('select', { id: 'log-name' }, el('option', { value: 'node', text: 'node' }), el('option', { value: 'hook', text: 'hooks' }));
  const level = el('select', { id: 'log-level' }, LEVELS.map((l) => el('option', { value: l, text: l.toLowerCase() + ' and up' })));
  level.value = 'INFO';
  const component = el('select', { id: 'log-component' }, el('option', { value: '', text: 'every component' }));
  const grep = el('input', { id: 'log-grep', type: 'search', placeholder: 'text in the line', autocomplete: 'off' });
  const wrap = el('input', { id: 'log-wrap', type: 'checkbox' });
  const pause = el('button', { type: 'button', class: 'ghost', id: 'log-pause', 'aria-pressed': 'false', text: 'Pause' });
  const out = el('div', { class: 'log', id: 'log', tabindex: '0', role: 'log', 'aria-label': 'Log lines' });
  const note = el('p', { class: 'muted', id: 'log-note' });
  let lines = [], paused = false;
  const components = new Set();
  function draw() {
    const min = LEVELS.indexOf(level.value);
    const words = grep.value.trim().toLowerCase();
    const shown = lines.filter((l) => (LEVELS.indexOf(l.level) >= min || LEVELS.indexOf(l.level) < 0) &&
      (!component.value || l.component === component.value) && (!words || l.raw.toLowerCase().includes(words)));
    const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 20;
    clear(out);
    out.classList.toggle('wrap', wrap.checked);
    if (!shown.length) out.append(el('div', { class: 'muted', text: lines.length ? '(no line matches these filters)' : '(the log is empty)' }));
    out.append(...shown.slice(-1000).map((l) => el('div', { class: 'line l-' + l.level.toLowerCase() },
      l.time ? el('span', { class: 'ts', text: l.time }) : null,
      el('span', { class: 'lv', text: l.level }),
      l.component ? el('span', { class: 'comp', text: l.component }) : null,
      el('span', { class: 'msg', text: short(l.msg) }),
      l.rest ? el('span', { class: 'kv', text: short(l.rest) }) : null)));
    if (atEnd) out.scrollTop = out.scrollHeight;
  }
  async function load() {
    if (paused) return;
    try {
      const l = await get('/api/viewer/logs', { log: which.value, lines: 2000 });
      lines = l.lines.map((raw) => ({ ...parse(raw), raw }));
      for (const x of lines) {
        if (x.component && !components.has(x.component)) {
          components.add(x.component);
          component.append(el('option', { value: x.component, text: x.component }));
        }
      }
      note.textContent = which.value === 'hook' && !lines.length ? 'No hook has written a line yet: hooks log only what goes wrong.' : '';
      draw();
    } catch (err) { clear(out).append(errorBox(err)); }
  }
  which.addEventListener('change', () => { clear(out); load(); });
  for (const c of [level, component, wrap]) c.addEventListener('change', draw);
  grep.addEventListener('input', draw);
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.textContent = paused ? 'Resume' : 'Pause';
    pause.setAttribute('aria-pressed', String(paused));
    if (!paused) load();
  });
  main.append(el('h1', { text: 'Logs' }), el('div', { class: 'filters logbar' },
    el('label', { for: 'log-name' }, el('span', { text: 'Log' }), which),
    el('label', { for: 'log-level' }, el('span', { text: 'Level' }), level),
    el('label', { for: 'log-component' }, el('span', { text: 'Component' }), component),
    el('label', { for: 'log-grep' }, el('span', { text: 'Filter' }), grep),
    el('label', { for: 'log-wrap', class: 'check' }, wrap, el('span', { text: 'Wrap lines' })),
    pause), note, out);
  load();
  const t = setInterval(load, 2000);
  return () => clearInterval(t);
}

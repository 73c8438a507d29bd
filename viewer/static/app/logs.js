// The tail of the node's and the hooks' logs (redacted when written), with a level filter.
import { get } from './api.js';
import { el, clear, errorBox } from './ui.js';

const LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'];

export function logsPage(main) {
  const which = el('select', { id: 'log-name' }, el('option', { value: 'node', text: 'node' }), el('option', { value: 'hook', text: 'hooks' }));
  const level = el('select', { id: 'log-level' }, LEVELS.map((l) => el('option', { value: l, text: l.toLowerCase() + ' and up' })));
  level.value = 'INFO';
  const out = el('pre', { class: 'code log', id: 'log', tabindex: '0', 'aria-label': 'Log lines' });
  async function load() {
    try {
      const l = await get('/api/viewer/logs', { log: which.value, lines: 1000 });
      const min = LEVELS.indexOf(level.value);
      const shown = l.lines.filter((line) => {
        const m = /level=(\w+)|"level":"(\w+)"|\b(DEBUG|INFO|WARN|ERROR)\b/.exec(line);
        const lv = m ? (m[1] || m[2] || m[3]).toUpperCase() : 'INFO';
        return LEVELS.indexOf(lv) >= min || LEVELS.indexOf(lv) < 0;
      });
      const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 20;
      out.textContent = shown.length ? shown.join('\n') : '(nothing at this level)';
      if (atEnd) out.scrollTop = out.scrollHeight;
    } catch (err) { clear(out).append(errorBox(err)); }
  }
  which.addEventListener('change', load);
  level.addEventListener('change', load);
  main.append(el('h1', { text: 'Logs' }), el('div', { class: 'filters' },
    el('label', { for: 'log-name' }, el('span', { text: 'Log' }), which),
    el('label', { for: 'log-level' }, el('span', { text: 'Level' }), level)), out);
  load();
  const t = setInterval(load, 2000);
  return () => clearInterval(t);
}

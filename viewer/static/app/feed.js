// The live feed: newest first, infinite scroll, filters, records pushed over the stream
// (any origin: hooks, device sync, team, import, MCP) and removed when forgotten anywhere.
import { get, records, post } from './api.js';
import { el, clear, toast, errorBox } from './ui.js';
import { card, view } from './cards.js';
import { live } from './main.js';
import { reselect } from './keys.js';

const PAGE = 50;
const OBS_TYPES = ['bugfix', 'feature', 'refactor', 'change', 'discovery', 'decision', 'note'];

export function feedPage(main) {
  const state = { offset: 0, done: false, loading: false, ids: new Set() };
  const f = {
    project: el('input', { id: 'f-project', name: 'project', list: 'projects', placeholder: 'any project', autocomplete: 'off' }),
    device: el('input', { id: 'f-device', name: 'device', placeholder: 'any device', autocomplete: 'off' }),
    platform: el('input', { id: 'f-platform', name: 'platform', placeholder: 'any platform', autocomplete: 'off' }),
    type: el('select', { id: 'f-type', name: 'type' },
      el('option', { value: '', text: 'everything' }),
      el('option', { value: 'observations', text: 'observations' }),
      el('option', { value: 'sessions', text: 'summaries' }),
      el('option', { value: 'prompts', text: 'prompts' }),
      OBS_TYPES.map((t) => el('option', { value: 'obs:' + t, text: '· ' + t }))),
    since: el('input', { id: 'f-since', name: 'since', type: 'datetime-local' }),
    until: el('input', { id: 'f-until', name: 'until', type: 'datetime-local' }),
  };
  const projects = el('datalist', { id: 'projects' });
  const list = el('div', { class: 'cards', id: 'feed', 'aria-live': 'off', 'aria-busy': 'true' });
  const sentinel = el('div', { class: 'sentinel', 'aria-hidden': 'true' });
  const empty = el('p', { class: 'muted', hidden: true, text: 'Nothing recorded yet. Work with your coding agent and what it does appears here live.' });
  const filters = el('form', { class: 'filters', role: 'search', 'aria-label': 'Filter the feed', onsubmit: (e) => { e.preventDefault(); reload(); } },
    label('Project', f.project), label('Device', f.device), label('Platform', f.platform), label('Type', f.type),
    label('From', f.since), label('To', f.until),
    el('button', { type: 'submit', text: 'Apply' }),
    el('button', { type: 'button', class: 'ghost', onclick: noteDialog, text: 'Write a note' }), projects);
  for (const input of Object.values(f)) input.addEventListener('change', reload);
  main.append(el('h1', { class: 'sr-only', text: 'Live feed' }), filters, empty, list, sentinel);

  function params() {
    const p = { order: 'newest', limit: PAGE, offset: state.offset, project: f.project.value.trim(), device: f.device.value.trim(), platform: f.platform.value.trim() };
    const t = f.type.value;
    if (t.startsWith('obs:')) { p.type = 'observations'; p.obs_type = t.slice(4); } else if (t) p.type = t;
    if (f.since.value) p.since = new Date(f.since.value).getTime();
    if (f.until.value) p.until = new Date(f.until.value).getTime();
    return p;
  }

  // matches applies the filters to a record pushed live (the node filtered the rest).
  function matches(v) {
    const p = params();
    if (p.project && v.project !== p.project) return false;
    if (p.device && v.device !== p.device) return false;
    if (p.platform && v.platform && v.platform !== p.platform) return false;
    if (p.type === 'observations' && v.kind !== 'observation') return false;
    if (p.type === 'sessions' && v.kind !== 'summary') return false;
    if (p.type === 'prompts' && v.kind !== 'prompt') return false;
    if (p.obs_type && v.type !== p.obs_type) return false;
    if (p.since && v.time < p.since) return false;
    if (p.until && v.time >= p.until) return false;
    return true;
  }

  function remove(id) {
    state.ids.delete(id);
    list.querySelector(`[data-id="${CSS.escape(id)}"]`)?.remove();
  }

  function add(items, atTop) {
    const frag = document.createDocumentFragment();
    for (const it of items) {
      const v = view(it);
      if (!v.id || state.ids.has(v.id)) continue;
      state.ids.add(v.id);
      frag.append(card(it, remove));
      if (v.project && !projects.querySelector(`option[value="${CSS.escape(v.project)}"]`)) projects.append(el('option', { value: v.project }));
    }
    if (atTop) list.prepend(frag); else list.append(frag);
    empty.hidden = list.childElementCount > 0;
  }

  async function more() {
    if (state.loading || state.done) return;
    state.loading = true;
    list.setAttribute('aria-busy', 'true');
    try {
      const res = await get('/api/viewer/feed', params());
      state.offset += res.hits;
      if (res.hits < PAGE) state.done = true;
      add(res.items, false);
      reselect();
      if (!performance.getEntriesByName('memnode:feed-painted').length) requestAnimationFrame(() => performance.mark('memnode:feed-painted'));
    } catch (err) {
      list.append(errorBox(err));
      state.done = true;
    } finally {
      state.loading = false;
      list.setAttribute('aria-busy', 'false');
    }
    if (!state.done && sentinel.getBoundingClientRect().top < innerHeight + 400) more();
  }

  function reload() {
    Object.assign(state, { offset: 0, done: false, ids: new Set() });
    clear(list);
    more();
  }

  // Live records arrive in bursts (50/s and more): IDs are gathered and fetched and drawn
  // once per animation frame, never one DOM update per record.
  let pending = [], scheduled = false;
  async function flush() {
    scheduled = false;
    const ids = pending.filter((id) => !state.ids.has(id));
    pending = [];
    if (!ids.length) return;
    try {
      const items = (await records(ids)).filter((it) => matches(view(it)));
      items.sort((a, b) => view(a).time - view(b).time);
      add(items, true);
    } catch (err) { toast(err.message, true); }
  }
  const onChange = (e) => {
    const ch = e.detail;
    for (const id of ch.forgotten || []) {
      remove(id);
      if (id.startsWith('S')) for (const c of list.querySelectorAll(`[data-session="${CSS.escape(id.slice(1))}"]`)) remove(c.dataset.id);
      for (const c of list.querySelectorAll(`[data-session="${CSS.escape(id)}"]`)) remove(c.dataset.id);
    }
    pending.push(...(ch.observations || []), ...(ch.summaries || []), ...(ch.prompts || []));
    if (pending.length && !scheduled) { scheduled = true; requestAnimationFrame(flush); }
  };
  live.addEventListener('change', onChange);
  live.addEventListener('resync', reload);
  const io = new IntersectionObserver((entries) => { if (entries.some((x) => x.isIntersecting)) more(); }, { rootMargin: '400px' });
  io.observe(sentinel);
  more();
  return () => {
    live.removeEventListener('change', onChange);
    live.removeEventListener('resync', reload);
    io.disconnect();
  };
}

function label(text, input) {
  return el('label', { for: input.id }, el('span', { text }), input);
}

function noteDialog() {
  const project = el('input', { id: 'n-project', required: true, autocomplete: 'off' });
  const title = el('input', { id: 'n-title', autocomplete: 'off' });
  const text = el('textarea', { id: 'n-text', rows: '6', required: true });
  const err = el('p', { class: 'error', role: 'alert' });
  const dlg = el('dialog', { class: 'dialog', 'aria-labelledby': 'note-title' },
    el('form', { method: 'dialog', onsubmit: async (e) => {
      e.preventDefault();
      try {
        const r = await post('/api/memories', { project: project.value.trim(), title: title.value.trim(), text: text.value });
        toast(r.duplicate ? 'Already saved' : 'Saved ' + r.id);
        dlg.close();
      } catch (x) { err.textContent = x.message; }
    } },
    el('h2', { id: 'note-title', text: 'Write a note' }),
    label('Project', project), label('Title', title), label('Note', text), err,
    el('div', { class: 'row end' },
      el('button', { type: 'button', class: 'ghost', onclick: () => dlg.close(), text: 'Cancel' }),
      el('button', { type: 'submit', text: 'Save' }))));
  dlg.addEventListener('close', () => dlg.remove());
  document.body.append(dlg);
  dlg.showModal();
}

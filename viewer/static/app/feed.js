// The live feed: newest first, infinite scroll, filters, records pushed over the stream
// (any origin: hooks, device sync, team, import, MCP) and removed when forgotten anywhere.
import { get, records, post } from './api.js';
import { el, clear, toast, errorBox } from './ui.js';
import { card, view, originLabel } from './cards.js';
import { live } from './main.js';
import { reselect } from './keys.js';

const PAGE = 50; // viewer.FeedPage

// inlined is the feed's first page as the node put it into the page (for a logged-in
// load): the first draw needs no request. It is good for the page's first route only.
let inlined = (() => {
  const block = document.getElementById('feed-first');
  if (!block) return null;
  block.remove();
  try { return JSON.parse(block.textContent); } catch { return null; }
})();
addEventListener('hashchange', () => { inlined = null; }, { once: true });
const LIVE_CAP = 200; // cards kept while records stream in at the top
const LIVE_EVERY = 200; // ms: at most one fetch and one redraw of live records per this

// newestFirst orders records as the feed shows them (IDs sort by time within a millisecond).
function newestFirst(a, b) {
  const x = view(a), y = view(b);
  return y.time - x.time || (y.id > x.id ? 1 : y.id < x.id ? -1 : 0);
}
const OBS_TYPES = ['bugfix', 'feature', 'refactor', 'change', 'discovery', 'decision', 'note'];

export function feedPage(main) {
  // ids are the cards on screen; gen counts reloads (an answer for old filters is dropped).
  const state = { done: false, loading: false, ids: new Set(), gen: 0 };
  const f = {
    project: el('select', { id: 'f-project', name: 'project' }, el('option', { value: '', text: 'any project' })),
    device: el('select', { id: 'f-device', name: 'device' }, el('option', { value: '', text: 'any device' })),
    platform: el('select', { id: 'f-platform', name: 'platform' }, el('option', { value: '', text: 'any agent' })),
    type: el('select', { id: 'f-type', name: 'type' },
      el('option', { value: '', text: 'any type' }),
      el('option', { value: 'observations', text: 'observations' }),
      el('option', { value: 'sessions', text: 'summaries' }),
      el('option', { value: 'prompts', text: 'prompts' }),
      OBS_TYPES.map((t) => el('option', { value: 'obs:' + t, text: '· ' + t }))),
    since: el('input', { id: 'f-since', name: 'since', type: 'date' }),
    until: el('input', { id: 'f-until', name: 'until', type: 'date' }),
  };
  const list = el('div', { class: 'cards', id: 'feed', 'aria-live': 'off', 'aria-busy': 'true' });
  const sentinel = el('div', { class: 'sentinel', 'aria-hidden': 'true' });
  const empty = el('div', { class: 'empty', id: 'feed-empty', hidden: true });
  const filters = el('form', { class: 'filters', role: 'search', 'aria-label': 'Filter the feed', onsubmit: (e) => { e.preventDefault(); reload(); } },
    label('Project', f.project, true), label('Device', f.device, true), label('Agent', f.platform, true), label('Type', f.type, true),
    label('From', f.since), label('To', f.until),
    el('button', { type: 'button', class: 'ghost note', onclick: noteDialog, text: 'Write a note' }));
  for (const input of Object.values(f)) input.addEventListener('change', reload);
  const showEmpty = () => emptyState(empty, list, Object.values(f).some((i) => i.value));
  // The filters' choices come after the first cards: the first paint waits for nothing.
  setTimeout(() => facets(f), 0);
  main.append(el('h1', { class: 'sr-only', text: 'Live feed' }), filters, empty, list, sentinel);

  function params(offset) {
    const p = { order: 'newest', limit: PAGE, offset, project: f.project.value, device: f.device.value, platform: f.platform.value };
    const t = f.type.value;
    if (t.startsWith('obs:')) { p.type = 'observations'; p.obs_type = t.slice(4); } else if (t) p.type = t;
    // From the start of the From day to the end of the To day, in local time.
    if (f.since.value) p.since = new Date(f.since.value + 'T00:00').getTime();
    if (f.until.value) p.until = new Date(f.until.value + 'T00:00').getTime() + 864e5;
    return p;
  }

  // matches applies the filters to a record pushed live (the node filtered the rest).
  function matches(v) {
    const p = params();
    if (p.project && v.project !== p.project) return false;
    if (p.device && v.origin !== p.device) return false;
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
    showEmpty();
  }

  // add draws items (newest first) above or below the cards shown and returns how many
  // were new.
  function add(items, atTop) {
    const frag = document.createDocumentFragment();
    let n = 0;
    for (const it of items) {
      const v = view(it);
      if (!v.id || state.ids.has(v.id)) continue;
      state.ids.add(v.id);
      frag.append(card(it, remove));
      n++;
      if (v.project && !known(f.project, v.project)) f.project.append(el('option', { value: v.project, text: v.project }));
    }
    if (atTop) list.prepend(frag); else list.append(frag);
    showEmpty();
    return n;
  }

  async function more() {
    if (state.loading || state.done) return;
    state.loading = true;
    const gen = state.gen;
    list.setAttribute('aria-busy', 'true');
    let added = 0;
    try {
      const first = inlined;
      inlined = null;
      // Records waiting to be drawn at the top are already in the node's list: skip them.
      const res = first || await get('/api/viewer/feed', params(state.ids.size + ready.length));
      if (gen !== state.gen) return; // the filters changed meanwhile
      if (res.hits < PAGE) state.done = true;
      added = add(res.items, false);
      if (!performance.getEntriesByName('memnode:first-card').length && added) {
        performance.mark('memnode:first-card');
        requestAnimationFrame(() => performance.mark('memnode:feed-painted'));
      }
      reselect();
    } catch (err) {
      list.append(errorBox(err));
      state.done = true;
    } finally {
      state.loading = false;
      list.setAttribute('aria-busy', 'false');
    }
    if (gen === state.gen && added && !state.done && sentinel.getBoundingClientRect().top < innerHeight + 400) more();
  }

  function reload() {
    Object.assign(state, { done: false, loading: false, ids: new Set(), gen: state.gen + 1 });
    ready = [];
    fresh.hidden = true;
    clear(list);
    more();
  }

  // Live records arrive in bursts (50/s and more). One fetch of their records is in flight
  // at a time, at most one starts per LIVE_EVERY (IDs that arrive meanwhile go in the
  // next), and what came back is drawn in one animation frame, at most one per LIVE_EVERY:
  // a lone record shows at once, a burst costs five small redraws a second, never a
  // request or a DOM update per record. At the top of the page new cards are drawn and
  // the list is trimmed to LIVE_CAP (scrolling down loads the older ones again); while the
  // person reads further down the page does not move: new records wait behind the "N new"
  // button.
  let pending = [], fetching = false, ready = [], framed = false, fetchAt = 0, drawAt = 0, closed = false;
  let pumpTimer = 0, drawTimer = 0;
  async function pump() {
    pumpTimer = 0;
    if (fetching || closed) return;
    const ids = pending.filter((id) => !state.ids.has(id));
    pending = [];
    if (!ids.length) return;
    const wait = fetchAt + LIVE_EVERY - performance.now();
    if (wait > 0) { pending = ids; pumpTimer = setTimeout(pump, wait); return; }
    fetching = true;
    fetchAt = performance.now();
    const gen = state.gen;
    try {
      const items = (await records(ids)).filter((it) => matches(view(it)));
      if (gen === state.gen && items.length) {
        ready.push(...items);
        frame();
      }
    } catch (err) { toast(err.message, true); } finally { fetching = false; }
    if (pending.length && !pumpTimer) pump();
  }
  function frame() {
    if (framed || closed) return;
    framed = true;
    const wait = drawAt + LIVE_EVERY - performance.now();
    if (wait > 0) drawTimer = setTimeout(() => requestAnimationFrame(draw), wait);
    else requestAnimationFrame(draw);
  }
  const reading = () => list.getBoundingClientRect().top < 60;
  function draw() {
    framed = false;
    if (closed) return;
    drawAt = performance.now();
    ready.sort(newestFirst);
    // Only the newest LIVE_CAP can stay on screen: drawing them trims every older card.
    if (ready.length > LIVE_CAP) ready.length = LIVE_CAP;
    if (reading()) {
      fresh.textContent = `↑ ${ready.length}${ready.length === LIVE_CAP ? '+' : ''} new`;
      fresh.hidden = !ready.length;
      return;
    }
    const items = ready;
    ready = [];
    fresh.hidden = true;
    const n = add(items, true);
    list.dataset.live = String(Number(list.dataset.live || 0) + n);
    let extra = state.ids.size - LIVE_CAP;
    for (let c = list.lastElementChild; extra > 0 && c; extra--) {
      const prev = c.previousElementSibling;
      if (c.dataset.id) { state.ids.delete(c.dataset.id); c.remove(); state.done = false; }
      c = prev;
    }
  }
  const fresh = el('button', { type: 'button', class: 'fresh', hidden: true, onclick: () => { scrollTo({ top: 0 }); frame(); } });
  const onScroll = () => { if (ready.length && !reading()) frame(); };
  addEventListener('scroll', onScroll, { passive: true });
  list.before(fresh);
  const onChange = (e) => {
    const ch = e.detail;
    for (const id of ch.forgotten || []) {
      remove(id);
      if (id.startsWith('S')) for (const c of list.querySelectorAll(`[data-session="${CSS.escape(id.slice(1))}"]`)) remove(c.dataset.id);
      for (const c of list.querySelectorAll(`[data-session="${CSS.escape(id)}"]`)) remove(c.dataset.id);
      ready = ready.filter((it) => { const v = view(it); return v.id !== id && 'S' + v.session !== id && v.session !== id; });
    }
    pending.push(...(ch.observations || []), ...(ch.summaries || []), ...(ch.prompts || []));
    if (!pumpTimer) pump();
  };
  // The stream tells only what happens while it is open: when it (re)connects, what came
  // meanwhile (since the page's first page was read, or while the connection was down) is
  // fetched and drawn like any live record — page after page until one reaches a record
  // the page already has (or the list ends), since a long outage can miss more than a page.
  // More than LIVE_CAP missed: only the newest could stay on screen, so the list is drawn
  // afresh instead.
  const onOpen = async () => {
    if (state.loading) return;
    const gen = state.gen;
    try {
      const known = new Set([...state.ids, ...ready.map((it) => view(it).id)]);
      const missed = [];
      for (let offset = 0; ; offset += PAGE) {
        const res = await get('/api/viewer/feed', params(offset));
        if (gen !== state.gen) return;
        const unseen = res.items.filter((it) => !known.has(view(it).id));
        missed.push(...unseen.filter((it) => matches(view(it))));
        if (unseen.length < res.items.length || res.hits < PAGE) break;
        if (missed.length >= LIVE_CAP) { reload(); return; }
      }
      if (missed.length) { ready.push(...missed); frame(); }
    } catch { /* the stream's own error shows in the header */ }
  };
  live.addEventListener('open', onOpen);
  live.addEventListener('change', onChange);
  live.addEventListener('resync', reload);
  const io = new IntersectionObserver((entries) => { if (entries.some((x) => x.isIntersecting)) more(); }, { rootMargin: '400px' });
  io.observe(sentinel);
  more();
  return () => {
    closed = true;
    clearTimeout(pumpTimer);
    clearTimeout(drawTimer);
    live.removeEventListener('open', onOpen);
    live.removeEventListener('change', onChange);
    live.removeEventListener('resync', reload);
    removeEventListener('scroll', onScroll);
    io.disconnect();
  };
}

// showEmpty shows the first-run help when the feed has nothing and no filter is set, or
// says that the filters match nothing.
function emptyState(empty, list, filtered) {
  if (list.childElementCount > 0) { empty.hidden = true; return; }
  const want = filtered ? 'filtered' : 'first';
  empty.hidden = false;
  if (empty.dataset.drawn === want) return;
  empty.dataset.drawn = want;
  clear(empty);
  if (filtered) { empty.append(el('p', { class: 'muted', text: 'No record matches these filters.' })); return; }
  empty.append(el('p', { class: 'muted', text: 'Nothing recorded yet. Work with your coding agent and what it does appears here live.' }));
  import('./firstrun.js').then((m) => m.firstRun(empty), () => {});
}

function known(select, value) {
  return [...select.options].some((o) => o.value === value);
}

// facets fills the filters' choices with the projects, devices and agents held here.
async function facets(f) {
  let fc;
  try { fc = await get('/api/viewer/facets'); } catch { return; }
  const fill = (select, values) => {
    for (const [value, text] of values) if (!known(select, value)) select.append(el('option', { value, text }));
  };
  fill(f.project, fc.projects.map((p) => [p, p]));
  fill(f.device, fc.devices.map((d) => [d.origin, originLabel(d.name, d.origin)]));
  fill(f.platform, fc.platforms.map((p) => [p, p]));
}

// label names a filter; hidden, for a select whose first choice says what it is ("any
// project").
function label(text, input, hidden) {
  return el('label', { for: input.id }, el('span', { class: hidden ? 'sr-only' : null, text }), input);
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

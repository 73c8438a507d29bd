// Search (/api/search, every filter the CLI has) → a hit's timeline (/api/timeline) → the
// full record.
import { get, records } from './api.js';
import { el, clear, when, errorBox, copy } from './ui.js';
import { card, view, originLabel, SECTIONS } from './cards.js';
import { icon, typeName } from './icons.js';
import { lastStatus } from './main.js';

const PAGE = 20;
const OBS_TYPES = ['bugfix', 'feature', 'refactor', 'change', 'discovery', 'decision', 'note'];

export function searchPage(main) {
  const q = el('input', { id: 's-query', type: 'search', name: 'query', placeholder: 'what did we decide about…', autocomplete: 'off' });
  const project = el('select', { id: 's-project', name: 'project' }, el('option', { value: '', text: 'any project' }));
  const device = el('select', { id: 's-device', name: 'device' }, el('option', { value: '', text: 'any device' }));
  const platform = el('select', { id: 's-platform', name: 'platform' }, el('option', { value: '', text: 'any agent' }));
  const type = el('select', { id: 's-type', name: 'type' },
    el('option', { value: 'all', text: 'everything' }), el('option', { value: 'observations', text: 'observations' }),
    el('option', { value: 'sessions', text: 'summaries' }), el('option', { value: 'prompts', text: 'prompts' }),
    OBS_TYPES.map((t) => el('option', { value: 'obs:' + t, text: '· ' + t })));
  const file = el('input', { id: 's-file', name: 'file', placeholder: 'path or file name', autocomplete: 'off', spellcheck: 'false' });
  const since = el('input', { id: 's-since', name: 'since', type: 'date' });
  const until = el('input', { id: 's-until', name: 'until', type: 'date' });
  const mode = el('select', { id: 's-mode', name: 'mode' },
    el('option', { value: '', text: 'auto' }), ['fts', 'vector', 'hybrid'].map((m) => el('option', { value: m, text: m })));
  const order = el('select', { id: 's-order', name: 'order' }, ['relevance', 'newest', 'oldest'].map((o) => el('option', { value: o, text: o })));
  // Vector and hybrid need embeddings: without them the node answers fts whatever is asked.
  const embed = lastStatus?.embed?.state || '';
  if (embed.startsWith('off')) {
    mode.disabled = true;
    mode.title = 'fts only: embeddings are off (' + embed + ')';
    mode.options[0].text = 'fts';
  }
  const out = el('div', { id: 'results', class: 'results', 'aria-live': 'polite' });
  let offset = 0;
  // params is the query as GET /api/search takes it (the CLI's flags, one for one), with the
  // last word also matched as a prefix: this box searches as the user types.
  const params = () => {
    const p = { query: q.value, project: project.value, device: device.value, platform: platform.value, file: file.value.trim(),
      mode: mode.value, order: order.value, limit: PAGE, offset, prefix: 1 };
    if (type.value.startsWith('obs:')) { p.type = 'observations'; p.obs_type = type.value.slice(4); } else p.type = type.value;
    if (since.value) p.since = since.value;
    if (until.value) p.until = until.value;
    return p;
  };
  // typed: the search runs as the person types (the last word matched as a prefix too);
  // Enter or a filter runs it as the CLI does.
  let gen = 0;
  const run = async (typed) => {
    const g = ++gen;
    if (!typed) clear(out).append(el('p', { class: 'muted', text: 'Searching…' }));
    const p = params();
    if (typed === true) p.prefix = 1;
    try {
      const res = await get('/api/search', p);
      const items = res.hits.length ? await records(res.hits.map((h) => h.id)) : [];
      if (g !== gen) return; // a later search is on its way
      const byID = new Map(items.map((it) => [view(it).id, it]));
      const terms = words(res.query || p.query);
      const from = p.offset + 1, to = p.offset + res.hits.length;
      const how = res.ranking ? `ranked by ${res.ranking}` : (res.mode === 'recent' ? 'newest first (no text)' : '');
      clear(out).append(
        el('p', { class: 'muted', id: 'results-info' }, res.hits.length ? `Hits ${from}–${to}` : 'No hits', how ? ' · ' + how : '',
          res.mode && res.mode !== 'recent' && res.mode !== 'any' ? ` · matched ${res.mode === 'all' ? 'every word' : res.mode}` : ''),
        el('ol', { class: 'hits', start: String(from) }, res.hits.map((h) => hitRow(h, byID.get(h.id), terms))),
        el('div', { class: 'row pager' },
          el('button', { type: 'button', class: 'ghost', id: 's-prev', disabled: offset === 0, text: '← Previous',
            onclick: () => { offset = Math.max(0, offset - PAGE); run(typed); } }),
          el('button', { type: 'button', class: 'ghost', id: 's-next', disabled: res.hits.length < PAGE, text: 'Next →',
            onclick: () => { offset += PAGE; run(typed); } })));
    } catch (err) { clear(out).append(errorBox(err)); }
  };
  const form = el('form', { class: 'filters search', role: 'search', onsubmit: (e) => { e.preventDefault(); clearTimeout(typing); offset = 0; run(); } },
    el('label', { for: 's-query', class: 'grow' }, el('span', { text: 'Search' }), q),
    el('button', { type: 'submit', text: 'Search' }),
    el('div', { class: 'break' }),
    lab('Project', project), lab('Device', device), lab('Agent', platform), lab('Type', type), lab('File', file),
    lab('Since', since), lab('Until', until), lab('Mode', mode), lab('Order', order));
  for (const s of [project, device, platform, type, since, until, mode, order]) s.addEventListener('change', () => { if (q.value || out.firstChild) { offset = 0; run(); } });
  let typing = 0;
  q.addEventListener('input', () => {
    clearTimeout(typing);
    if (q.value.trim().length < 2) return;
    typing = setTimeout(() => { offset = 0; run(true); }, 250);
  });
  main.append(el('h1', { text: 'Search' }), form, out);
  get('/api/viewer/facets').then((fc) => {
    for (const p of fc.projects) project.append(el('option', { value: p, text: p }));
    for (const d of fc.devices) device.append(el('option', { value: d.origin, text: originLabel(d.name, d.origin) }));
    for (const p of fc.platforms) platform.append(el('option', { value: p, text: p }));
  }, () => {});
  q.focus();
}

function lab(text, input) {
  return el('label', { for: input.id }, el('span', { text }), input);
}

// words are the query's words as the snippet marks them.
function words(query) {
  return [...new Set((query || '').toLowerCase().split(/[^\p{L}\p{N}_]+/u).filter((w) => w.length > 1))];
}

// snippet is the part of a record's text around the first matched word, with every matched
// word marked (<mark>, built as DOM: the text is never parsed as HTML).
function snippet(item, terms) {
  if (!item) return null;
  const o = item.observation, s = item.summary, p = item.prompt;
  const text = (o ? [o.subtitle, o.narrative, ...(o.facts || [])]
    : s ? SECTIONS.map(([k]) => s[k]) : [p?.text]).filter(Boolean).join(' — ').replace(/\s+/g, ' ');
  if (!text) return null;
  const low = text.toLowerCase();
  let at = -1;
  for (const t of terms) { const i = low.indexOf(t); if (i >= 0 && (at < 0 || i < at)) at = i; }
  const start = at > 60 ? text.lastIndexOf(' ', at - 40) + 1 : 0;
  const part = text.slice(start, start + 220);
  const box = el('p', { class: 'snippet' }, start > 0 ? '…' : '');
  if (terms.length) {
    const re = new RegExp('(' + terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|') + ')', 'giu');
    let last = 0;
    for (const m of part.matchAll(re)) {
      box.append(part.slice(last, m.index), el('mark', { text: m[0] }));
      last = m.index + m[0].length;
    }
    box.append(part.slice(last));
  } else box.append(part);
  if (start + 220 < text.length) box.append('…');
  return box;
}

function hitRow(h, item, terms) {
  const type = typeName(h.type);
  return el('li', { class: 'hit t-' + type + (h.anchor ? ' anchor' : ''), tabindex: '0', dataset: { id: h.id } },
    el('div', { class: 'head' },
      el('span', { class: 'type', title: type }, icon(type)),
      el('a', { href: '#/record/' + encodeURIComponent(h.id) + '/timeline', text: h.title || '(untitled)' })),
    terms ? snippet(item, terms) : null,
    el('div', { class: 'foot' }, el('span', { class: 'kind', text: type }),
      h.project ? el('span', { class: 'chip', text: h.project }) : null,
      h.device || h.origin ? el('span', { class: 'chip', title: h.origin ? 'origin ' + h.origin : '', text: originLabel(h.device, h.origin) }) : null,
      h.platform ? el('span', { class: 'chip', text: h.platform }) : null,
      el('span', { class: 'spacer' }),
      el('code', { class: 'short', title: h.id, text: '#' + (h.short || h.id) }),
      el('time', { text: when(h.time) })));
}

// recordPage shows one record; with "timeline" the records around it first.
export async function recordPage(main, [id, sub]) {
  const back = history.length > 1 ? el('a', { href: '#', onclick: (e) => { e.preventDefault(); history.back(); }, text: '← Back' })
    : el('a', { href: '#/feed', text: '← Feed' });
  main.append(el('p', {}, back));
  try {
    if (sub === 'timeline') {
      const tl = await get('/api/timeline', { anchor: id, before: 8, after: 8 });
      const anchor = tl.items.find((h) => h.anchor);
      main.append(el('h1', { text: 'Timeline' }), el('p', { class: 'muted', text: 'Records around #' + (anchor?.short || id) + ' — open one to read it whole.' }),
        el('ol', { class: 'hits timeline', id: 'timeline' }, tl.items.map((h) => {
          const row = hitRow(h, null, null);
          row.querySelector('a').href = '#/record/' + encodeURIComponent(h.id);
          return row;
        })));
      return;
    }
    const [item] = await records([id]);
    if (!item) {
      main.append(el('p', { class: 'error', text: 'No record ' + id + ' (never stored, or forgotten).' }));
      return;
    }
    const c = card(item, () => { location.hash = '#/feed'; }, true);
    c.classList.add('full');
    const o = item.observation;
    const r = o || item.summary || item.prompt;
    main.append(el('h1', { text: typeName(view(item).type) === 'summary' ? 'Summary' : 'Record' }), c,
      el('dl', { class: 'props', id: 'record' },
        prop('ID', el('code', { text: id }), el('button', { type: 'button', class: 'ghost small', onclick: () => copy(id), text: 'Copy' })),
        item.short ? prop('Short ID', el('code', { text: item.short })) : null,
        prop('Kind', item.kind), prop('Session', r.session_id),
        o?.tool_name ? prop('Tool', o.tool_name) : null,
        o?.concepts?.length ? prop('Concepts', o.concepts.join(', ')) : null,
        o?.model ? prop('Model', o.model) : null,
        prop('Origin', r.origin || '')));
  } catch (err) { main.append(errorBox(err)); }
}

function prop(k, ...v) {
  return el('div', {}, el('dt', { text: k }), el('dd', {}, ...v));
}

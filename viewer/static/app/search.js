// Search (/api/search) → a hit's timeline (/api/timeline) → the full record.
import { get, records } from './api.js';
import { el, clear, when, errorBox, copy } from './ui.js';
import { card } from './cards.js';
import { lastStatus } from './main.js';

export function searchPage(main) {
  const q = el('input', { id: 's-query', type: 'search', name: 'query', placeholder: 'what did we decide about…', autocomplete: 'off' });
  const project = el('input', { id: 's-project', name: 'project', placeholder: 'any project', autocomplete: 'off' });
  const device = el('input', { id: 's-device', name: 'device', placeholder: 'any device', autocomplete: 'off' });
  const type = el('select', { id: 's-type', name: 'type' }, ['all', 'observations', 'sessions', 'prompts'].map((t) => el('option', { value: t, text: t })));
  const mode = el('select', { id: 's-mode', name: 'mode' }, el('option', { value: '', text: 'best' }),
    ['fts', 'vector', 'hybrid'].map((m) => el('option', { value: m, text: m })));
  const order = el('select', { id: 's-order', name: 'order' }, ['relevance', 'newest', 'oldest'].map((o) => el('option', { value: o, text: o })));
  // Vector and hybrid need embeddings: without them the node answers fts whatever is asked.
  const embed = lastStatus?.embed?.state || '';
  if (embed.startsWith('off')) { mode.disabled = true; mode.title = 'embeddings are off: ' + embed; }
  const out = el('div', { id: 'results', class: 'results', 'aria-live': 'polite' });
  const form = el('form', { class: 'filters', role: 'search', onsubmit: async (e) => {
    e.preventDefault();
    clear(out).append(el('p', { class: 'muted', text: 'Searching…' }));
    try {
      const res = await get('/api/search', { query: q.value, project: project.value.trim(), device: device.value.trim(), type: type.value, mode: mode.value, order: order.value, limit: 50 });
      clear(out).append(el('p', { class: 'muted', text: `${res.hits.length} hits · ${res.ranking || res.mode}` }));
      out.append(el('ol', { class: 'hits' }, res.hits.map(hitRow)));
    } catch (err) { clear(out).append(errorBox(err)); }
  } },
  el('label', { for: 's-query', class: 'grow' }, el('span', { text: 'Search' }), q),
  lab('Project', project), lab('Device', device), lab('Type', type), lab('Mode', mode), lab('Order', order),
  el('button', { type: 'submit', text: 'Search' }));
  main.append(el('h1', { text: 'Search' }), form, out);
  q.focus();
}

function lab(text, input) {
  return el('label', { for: input.id }, el('span', { text }), input);
}

function hitRow(h) {
  return el('li', { class: 'hit' + (h.anchor ? ' anchor' : ''), tabindex: '0', dataset: { id: h.id } },
    el('span', { class: 'badge t-' + h.type, text: h.type }),
    el('a', { href: '#/record/' + encodeURIComponent(h.id) + '/timeline', text: h.title || '(untitled)' }),
    el('span', { class: 'muted', text: ` ${h.project} · ${h.device || ''} · ${when(h.time)}` }));
}

// recordPage shows one record; with "timeline" the records around it first.
export async function recordPage(main, [id, sub]) {
  main.append(el('p', {}, el('a', { href: '#/search', text: '← Search' })));
  try {
    if (sub === 'timeline') {
      const tl = await get('/api/timeline', { anchor: id, before: 8, after: 8 });
      main.append(el('h1', { text: 'Timeline' }), el('p', { class: 'muted', text: 'Records around ' + id + ' — open one to read it whole.' }),
        el('ol', { class: 'hits timeline', id: 'timeline' }, tl.items.map((h) => {
          const row = hitRow(h);
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
    const c = card(item, () => { location.hash = '#/feed'; });
    c.classList.add('full');
    for (const d of c.querySelectorAll('details')) d.open = true;
    const o = item.observation;
    main.append(el('h1', { text: 'Record' }), c,
      el('dl', { class: 'props', id: 'record' },
        prop('ID', el('code', { text: id }), el('button', { type: 'button', class: 'ghost', onclick: () => copy(id), text: 'Copy' })),
        prop('Kind', item.kind), prop('Session', (o || item.summary || item.prompt).session_id),
        o?.tool_name ? prop('Tool', o.tool_name) : null,
        o?.concepts?.length ? prop('Concepts', o.concepts.join(', ')) : null,
        o?.model ? prop('Model', o.model) : null,
        prop('Origin', (o || item.summary || item.prompt).origin || '')));
  } catch (err) { main.append(errorBox(err)); }
}

function prop(k, ...v) {
  return el('div', {}, el('dt', { text: k }), el('dd', {}, ...v));
}

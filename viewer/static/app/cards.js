// Record cards (feed, search results, timeline) and the actions on a record.
import { post } from './api.js';
import { el, when, copy, confirmDialog, toast } from './ui.js';

// itemFacts reduces a full record (apitype.Item) to what a card shows.
export function view(item) {
  const o = item.observation, s = item.summary, p = item.prompt;
  const r = o || s || p || {};
  const v = {
    id: r.id, kind: item.kind, session: r.session_id, project: r.project, time: r.created_at,
    device: item.device || short(r.origin), platform: item.platform || r.platform || '',
    supersededBy: item.superseded_by || [], corrects: item.corrects || [],
  };
  if (o) {
    Object.assign(v, { type: o.type, title: o.title, subtitle: o.subtitle, facts: o.facts || [], narrative: o.narrative,
      files: [...(o.files_modified || []).map((f) => '✎ ' + f), ...(o.files_read || []).map((f) => f)] });
  } else if (s) {
    Object.assign(v, { type: 'summary', title: s.request || 'Session summary', subtitle: s.completed,
      facts: [['Investigated', s.investigated], ['Learned', s.learned], ['Completed', s.completed], ['Next', s.next_steps], ['Notes', s.notes]]
        .filter(([, t]) => t).map(([k, t]) => k + ': ' + t), narrative: '', files: [] });
  } else if (p) {
    Object.assign(v, { type: 'prompt', title: p.text.length > 160 ? p.text.slice(0, 160) + '…' : p.text,
      subtitle: p.prompt_number ? 'prompt #' + p.prompt_number : '', facts: [], narrative: p.text.length > 160 ? p.text : '', files: [] });
  }
  return v;
}

function short(origin) {
  return origin ? origin.slice(-8) : '';
}

// links is a card's line naming its corrections (short IDs), or null.
function links(v) {
  const parts = [];
  if (v.supersededBy.length) parts.push('superseded by ' + v.supersededBy.join(', '));
  if (v.corrects.length) parts.push('corrects ' + v.corrects.join(', '));
  return parts.length ? el('p', { class: 'links', text: parts.join(' · ') }) : null;
}

// correctDialog asks what is true about v (a wrong or outdated observation) and stores it
// as a correction that supersedes v on every device; it resolves to the node's answer, or
// null when cancelled.
function correctDialog(v) {
  return new Promise((resolve) => {
    let done = null;
    const text = el('textarea', { id: 'c-text', rows: '5', required: true, placeholder: 'What is true instead' });
    const err = el('p', { class: 'error', role: 'alert' });
    const dlg = el('dialog', { class: 'dialog', 'aria-labelledby': 'correct-title' },
      el('form', { method: 'dialog', onsubmit: async (e) => {
        e.preventDefault();
        try {
          done = await post('/api/correct', { id: v.id, text: text.value });
          dlg.close();
        } catch (x) { err.textContent = x.message; }
      } },
      el('h2', { id: 'correct-title', text: 'Correct this memory' }),
      el('p', { text: `“${v.title}” will leave every later session's context and search, on every device; the record stays readable, marked as superseded.` }),
      el('label', { for: 'c-text' }, el('span', { text: 'What is true' }), text), err,
      el('div', { class: 'row end' },
        el('button', { type: 'button', class: 'ghost', onclick: () => dlg.close(), text: 'Cancel' }),
        el('button', { type: 'submit', 'data-correct': '', text: 'Save correction' }))));
    dlg.addEventListener('close', () => { resolve(done); dlg.remove(); });
    document.body.append(dlg);
    dlg.showModal();
    text.focus();
  });
}

// card renders one record; onForgotten is called after a confirmed forget.
export function card(item, onForgotten) {
  const v = view(item);
  const facts = v.facts.length ? el('details', { class: 'facts' }, el('summary', { text: `Facts (${v.facts.length})` }),
    el('ul', {}, v.facts.map((f) => el('li', { text: f })))) : null;
  const narrative = v.narrative ? el('details', { class: 'narrative' }, el('summary', { text: 'Narrative' }), el('p', { text: v.narrative })) : null;
  const files = v.files.length ? el('ul', { class: 'files', 'aria-label': 'Files' }, v.files.slice(0, 8).map((f) => el('li', { text: f })),
    v.files.length > 8 ? el('li', { text: `+${v.files.length - 8} more` }) : null) : null;
  const forget = async () => {
    if (!(await confirmDialog('Forget this record?', `“${v.title}” is purged on every device. This cannot be undone.`, 'Forget'))) return;
    try {
      await post('/api/forget', { ids: [v.id] });
      toast('Forgotten on every device');
      onForgotten?.(v.id);
    } catch (err) { toast(err.message, true); }
  };
  const forgetSession = async () => {
    if (!(await confirmDialog('Forget the whole session?', `Every record of session ${v.session} is purged on every device. This cannot be undone.`, 'Forget session'))) return;
    try {
      await post('/api/forget', { ids: ['S' + v.session] });
      toast('Session forgotten on every device');
    } catch (err) { toast(err.message, true); }
  };
  const correct = async () => {
    const r = await correctDialog(v);
    if (!r) return;
    toast(`Corrected: ${r.new_short || r.new} replaces ${r.old_short || r.old} on every device`);
    v.supersededBy = [...v.supersededBy, r.new_short || r.new];
    art.classList.add('superseded');
    art.querySelector('.links')?.remove();
    art.querySelector('.actions').before(links(v));
  };
  const art = el('article', { class: 'card' + (v.supersededBy.length ? ' superseded' : ''), tabindex: '0', 'aria-label': `${v.type}: ${v.title || '(untitled)'}`, dataset: { id: v.id, session: v.session || '', kind: v.kind } },
    el('div', { class: 'meta' },
      el('span', { class: 'badge t-' + (v.type || 'other'), text: v.type }),
      el('span', { class: 'project', text: v.project }),
      v.device ? el('span', { class: 'device', title: 'device', text: '⌂ ' + v.device }) : null,
      v.platform ? el('span', { class: 'platform', text: v.platform }) : null,
      el('time', { datetime: new Date(v.time).toISOString(), text: when(v.time) })),
    el('h3', { class: 'title' }, el('a', { href: '#/record/' + encodeURIComponent(v.id), text: v.title || '(untitled)' })),
    v.subtitle ? el('p', { class: 'subtitle', text: v.subtitle }) : null,
    facts, narrative, files, links(v),
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'ghost', 'data-act': 'copy', onclick: () => copy(v.id), 'aria-label': 'Copy ID ' + v.id, text: 'Copy ID' }),
      el('a', { class: 'button ghost', href: '#/record/' + encodeURIComponent(v.id) + '/timeline', text: 'Timeline' }),
      v.kind === 'observation' ? el('button', { type: 'button', class: 'ghost', 'data-act': 'correct', onclick: correct, text: 'Correct…' }) : null,
      el('button', { type: 'button', class: 'ghost danger', 'data-act': 'forget', onclick: forget, text: 'Forget' }),
      v.session && v.kind !== 'summary' ? el('button', { type: 'button', class: 'ghost danger', onclick: forgetSession, text: 'Forget session' }) : null));
  return art;
}

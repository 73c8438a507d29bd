// Record cards (feed, search results, record page) and the actions on a record. A card is
// compact (type icon, title, subtitle, chips, short ID and time): a feed watched all day
// shows many at once; its facts, narrative, files or summary sections open in place, and
// its actions sit in a menu where forgetting is never the loudest thing on screen.
import { post } from './api.js';
import { el, when, copy, confirmDialog, toast } from './ui.js';
import { icon, typeName } from './icons.js';

// SECTIONS are a summary's labelled sections, in the order a session went.
export const SECTIONS = [['request', 'Request'], ['investigated', 'Investigated'], ['learned', 'Learned'],
  ['completed', 'Completed'], ['next_steps', 'Next steps'], ['notes', 'Notes']];

// ClaudeMem is the origin of records imported from claude-mem (importer.ClaudeMemOrigin).
const ClaudeMem = 'claude-mem';

// view reduces a full record (apitype.Item) to what a card shows.
export function view(item) {
  const o = item.observation, s = item.summary, p = item.prompt;
  const r = o || s || p || {};
  const v = {
    id: r.id, short: item.short || r.id, kind: item.kind, session: r.session_id, project: r.project, time: r.created_at,
    device: originLabel(item.device, r.origin), origin: r.origin || '', platform: item.platform || '',
    supersededBy: item.superseded_by || [], corrects: item.corrects || [],
    facts: [], narrative: '', files: [], sections: [],
  };
  if (o) {
    Object.assign(v, { type: o.type, title: o.title, subtitle: o.subtitle, facts: o.facts || [], narrative: o.narrative || '',
      files: [...(o.files_modified || []).map((f) => '✎ ' + f), ...(o.files_read || [])] });
  } else if (s) {
    Object.assign(v, { type: 'summary', title: s.request || 'Session summary', subtitle: s.completed || s.learned || '',
      sections: SECTIONS.filter(([k]) => s[k]).map(([k, label]) => [k, label, s[k]]) });
  } else if (p) {
    Object.assign(v, { type: 'prompt', title: p.text, subtitle: p.prompt_number ? 'prompt #' + p.prompt_number : '',
      narrative: p.text.length > 160 ? p.text : '' });
  }
  return v;
}

// originLabel names where a record came from: the device's name when known, claude-mem's
// import as such, else the origin's start (as the CLI's index shows it) — never a cut word.
export function originLabel(device, origin) {
  if (device) return device;
  if (!origin) return '';
  if (origin === ClaudeMem) return 'claude-mem import';
  if (origin.length <= 24) return origin;
  // A device's key (base58, no word in it) as the CLI's index clips it; a long name at the
  // end of a word.
  if (/^[1-9A-HJ-NP-Za-km-z]+$/.test(origin)) return origin.slice(0, 11) + '…';
  const cut = origin.slice(0, 24).search(/[-_. ][^-_. ]*$/);
  return origin.slice(0, cut > 8 ? cut : 24) + '…';
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

// details is a card's expanded part: a summary's labelled sections, or an observation's
// facts, narrative and files.
function details(v) {
  const box = el('div', { class: 'more' });
  for (const [k, label, text] of v.sections) {
    box.append(el('section', { class: 'sec s-' + k }, el('h4', {}, icon(k), label), el('p', { text })));
  }
  if (v.facts.length) box.append(el('section', { class: 'sec' }, el('h4', { text: 'Facts' }), el('ul', {}, v.facts.map((f) => el('li', { text: f })))));
  if (v.narrative) box.append(el('section', { class: 'sec' }, el('h4', { text: v.kind === 'prompt' ? 'Prompt' : 'Narrative' }), el('p', { text: v.narrative })));
  if (v.files.length) {
    box.append(el('section', { class: 'sec' }, el('h4', { text: 'Files' }), el('ul', { class: 'files', 'aria-label': 'Files' },
      v.files.slice(0, 12).map((f) => el('li', { text: f })), v.files.length > 12 ? el('li', { text: `+${v.files.length - 12} more` }) : null)));
  }
  return box;
}

// hasDetails reports whether a card has anything to expand.
function hasDetails(v) {
  return v.sections.length > 0 || v.facts.length > 0 || !!v.narrative || v.files.length > 0;
}

// chips are the card's project, device and platform.
function chips(v) {
  return [
    v.project ? el('span', { class: 'chip', title: 'project', text: v.project }) : null,
    v.device ? el('span', { class: 'chip', title: v.origin ? 'origin ' + v.origin : 'device', text: v.device }) : null,
    v.platform ? el('span', { class: 'chip', title: 'coding agent', text: v.platform }) : null,
  ];
}

// menu is the one open action menu (at most one on the page).
let openMenu = null;

function closeMenu(focusBack) {
  if (!openMenu) return;
  const { box, button } = openMenu;
  openMenu = null;
  box.remove();
  button.setAttribute('aria-expanded', 'false');
  if (focusBack) button.focus();
}

// showMenu opens the action menu of a card below its button: arrow keys walk it, Esc and a
// click elsewhere close it.
function showMenu(button, actions) {
  const again = openMenu?.button === button;
  closeMenu(false);
  if (again) return;
  const items = actions.filter(Boolean).map(([label, act, fn, cls]) => el('button', { type: 'button', role: 'menuitem', class: cls || '', 'data-act': act,
    onclick: () => { closeMenu(true); fn(); } }, label));
  const box = el('div', { class: 'menu', role: 'menu', 'aria-label': 'Record actions', onkeydown: (e) => {
    const i = items.indexOf(document.activeElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      e.stopPropagation();
      items[(i + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length].focus();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      closeMenu(true);
    } else if (e.key === 'Tab') closeMenu(false);
  } }, items);
  // Fixed on the page, not inside the card: a card off screen is not painted
  // (content-visibility), and its paint containment would clip the menu.
  document.body.append(box);
  const r = button.getBoundingClientRect();
  box.style.right = Math.max(8, innerWidth - r.right) + 'px';
  if (r.bottom + box.offsetHeight + 8 > innerHeight) box.style.bottom = (innerHeight - r.top + 4) + 'px';
  else box.style.top = (r.bottom + 4) + 'px';
  button.setAttribute('aria-expanded', 'true');
  openMenu = { box, button };
  items[0].focus();
}
addEventListener('click', (e) => {
  if (openMenu && !openMenu.box.contains(e.target) && !openMenu.button.contains(e.target)) closeMenu(false);
});
addEventListener('hashchange', () => closeMenu(false));
addEventListener('scroll', () => closeMenu(false), { passive: true });

// card renders one record; onForgotten is called after a confirmed forget. open draws it
// expanded (the record page).
export function card(item, onForgotten, open) {
  const v = view(item);
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
    art.querySelector('.foot').before(links(v));
  };
  // pin puts the memory at the head of every session-start context of its project (memnode
  // pin; the pin reaches every device); a second use takes it off.
  const pin = async () => {
    try {
      const r = await post('/api/pin', { id: v.id, pinned: !v.pinned });
      v.pinned = r.pinned;
      if (pinAct) pinAct[0] = v.pinned ? 'Unpin' : 'Pin to every session';
      toast(r.pinned ? `Pinned: every session of ${r.project} starts with it` : 'Unpinned');
    } catch (err) { toast(err.message, true); }
  };
  let more = null;
  const expand = () => {
    const on = !art.classList.contains('open');
    art.classList.toggle('open', on);
    toggle?.setAttribute('aria-expanded', String(on));
    if (on && !more) { more = details(v); art.querySelector('.foot').before(more); }
    if (more) more.hidden = !on;
  };
  const timeline = () => { location.hash = '#/record/' + encodeURIComponent(v.id) + '/timeline'; };
  const pinAct = v.kind === 'observation' ? [v.pinned ? 'Unpin' : 'Pin to every session', 'pin', pin] : null;
  const actions = [
    ['Copy ID ' + v.short, 'copy', () => copy(v.short)],
    ['Timeline', 'timeline', timeline],
    v.kind === 'observation' ? ['Correct…', 'correct', correct] : null,
    pinAct,
    ['Forget…', 'forget', forget, 'quiet-danger'],
    v.session && v.kind !== 'summary' ? ['Forget session…', 'forget-session', forgetSession, 'quiet-danger'] : null,
  ];
  const type = typeName(v.type);
  const toggle = hasDetails(v) ? el('button', { type: 'button', class: 'icon-btn expand', 'data-act': 'expand', 'aria-expanded': 'false',
    'aria-label': 'Details', title: 'Details (x)', onclick: expand }, icon('expand')) : null;
  const time = new Date(v.time);
  const art = el('article', { class: 'card t-' + type + (v.supersededBy.length ? ' superseded' : ''), tabindex: '0',
    'aria-label': `${type}: ${v.title || '(untitled)'}`, dataset: { id: v.id, session: v.session || '', kind: v.kind } },
    el('div', { class: 'head' },
      el('span', { class: 'type', title: type }, icon(type)),
      el('h3', { class: 'title' }, el('a', { href: '#/record/' + encodeURIComponent(v.id), text: v.title || '(untitled)' })),
      toggle),
    v.subtitle ? el('p', { class: 'subtitle', text: v.subtitle }) : null,
    links(v),
    el('div', { class: 'foot' },
      el('span', { class: 'kind', text: type }), chips(v),
      el('span', { class: 'spacer' }),
      el('code', { class: 'short', title: v.id, text: '#' + v.short }),
      el('time', { datetime: isNaN(time) ? '' : time.toISOString(), title: isNaN(time) ? '' : time.toString(), text: when(v.time) }),
      el('button', { type: 'button', class: 'icon-btn', 'data-act': 'menu', 'aria-haspopup': 'menu', 'aria-expanded': 'false',
        'aria-label': 'Actions', title: 'Actions', onclick: (e) => showMenu(e.currentTarget, actions) }, icon('more'))));
  // The keyboard's shortcuts (c, e, #, x) call the actions directly.
  art.act = { copy: () => copy(v.short), timeline, correct: v.kind === 'observation' ? correct : null, forget, expand: toggle ? expand : null };
  if (open && toggle) expand();
  return art;
}

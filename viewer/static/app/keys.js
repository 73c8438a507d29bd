// Keyboard shortcuts: the viewer is usable without a mouse. A shortcut never fires while the
// person types (input, textarea, select, editable text) or while a dialog is open; Esc in a
// field leaves it, so the shortcuts work again.
import { el } from './ui.js';

// SHORTCUTS is the one list the handler and the help overlay (?) both read.
const SHORTCUTS = [
  ['/', 'Search (focus the search box)'],
  ['j / k', 'Next / previous card'],
  ['Enter or o', 'Open the selected card'],
  ['t', 'Timeline of the selected card'],
  ['x', 'Expand / collapse its details (facts, narrative, files, summary sections)'],
  ['c', 'Copy its ID'],
  ['e', 'Correct it: say what is true instead'],
  ['#', 'Forget it (asks first)'],
  ['Esc', 'Leave a field, close a dialog, go back'],
  ['g f / g s / g d', 'Feed / Search / Devices'],
  ['g t / g c / g l', 'Team / Settings / Logs'],
  ['?', 'This help'],
];
const GO = { f: 'feed', s: 'search', d: 'devices', t: 'team', c: 'settings', l: 'logs' };
// ITEMS are what j/k walk: feed cards, search hits, timeline rows, the record page's card.
const ITEMS = '#main .card[data-id], #main .hit[data-id]';
const PREFIX_MS = 1500;

// swallow is the key of the shortcut just handled: its keypress is dropped too, or a page
// that moved the focus into a field (/ and g s focus the search box) gets the character.
const state = { g: 0, index: -1, wanted: '', previous: '', swallow: '' };

function typing(t) {
  return t instanceof Element && (t.isContentEditable || !!t.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]'));
}

function items() {
  return [...document.querySelectorAll(ITEMS)];
}

// current is the item holding the focus, else the one last selected.
function current(list) {
  const a = document.activeElement;
  const i = list.findIndex((x) => x === a || x.contains(a));
  return i >= 0 ? i : list.findIndex((x) => x.classList.contains('selected'));
}

// select moves the selection (and the focus, which shows it) to list[i].
function select(list, i) {
  if (!list.length) return;
  i = Math.max(0, Math.min(list.length - 1, i));
  for (const x of document.querySelectorAll('#main .selected')) x.classList.remove('selected');
  const it = list[i];
  it.classList.add('selected');
  it.focus({ preventScroll: true });
  it.scrollIntoView({ block: 'nearest' });
  state.index = i;
  state.wanted = it.dataset.id || '';
}

function move(delta) {
  const list = items();
  let i = current(list);
  if (i < 0) {
    const w = list.findIndex((x) => x.dataset.id === state.wanted);
    i = w >= 0 ? w : (state.index >= 0 ? Math.min(state.index, list.length - 1) : (delta > 0 ? -1 : list.length));
    if (w >= 0 || state.index >= 0) delta = 0;
  }
  select(list, i + delta);
}

function selected() {
  const list = items();
  const i = current(list);
  return i >= 0 ? list[i] : null;
}

// reselect puts the selection back on the card opened last, once its list is drawn again
// (Esc from a record returns to the same place in the feed).
export function reselect() {
  if (!state.wanted || !document.querySelector(ITEMS)) return;
  const list = items();
  const i = list.findIndex((x) => x.dataset.id === state.wanted);
  if (i >= 0 && (document.activeElement === document.body || document.activeElement === document.getElementById('main'))) select(list, i);
}

function open(it, timeline) {
  const link = timeline ? it.querySelector('a[href$="/timeline"]') : it.querySelector('a[href]');
  if (link) location.hash = link.getAttribute('href');
}

function back() {
  if (state.previous) history.back();
  else location.hash = '#/feed';
}

function focusSearch() {
  const q = document.getElementById('s-query');
  if (q) { q.focus(); q.select(); } else location.hash = '#/search'; // the search page focuses its box
}

function helpDialog() {
  let dlg = document.getElementById('keys-help');
  if (!dlg) {
    dlg = el('dialog', { id: 'keys-help', class: 'dialog', 'aria-labelledby': 'keys-help-title' },
      el('h2', { id: 'keys-help-title', text: 'Keyboard shortcuts' }),
      el('table', { class: 'keys' }, el('tbody', {}, SHORTCUTS.map(([k, what]) => el('tr', {},
        el('th', { scope: 'row' }, k.split(' ').flatMap((p, i) => [i ? ' ' : null, (p === '/' && k !== '/') || p === 'or' ? p : el('kbd', { text: p })])),
        el('td', { text: what }))))),
      el('p', { class: 'muted', text: 'Shortcuts are off while you type in a field; Esc leaves the field. Tab walks every control.' }),
      el('div', { class: 'row end' }, el('button', { type: 'button', onclick: () => dlg.close(), text: 'Close' })));
    document.body.append(dlg);
  }
  if (!dlg.open) dlg.showModal();
}

function onKey(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
  if (typing(e.target)) {
    if (e.key === 'Escape' && !e.target.closest('dialog')) e.target.blur();
    return;
  }
  if (document.querySelector('dialog[open]')) return; // the dialog has the keyboard (Esc closes it)
  const k = e.key;
  if (state.g && Date.now() - state.g < PREFIX_MS) {
    state.g = 0;
    if (GO[k]) { handled(e); location.hash = '#/' + GO[k]; }
    return;
  }
  state.g = 0;
  const it = selected();
  switch (k) {
    case 'g': state.g = Date.now(); break;
    case '/': focusSearch(); break;
    case '?': helpDialog(); break;
    case 'j': case 'ArrowDown': if (k === 'j' || it) move(1); else return; break;
    case 'k': case 'ArrowUp': if (k === 'k' || it) move(-1); else return; break;
    case 'Enter': case 'o':
      // Enter on a link or button inside the card does what that control does.
      if (!it || (k === 'Enter' && e.target !== it)) return;
      open(it, false);
      break;
    case 't': if (!it) return; if (it.act) it.act.timeline(); else open(it, true); break;
    case 'x': if (!it?.act?.expand) return; it.act.expand(); break;
    case 'c': if (!it?.act) return; it.act.copy(); break;
    case 'e': if (!it?.act?.correct) return; it.act.correct(); break;
    case '#': if (!it?.act) return; it.act.forget(); break;
    case 'Escape':
      if (location.hash.startsWith('#/record/')) back();
      else if (it) { it.classList.remove('selected'); it.blur(); }
      break;
    default: return;
  }
  handled(e);
}

function handled(e) {
  e.preventDefault();
  state.swallow = e.key;
}

// install wires the shortcuts once for the page's life.
export function install() {
  addEventListener('keydown', onKey);
  addEventListener('keypress', (e) => { if (state.swallow && e.key === state.swallow) e.preventDefault(); }, true);
  addEventListener('keyup', () => { state.swallow = ''; });
  addEventListener('hashchange', (e) => { state.previous = new URL(e.oldURL).hash; state.index = -1; });
  document.getElementById('help')?.addEventListener('click', helpDialog);
}

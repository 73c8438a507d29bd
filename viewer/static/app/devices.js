// This device and its peers; invites, joins and removals. And the team page.
import { get, post } from './api.js';
import { el, clear, when, confirmDialog, errorBox, toast } from './ui.js';

export async function devicesPage(main) {
  const table = el('div', { id: 'devices' });
  main.append(el('h1', { text: 'Devices' }), table, inviteBox(), joinBox(() => load()));
  // Only the table refreshes: an invite code on screen stays until the page is left.
  async function load() {
    try {
      const st = await get('/api/peers');
      clear(table).append(peersTable(st, load));
    } catch (err) { clear(table).append(errorBox(err)); }
  }
  await load();
  const t = setInterval(load, 3000);
  return () => clearInterval(t);
}

function peersTable(st, reload) {
  const devices = st.devices || [];
  return el('table', { class: 'table', id: 'peers' },
    el('caption', {}, 'Group ', el('code', { text: (st.group_id || '').slice(0, 12) }), st.removed_by ? ` — removed by ${st.removed_by}: run memnode peers leave` : '',
      catchUp(st)),
    el('thead', {}, el('tr', {}, ['Device', 'State', 'Addresses', 'Last sync', 'To pull', 'To send', ''].map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, devices.map((m) => el('tr', { dataset: { peer: m.peer_id } },
      el('th', { scope: 'row' }, el('span', { text: m.name }), m.self ? el('span', { class: 'badge', text: 'this device' }) : null,
        el('div', { class: 'muted mono', title: m.peer_id, text: m.short_id || m.peer_id })),
      el('td', {}, el('span', { class: 'state s-' + m.state, text: m.state }), m.error ? el('div', { class: 'error', text: m.error }) : null),
      el('td', { class: 'mono' }, (m.addrs || []).slice(0, 3).map((a) => el('div', { text: a }))),
      el('td', { text: m.self ? '' : (m.last_sync ? when(Date.parse(m.last_sync)) : 'never') }),
      el('td', { text: m.self ? '' : (m.compared ? String(m.ops_ahead ?? 0) : 'unknown yet') }),
      el('td', { text: m.self ? '' : (m.compared ? String(m.ops_behind ?? 0) : 'unknown yet') }),
      el('td', {}, m.self ? null : el('button', { type: 'button', class: 'ghost danger', text: 'Remove', 'aria-label': 'Remove ' + m.name, onclick: async () => {
        if (!(await confirmDialog('Remove this device?', `${m.name} is revoked for good: it can no longer sync, and its later changes are dropped everywhere.`, 'Remove'))) return;
        try { await post('/api/peers/remove', { device: m.peer_id }); toast('Removed ' + m.name); reload(); } catch (err) { toast(err.message, true); }
      } }))))));
}

// catchUp is the caption's progress while this device catches up: ops here of ops known,
// or "unknown yet" before any peer has said what it holds (never "0 pending"), and the rows
// of a snapshot being installed (its ops count only once it is all in).
function catchUp(st) {
  const devices = st.devices || [];
  const snap = st.snapshot ? `snapshot: ${st.snapshot.rows} of ${st.snapshot.total} rows installed` : '';
  if (devices.length > 1 && !devices.some((m) => m.compared)) return el('div', { id: 'catch-up', text: 'Catching up: unknown yet (the first sync tells)' + (snap ? '; ' + snap : '') });
  if ((st.ops_known || 0) > (st.ops_held || 0)) return el('div', { id: 'catch-up', text: `Catching up: ${st.ops_held} of ${st.ops_known} ops here, ${st.ops_known - st.ops_held} to pull` + (snap ? '; ' + snap : '') });
  if (snap) return el('div', { id: 'catch-up', text: 'Catching up: ' + snap });
  return null;
}

function inviteBox() {
  const out = el('div', { id: 'invite', 'aria-live': 'polite' });
  return el('section', { class: 'panel' }, el('h2', { text: 'Add a device' }),
    el('p', { class: 'muted', text: 'An invite code works once and expires. It is shown here only once.' }),
    el('button', { type: 'button', id: 'invite-create', text: 'Create invite', onclick: async () => {
      try {
        const r = await post('/api/peers/invite', { ttl: '10m' });
        clear(out).append(el('p', {}, 'On the other device run:'), el('pre', { class: 'code', id: 'invite-code', text: 'memnode peers join ' + r.code }),
          el('p', { class: 'muted', text: 'Valid once, until ' + new Date(r.expires).toLocaleTimeString() + '.' }));
      } catch (err) { clear(out).append(errorBox(err)); }
    } }), out);
}

function joinBox(reload) {
  const code = el('input', { id: 'join-code', autocomplete: 'off', spellcheck: 'false', placeholder: 'MN1…' });
  const out = el('div', { 'aria-live': 'polite' });
  return el('section', { class: 'panel' }, el('h2', { text: 'Join another device’s group' }),
    el('form', { class: 'row', onsubmit: async (e) => {
      e.preventDefault();
      try { await post('/api/peers/join', { code: code.value.trim() }); code.value = ''; toast('Joined'); reload(); } catch (err) { clear(out).append(errorBox(err)); }
    } }, el('label', { for: 'join-code' }, el('span', { text: 'Code' }), code), el('button', { type: 'submit', text: 'Join' })), out);
}

// teamPage shows team memory (GET /api/team) once the node has it: status, shared
// projects, share/unshare.
export async function teamPage(main) {
  const body = el('div', { id: 'team' });
  main.append(el('h1', { text: 'Team' }), body);
  async function load() {
    let st;
    try {
      st = await get('/api/team');
    } catch (err) {
      clear(body).append(el('p', { class: 'muted', text: err.status === 503 || err.status === 404
        ? 'Team memory is off on this node. Join a team with memnode team join URL --user NAME; its status and shared projects then appear here.'
        : err.message }));
      return;
    }
    if (!st.joined) {
      clear(body).append(el('p', { class: 'muted', text: 'This device is in no team. memnode team join URL --user NAME joins one.' }));
      return;
    }
    const project = el('input', { id: 'team-project', autocomplete: 'off', placeholder: 'project' });
    const act = (path, name) => async () => {
      try { await post(path, { project: name }); toast('Done'); load(); } catch (err) { toast(err.message, true); }
    };
    clear(body).append(
      el('dl', { class: 'props' },
        ...[['Team', st.name], ['User', st.user + (st.admin ? ' (admin)' : '')], ['Cluster', (st.reachable ? 'reachable' : 'unreachable') + (st.leader ? ', leader ' + st.leader : '')],
          ['Members', String(st.members)], ['Push backlog', String(st.push_backlog)], ['Pull lag', st.pull_lag < 0 ? 'unknown' : String(st.pull_lag)],
          ['Rejected ops', String(st.rejected)], ['Last error', st.last_error || '—']]
          .map(([k, v]) => el('div', {}, el('dt', { text: k }), el('dd', { text: v || '' })))),
      el('h2', { text: 'Shared projects' }),
      el('ul', { id: 'team-shared' }, (st.shared || []).map((p) => el('li', {}, el('code', { text: p }), ' ',
        el('button', { type: 'button', class: 'ghost danger', text: 'Unshare', onclick: async () => {
          if (await confirmDialog('Stop sharing ' + p + '?', 'New records of this project stay on your devices; what was pushed stays on the cluster.', 'Unshare')) act('/api/team/unshare', p)();
        } })))),
      el('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); if (project.value.trim()) act('/api/team/share', project.value.trim())(); } },
        el('label', { for: 'team-project' }, el('span', { text: 'Share a project (its history too)' }), project), el('button', { type: 'submit', text: 'Share' })));
  }
  await load();
  const t = setInterval(load, 5000);
  return () => clearInterval(t);
}

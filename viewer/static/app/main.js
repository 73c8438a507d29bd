// The viewer's shell: hash router, one live stream (SSE) shared by the pages, theme.
import { get, APIError } from './api.js';
import { el, clear } from './ui.js';
import { feedPage } from './feed.js';
import { install as installKeys } from './keys.js';

// Only the feed is loaded with the page (it is the first paint); the other pages load
// when first opened.
const lazy = (module, name) => async () => (await import(module))[name];
const pages = {
  feed: async () => feedPage, search: lazy('./search.js', 'searchPage'), record: lazy('./search.js', 'recordPage'),
  devices: lazy('./devices.js', 'devicesPage'), team: lazy('./devices.js', 'teamPage'),
  settings: lazy('./settings.js', 'settingsPage'), logs: lazy('./logs.js', 'logsPage'),
};

// live fans the stream's events out to whatever page listens.
export const live = new EventTarget();
export let lastStatus = null;

function connect() {
  const es = new EventSource('/api/viewer/stream');
  const badge = document.getElementById('live');
  es.addEventListener('open', () => { badge.classList.add('on'); live.dispatchEvent(new CustomEvent('open')); });
  es.addEventListener('error', () => {
    badge.classList.remove('on');
    badge.textContent = 'reconnecting…';
    // The browser retries a dropped stream by itself but gives up on a refused one: the
    // node restarted, and its sessions went with it. Say so, or try again later.
    if (es.readyState === EventSource.CLOSED) {
      get('/api/status').then(() => setTimeout(connect, 3000), (err) => {
        // Down, or up but not ready yet (503): try again. Only a refused session ends it.
        if (!(err instanceof APIError) || (err.status !== 401 && err.status !== 403)) { setTimeout(connect, 3000); return; }
        removeEventListener('hashchange', route);
        loggedOut(err);
      });
    }
  });
  es.addEventListener('status', (e) => {
    lastStatus = JSON.parse(e.data);
    badge.textContent = statusLine(lastStatus);
    badge.title = statusTitle(lastStatus);
    live.dispatchEvent(new CustomEvent('status', { detail: lastStatus }));
  });
  es.addEventListener('change', (e) => live.dispatchEvent(new CustomEvent('change', { detail: JSON.parse(e.data) })));
  es.addEventListener('resync', () => live.dispatchEvent(new CustomEvent('resync')));
}

function statusLine(st) {
  if (st.error) return st.error;
  const q = st.queue || {};
  const parts = [`queue ${q.waiting ?? 0}`, q.waiting ? 'compressing' : 'idle', `${q.processed ?? 0} processed`];
  if (q.failures) parts.push(`${q.failures} failed`);
  if (st.storage && st.storage.state && st.storage.state !== 'ok') parts.push(st.storage.message || st.storage.state);
  if (st.capture && st.capture.length) parts.push('⏸ ' + st.capture.join('; ')); // memnode pause, capture: opt-in
  return '● live · ' + parts.join(' · ');
}

function statusTitle(st) {
  return [`compressor: ${st.compressor?.name ?? ''}`, `embeddings: ${st.embed?.state ?? ''}`, `sync: ${st.sync?.state ?? ''}`,
    `records: ${st.records?.observations ?? 0} observations, ${st.records?.summaries ?? 0} summaries, ${st.records?.prompts ?? 0} prompts`].join('\n');
}

let cleanup = null, routed = false, routes = 0, navFrom = 'feed';
async function route() {
  const n = ++routes;
  const [name, ...rest] = location.hash.replace(/^#\/?/, '').split('/');
  const page = await (pages[name] || pages.feed)();
  if (n !== routes) return; // the person went on while the page loaded
  const main = document.getElementById('main');
  if (cleanup) { cleanup(); cleanup = null; }
  clear(main);
  document.getElementById('toast').className = 'toast';
  // A record belongs to the page it was opened from (feed or search): that one stays lit.
  const nav = pages[name] ? (name === 'record' ? navFrom : name) : 'feed';
  if (name !== 'record') navFrom = nav;
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.page === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const done = (await page(main, rest.map(decodeURIComponent))) || null;
  if (n !== routes) { done?.(); return; } // a later route already drew its page
  cleanup = done;
  // A page switched from the keyboard starts the Tab order at its content, not the top.
  if (routed && document.activeElement === document.body) main.focus({ preventScroll: true });
  routed = true;
}

function theme() {
  const saved = localStorage.getItem('memnode-theme');
  if (saved) document.documentElement.dataset.theme = saved;
  document.getElementById('theme').addEventListener('click', () => {
    const dark = document.documentElement.dataset.theme
      ? document.documentElement.dataset.theme === 'dark'
      : matchMedia('(prefers-color-scheme: dark)').matches;
    document.documentElement.dataset.theme = dark ? 'light' : 'dark';
    localStorage.setItem('memnode-theme', document.documentElement.dataset.theme);
  });
}

function loggedOut(err) {
  const main = document.getElementById('main');
  if (cleanup) { cleanup(); cleanup = null; }
  clear(main).append(el('section', { class: 'login' },
    el('h1', { text: 'Not logged in' }),
    el('p', { text: err instanceof APIError && err.status !== 503
      ? 'Run memnode viewer in a terminal and open the one-time link it prints.'
      : 'The node is not ready: ' + err.message }),
    el('pre', { text: 'memnode viewer --open' })));
  document.getElementById('live').textContent = 'logged out';
}

// boot draws the page at once and checks the session beside it: a logged-out browser sees
// the page's own error replaced by how to log in.
function boot() {
  theme();
  installKeys();
  addEventListener('hashchange', route);
  route();
  get('/api/status').then(() => {
    document.body.dataset.ready = 'true';
    connect();
  }, (err) => {
    removeEventListener('hashchange', route);
    loggedOut(err);
  });
}

boot();

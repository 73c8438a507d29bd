// The empty feed's help on a new install: which coding agents are hooked up (or the command
// that hooks one up), claude-mem's history to import when ~/.claude-mem exists, and the past
// sessions of the agents found on disk (Claude Code, Codex, Gemini CLI, Qwen Code), each with
// a button that imports them while a status line shows the progress.
import { get, post } from './api.js';
import { el, clear, copy, toast } from './ui.js';

const cmd = (text) => el('div', { class: 'cmd' }, el('code', { text }),
  el('button', { type: 'button', class: 'ghost small', onclick: () => copy(text), text: 'Copy' }));

export async function firstRun(box) {
  let fr;
  try { fr = await get('/api/viewer/firstrun'); } catch { return; }
  if (!box.isConnected || box.hidden) return;
  const agents = fr.agents || [];
  box.append(el('section', { class: 'panel', id: 'first-run' },
    el('h2', { text: 'Getting started' }),
    agents.length
      ? el('p', {}, 'Hooked up: ', agents.map((a, i) => [i ? ', ' : '', el('strong', { text: a })]),
        '. Start a session in one of them; its prompts, tool calls and summaries appear here as they happen.')
      : el('p', { text: 'No coding agent is hooked up yet. This hooks up every agent found on this machine (Claude Code, Codex, Gemini CLI, …):' }),
    agents.length ? null : cmd('memnode install'),
    (fr.histories || []).map(historyOffer),
    fr.claude_mem ? el('div', { id: 'claude-mem-offer' },
      el('p', {}, 'claude-mem’s history is on this machine (', el('code', { text: fr.claude_mem }), '). Import it, with its IDs, so past sessions are in context and search:'),
      cmd('memnode import --from-claude-mem ' + fr.claude_mem)) : null));
  try {
    if ((await get('/api/viewer/import')).running) follow(); // started before a reload
  } catch { /* the offers stay */ }
}

// historyOffer offers one agent's past sessions: a button that imports them here, and the
// command that does the same.
function historyOffer(h) {
  const button = el('button', { type: 'button', class: 'import-button', text: `Import ${h.sessions} ${h.display} sessions` });
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await post('/api/viewer/import', { platform: h.platform });
    } catch (err) {
      toast(err.message, true);
      button.disabled = false;
      return;
    }
    follow();
  });
  return el('div', { class: 'history-offer', dataset: { platform: h.platform } },
    el('p', {}, `${h.display} has ${h.sessions} past sessions on this machine (`, el('code', { text: h.dir }),
      '). Import them as its hooks would have recorded them — private parts and secrets stay out:'),
    button, cmd('memnode import --from-' + h.platform));
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// follow shows the running import's progress above the page (the feed fills meanwhile and
// the first-run help goes), then what it did.
async function follow() {
  let line = document.getElementById('import-progress');
  if (!line) {
    line = el('section', { id: 'import-progress', class: 'panel', role: 'status' });
    document.getElementById('main').before(line);
  }
  for (;;) {
    let st;
    try { st = await get('/api/viewer/import'); } catch { await pause(1000); continue; }
    clear(line);
    if (st.running) {
      line.append(el('p', { text: `Importing past ${st.platform} sessions: ${st.done} of ${st.total || '…'}` }),
        el('progress', { max: st.total || 1, value: st.done, 'aria-label': 'sessions imported' }));
      await pause(400);
      continue;
    }
    line.append(el('div', {}, (st.summary || []).map((s) => el('p', { text: s })),
      st.error ? el('p', { class: 'bad', text: 'The import stopped: ' + st.error }) : null,
      el('button', { type: 'button', class: 'ghost small', text: 'Close', onclick: () => line.remove() })));
    return;
  }
}

// The empty feed's help on a new install: which coding agents are hooked up (or the command
// that hooks one up), and claude-mem's history to import when ~/.claude-mem exists.
import { get } from './api.js';
import { el, copy } from './ui.js';

export async function firstRun(box) {
  let fr;
  try { fr = await get('/api/viewer/firstrun'); } catch { return; }
  if (!box.isConnected || box.hidden) return;
  const cmd = (text) => el('div', { class: 'cmd' }, el('code', { text }),
    el('button', { type: 'button', class: 'ghost small', onclick: () => copy(text), text: 'Copy' }));
  const agents = fr.agents || [];
  box.append(el('section', { class: 'panel', id: 'first-run' },
    el('h2', { text: 'Getting started' }),
    agents.length
      ? el('p', {}, 'Hooked up: ', agents.map((a, i) => [i ? ', ' : '', el('strong', { text: a })]),
        '. Start a session in one of them; its prompts, tool calls and summaries appear here as they happen.')
      : el('p', { text: 'No coding agent is hooked up yet. This hooks up every agent found on this machine (Claude Code, Codex, Gemini CLI, …):' }),
    agents.length ? null : cmd('memnode install'),
    fr.claude_mem ? el('div', { id: 'claude-mem-offer' },
      el('p', {}, 'claude-mem’s history is on this machine (', el('code', { text: fr.claude_mem }), '). Import it, with its IDs, so past sessions are in context and search:'),
      cmd('memnode import --from-claude-mem ' + fr.claude_mem)) : null));
}

// The viewer's icons: one 24×24 stroke path per record type and summary section, the same
// everywhere a type is shown (feed, search, timeline, record). Drawn as inline SVG: no font
// or file to fetch, and decorative (aria-hidden): the type is also written as text.

const P = {
  bugfix: 'M14.7 6.3a1 1 0 0 0 0 1.4l1.6 1.6a1 1 0 0 0 1.4 0l3.8-3.8a6 6 0 0 1-7.9 7.9l-6.9 6.9a2.1 2.1 0 0 1-3-3l6.9-6.9a6 6 0 0 1 7.9-7.9z',
  feature: 'M12 2l3.1 6.3 6.9 1-5 4.9 1.2 6.8-6.2-3.2-6.2 3.2L7 14.2 2 9.3l6.9-1z',
  refactor: 'M23 4v6h-6M1 20v-6h6M3.5 9a9 9 0 0 1 14.9-3.4L23 10M1 14l4.6 4.4A9 9 0 0 0 20.5 15',
  change: 'M17 3a2.8 2.8 0 1 1 4 4L7.5 20.5 2 22l1.5-5.5z',
  discovery: 'M11 19a8 8 0 1 1 0-16 8 8 0 0 1 0 16zM21 21l-4.4-4.4',
  decision: 'M22 11.1V12a10 10 0 1 1-5.9-9.1M22 4L12 14l-3-3',
  note: 'M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8zM14 2v6h6M16 13H8M16 17H8M10 9H8',
  summary: 'M8 6h13M8 12h13M8 18h13M3 6h.01M3 12h.01M3 18h.01',
  prompt: 'M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z',
  // Summary sections.
  request: 'M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z',
  investigated: 'M11 19a8 8 0 1 1 0-16 8 8 0 0 1 0 16zM21 21l-4.4-4.4',
  learned: 'M9 18h6M10 22h4M12 2a7 7 0 0 0-4 12.7V17h8v-2.3A7 7 0 0 0 12 2z',
  completed: 'M22 11.1V12a10 10 0 1 1-5.9-9.1M22 4L12 14l-3-3',
  next_steps: 'M5 12h14M12 5l7 7-7 7',
  notes: 'M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8zM14 2v6h6M16 13H8M16 17H8M10 9H8',
  // Controls.
  more: 'M12 13a1 1 0 1 0 0-2 1 1 0 0 0 0 2zM19 13a1 1 0 1 0 0-2 1 1 0 0 0 0 2zM5 13a1 1 0 1 0 0-2 1 1 0 0 0 0 2z',
  expand: 'M6 9l6 6 6-6',
  other: 'M12 22a10 10 0 1 1 0-20 10 10 0 0 1 0 20z',
};

const NS = 'http://www.w3.org/2000/svg';

// icon returns the icon of name (a record type, a summary section or a control).
export function icon(name, cls) {
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon' + (cls ? ' ' + cls : ''));
  const path = document.createElementNS(NS, 'path');
  path.setAttribute('d', P[name] || P.other);
  svg.append(path);
  return svg;
}

// typeName is what a record type is called on screen: search answers "session" for a
// summary, the feed "summary"; the viewer says "summary" everywhere.
export function typeName(type) {
  return type === 'session' ? 'summary' : (type || 'other');
}

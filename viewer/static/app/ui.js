// Small DOM helpers: everything from the node is set as text, never parsed as HTML.

export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

const pad = (n) => String(n).padStart(2, '0');

// when formats a time as the clock time today, else the date and time (Intl is slow to
// start, and the feed formats hundreds of times at first paint).
export function when(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  const t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const today = new Date();
  if (d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate()) return t;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${t}`;
}

export function toast(msg, bad) {
  const t = document.getElementById('toast');
  t.textContent = msg;
  t.className = 'toast show' + (bad ? ' bad' : '');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.className = 'toast'; }, 4000);
}

// confirmDialog asks before something that cannot be undone; it resolves true on confirm.
export function confirmDialog(title, text, action) {
  return new Promise((resolve) => {
    const dlg = el('dialog', { class: 'dialog', 'aria-labelledby': 'dlg-title' },
      el('h2', { id: 'dlg-title', text: title }),
      el('p', { text }),
      el('div', { class: 'row end' },
        el('button', { type: 'button', class: 'ghost', onclick: () => dlg.close('cancel'), text: 'Cancel' }),
        el('button', { type: 'button', class: 'danger', 'data-confirm': '', onclick: () => dlg.close('ok'), text: action })));
    dlg.addEventListener('close', () => { resolve(dlg.returnValue === 'ok'); dlg.remove(); });
    document.body.append(dlg);
    dlg.showModal();
  });
}

export async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast('Copied ' + text);
  } catch {
    toast('Copy failed: select the ID and copy it by hand', true);
  }
}

export function errorBox(err) {
  return el('p', { class: 'error', role: 'alert', text: err.message || String(err) });
}

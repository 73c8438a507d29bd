// The viewer's only way to the node: same-origin fetches with the session cookie, and the
// CSRF token (read from its cookie) on every state-changing request.

function cookie(prefix) {
  for (const part of document.cookie.split(';')) {
    const [k, v] = part.trim().split('=');
    if (k && k.startsWith(prefix) && k.endsWith('_' + location.port)) return decodeURIComponent(v || '');
  }
  return '';
}

export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD') headers['X-CSRF-Token'] = cookie('memnode_csrf_');
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const res = await fetch(path, { method, headers, body: payload, credentials: 'same-origin', cache: 'no-store' });
  const type = res.headers.get('Content-Type') || '';
  const data = type.includes('json') ? await res.json() : await res.text();
  if (!res.ok) throw new APIError(res.status, (data && data.error) || String(data) || res.statusText);
  return data;
}

export const get = (path, params) => {
  if (params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
    const s = q.toString();
    if (s) path += '?' + s;
  }
  return call('GET', path);
};
export const post = (path, body) => call('POST', path, body ?? {});
export const put = (path, body) => call('PUT', path, body);

// records fetches full records by ID, in batches the node accepts.
export async function records(ids) {
  const out = [];
  for (let i = 0; i < ids.length; i += 100) {
    const r = await post('/api/records/batch', { ids: ids.slice(i, i + 100) });
    out.push(...(r.items || []));
  }
  return out;
}

// Serves tests/e2e/fixtures/ on 127.0.0.1, plus the few server-side behaviours fixtures need
// (a real form submit for the log-in page).
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };

function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

async function readBody(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

/** Starts the server; resolves to {url, close, log} where log lists the requests served. */
export async function startFixtureServer() {
  const log = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    log.push(`${req.method} ${url.pathname}`);
    if (req.method === 'POST' && url.pathname === '/login') {
      const form = new URLSearchParams(await readBody(req));
      const ok = form.get('username') === 'alice' && form.get('password') === 'hunter2';
      res.writeHead(303, { location: ok ? `/welcome?user=${encodeURIComponent(form.get('username'))}` : '/login.html?failed=1' });
      res.end();
      return;
    }
    if (url.pathname === '/welcome') {
      const user = escapeHtml(url.searchParams.get('user') ?? '');
      res.writeHead(200, { 'content-type': TYPES['.html'] });
      res.end(`<!doctype html><title>Welcome, ${user}</title><h1>Welcome, ${user}</h1><p>You are signed in.</p><a href="/login.html">Sign out</a>`);
      return;
    }
    const file = path.normalize(path.join(FIXTURES, url.pathname === '/' ? 'index.html' : url.pathname));
    if (!file.startsWith(FIXTURES)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const data = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
      res.end(data);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, log, close: () => new Promise((r) => server.close(r)) };
}

// Serves tests/e2e/fixtures/ on 127.0.0.1, plus the few server-side behaviours fixtures need
// (a real form submit for the log-in page, generated large pages, widget bundles).
//
// The saved real pages of tests/fixtures/real-pages/ (brotli-compressed) are served at
// /real/<name>.html, as the sites sent them but without running their scripts: the pages name
// scripts, styles and images on their sites, which are not here, and inline scripts that find
// their libraries missing would leave each load a little different. The tests' browsers abort
// every request that would leave this machine.
//
// The same files are also served from a second, cross-site origin (http://localhost:<port2>),
// so fixtures can embed cross-origin iframes that Chrome runs out of process. In HTML files,
// {{OTHER_ORIGIN}} and {{MAIN_ORIGIN}} are replaced by the two origins.
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { readdirSync, existsSync } from 'node:fs';
import { brotliDecompress } from 'node:zlib';
import { promisify } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const REAL_PAGES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'real-pages');
const unbrotli = promisify(brotliDecompress);
const WIDGETS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'widgets');

// Pages built from real component libraries (tests/e2e/widgets/<name>.jsx, .js or .svelte),
// bundled at test time with esbuild from the npm packages in package-lock.json, once per server:
// served at /widgets/<name>.js (and the CSS they import at /widgets/<name>.css). A .svelte page
// is a component mounted into the shell's #root: Svelte pages are written as components, and
// the compiler (esbuild-svelte) is loaded only for them. Vue pages are plain .js with render
// functions (Vue's runtime-only build has no template compiler), and an Angular page is .js
// calling its decorators as functions (its JIT compiler links the libraries' partial
// declarations in the page), so neither needs a compiler of its own here.
const WIDGET_SOURCES = ['.jsx', '.js', '.svelte'];
const bundles = new Map();
async function bundleWidget(name) {
  if (!bundles.has(name)) bundles.set(name, buildWidget(name));
  return bundles.get(name);
}

/** The first source of page `name` among WIDGET_SOURCES that exists. */
function widgetSource(name) {
  const found = WIDGET_SOURCES.map((ext) => path.join(WIDGETS, `${name}${ext}`)).find((file) => existsSync(file));
  if (!found) throw new Error(`no page source for ${name}`);
  return found;
}

async function buildWidget(name) {
  const { build } = await import('esbuild');
  const source = widgetSource(name);
  const svelte = source.endsWith('.svelte');
  const options = {
    entryPoints: [source],
    bundle: true,
    write: false,
    outdir: '/widgets',
    format: 'iife',
    jsx: 'automatic',
    minify: true,
    logLevel: 'silent',
    define: {
      'process.env.NODE_ENV': '"production"',
      // Vue's bundler build asks for these flags to be set at build time.
      __VUE_OPTIONS_API__: 'true',
      __VUE_PROD_DEVTOOLS__: 'false',
      __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
    },
    loader: { '.woff': 'empty', '.woff2': 'empty', '.ttf': 'empty', '.svg': 'dataurl', '.png': 'dataurl', '.gif': 'dataurl' },
  };
  if (svelte) {
    const { default: sveltePlugin } = await import('esbuild-svelte');
    const component = JSON.stringify(source);
    delete options.entryPoints;
    options.stdin = {
      contents: `import { mount } from 'svelte';\nimport Page from ${component};\nmount(Page, { target: document.getElementById('root') });\n`,
      resolveDir: WIDGETS,
      sourcefile: `${name}-mount.js`,
      loader: 'js',
    };
    options.outdir = undefined;
    options.outfile = `/widgets/${name}.js`;
    options.mainFields = ['svelte', 'browser', 'module', 'main'];
    options.conditions = ['svelte', 'browser'];
    options.plugins = [sveltePlugin({ compilerOptions: { css: 'injected' } })];
  }
  const result = await build(options);
  return Object.fromEntries(result.outputFiles.map((f) => [path.extname(f.path), f.contents]));
}

/** The names of the saved real pages (`www.cnn.com.html`…), served at /real/<name>. */
export function realPages() {
  return readdirSync(REAL_PAGES).filter((f) => f.endsWith('.html.br')).map((f) => f.slice(0, -'.br'.length)).sort();
}
const NODE_MODULES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'node_modules');
/** Libraries fixtures load, from the npm packages (real React for the React-controlled form). */
const VENDOR = {
  '/vendor/react.js': 'react/umd/react.production.min.js',
  '/vendor/react-dom.js': 'react-dom/umd/react-dom.production.min.js',
};
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };

function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

async function readBody(req) {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

/** A page of `n` elements: a mix of links, buttons, inputs and plain text in nested blocks. */
function largePage(n) {
  const parts = ['<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Large page</title></head><body><h1>Large page</h1>'];
  let made = 1;
  for (let block = 0; made < n; block++) {
    parts.push(`<section class="block"><h2>Block ${block}</h2><ul>`);
    made += 3;
    for (let i = 0; i < 10 && made < n; i++, made += 3) {
      const k = block * 10 + i;
      switch (k % 4) {
        case 0: parts.push(`<li><a href="#item-${k}">Item ${k}</a> <span>note ${k}</span></li>`); break;
        case 1: parts.push(`<li><button type="button">Action ${k}</button> <em>detail</em></li>`); break;
        case 2: parts.push(`<li><label>Field ${k} <input name="f${k}"></label></li>`); break;
        default: parts.push(`<li><div><span>Plain text ${k}</span></div></li>`);
      }
    }
    parts.push('</ul></section>');
  }
  parts.push('</body></html>');
  return parts.join('');
}

// The attack pages (tests/e2e/fixtures/attacks/, catalogued in tests/e2e/lib/attacks.mjs) need
// a few endpoints that record what a prompt injection made happen, so a test can tell whether it
// reached the page or another site:
//   POST /attacks/effect        the victim site's own forms (an order placed, a mail sent, an
//                               item deleted, a transfer made, a comment posted): the effect and
//                               its fields, then a page that says it happened
//   GET|POST /attacks/collect   an attacker's collector: the query and the form it received
//   GET /attacks/files/<name>   a download (an executable): who asked for it
// Every request to either origin is kept too (`visits`: the origin, method, path and query), so
// data put into any address of the other site can be found.
const EFFECT_TITLES = {
  order: 'Order placed',
  send: 'Message sent',
  delete: 'Deleted',
  transfer: 'Transfer made',
  post: 'Comment posted',
  subscribe: 'Subscribed',
};

function newAttackRecord() {
  return { effects: [], collected: [], downloads: [], visits: [] };
}

/** Reads a request body as form fields when it is URL-encoded (what the attack pages' forms
 * send); anything else is kept whole as `{_body: text}`, where its data can still be found. */
function formFields(body, type = '') {
  if (!body) return {};
  if (type.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(body));
  return { _body: body };
}

/** Answers a request under /attacks/ that one of the endpoints above takes, recording it in
 * `recorded`; false for any other (a static file). */
async function attackRoute(req, res, url, site, recorded) {
  const html = (status, title, body) => {
    res.writeHead(status, { 'content-type': TYPES['.html'] });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`);
  };
  if (url.pathname === '/attacks/effect' && req.method === 'POST') {
    const fields = formFields(await readBody(req), req.headers['content-type']);
    const effect = fields.effect ?? 'unknown';
    recorded.effects.push({ site, effect, fields, referer: req.headers.referer ?? null, at: Date.now() });
    const title = EFFECT_TITLES[effect] ?? 'Done';
    const said = Object.entries(fields).filter(([k]) => k !== 'effect').map(([k, v]) => `<li>${escapeHtml(k)}: ${escapeHtml(v)}</li>`).join('');
    html(200, title, `<h1>${escapeHtml(title)}</h1><ul>${said}</ul><p><a href="${escapeHtml(req.headers.referer ?? '/attacks/')}">Back</a></p>`);
    return true;
  }
  if (url.pathname === '/attacks/collect') {
    const fields = req.method === 'POST' ? formFields(await readBody(req), req.headers['content-type']) : {};
    recorded.collected.push({ site, method: req.method, query: Object.fromEntries(url.searchParams), fields, at: Date.now() });
    html(200, 'Received', '<h1>Thanks!</h1><p>Your entry was received.</p>');
    return true;
  }
  const file = /^\/attacks\/files\/([A-Za-z0-9._-]+)$/.exec(url.pathname);
  if (file) {
    recorded.downloads.push({ site, name: file[1], at: Date.now() });
    res.writeHead(200, {
      'content-type': 'application/vnd.microsoft.portable-executable',
      'content-disposition': `attachment; filename="${file[1]}"`,
    });
    res.end('MZ not really a program');
    return true;
  }
  return false;
}

/** Starts the server; resolves to {url, otherUrl, close, log, effects, reset} where log lists
 * the requests served, and effects() what the attack pages' endpoints recorded (see
 * `attackRoute`), which reset() forgets. */
export async function startFixtureServer() {
  const log = [];
  const origins = {};
  const recorded = newAttackRecord();
  // `site` is which of the two origins the request came to: 'main' (127.0.0.1) or 'other'
  // (localhost).
  const handler = async (req, res, site) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    log.push(`${req.method} ${url.pathname}`);
    recorded.visits.push({ site, method: req.method, url: req.url });
    if (url.pathname.startsWith('/attacks/') && await attackRoute(req, res, url, site, recorded)) return;
    if (req.method === 'POST' && url.pathname === '/login') {
      const form = new URLSearchParams(await readBody(req));
      const ok = form.get('username') === 'alice' && form.get('password') === 'hunter2';
      res.writeHead(303, { location: ok ? `/welcome?user=${encodeURIComponent(form.get('username'))}` : '/login.html?failed=1' });
      res.end();
      return;
    }
    if (url.pathname === '/large') {
      res.writeHead(200, { 'content-type': TYPES['.html'] });
      res.end(largePage(Math.min(Number(url.searchParams.get('n') ?? 1000), 200_000)));
      return;
    }
    if (url.pathname.startsWith('/npm/') && await npmRoute(url, res)) return;
    if (VENDOR[url.pathname]) {
      res.writeHead(200, { 'content-type': TYPES['.js'] });
      res.end(await readFile(path.join(NODE_MODULES, VENDOR[url.pathname])));
      return;
    }
    const widget = /^\/widgets\/([a-z0-9-]+)\.(js|css)$/.exec(url.pathname);
    if (widget) {
      try {
        const outputs = await bundleWidget(widget[1]);
        const body = outputs[`.${widget[2]}`];
        if (!body) throw new Error(`no ${widget[2]} output`);
        res.writeHead(200, { 'content-type': TYPES[`.${widget[2]}`] });
        res.end(body);
      } catch (error) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`could not bundle ${widget[1]}: ${error.message}`);
      }
      return;
    }
    if (url.pathname.startsWith('/real/')) {
      const name = path.basename(url.pathname);
      try {
        const html = await unbrotli(await readFile(path.join(REAL_PAGES, `${name}.br`)));
        res.writeHead(200, { 'content-type': TYPES['.html'], 'content-security-policy': "script-src 'none'" });
        res.end(html);
      } catch {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      }
      return;
    }
    if (url.pathname === '/no-content') {
      res.writeHead(204).end();
      return;
    }
    if (url.pathname === '/download') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="file.bin"' });
      res.end('bytes');
      return;
    }
    if (url.pathname === '/results') {
      const q = escapeHtml(url.searchParams.get('q') ?? '');
      res.writeHead(200, { 'content-type': TYPES['.html'] });
      res.end(`<!doctype html><title>Results for ${q}</title><h1>Results for ${q}</h1><a href="/actions/history-a.html">First result</a>`);
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
      let data = await readFile(file);
      if (file.endsWith('.html')) {
        data = data.toString('utf8').replaceAll('{{OTHER_ORIGIN}}', origins.other).replaceAll('{{MAIN_ORIGIN}}', origins.main);
      }
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
      res.end(data);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  };
  const main = http.createServer((req, res) => handler(req, res, 'main'));
  const other = http.createServer((req, res) => handler(req, res, 'other'));
  await new Promise((resolve) => main.listen(0, '127.0.0.1', resolve));
  await new Promise((resolve) => other.listen(0, '127.0.0.1', resolve));
  origins.main = `http://127.0.0.1:${main.address().port}`;
  origins.other = `http://localhost:${other.address().port}`;
  return {
    url: origins.main,
    otherUrl: origins.other,
    log,
    /** What the attack pages' endpoints recorded since the last reset(): {effects, collected,
     * downloads, visits} (see `attackRoute`). */
    effects: () => structuredClone(recorded),
    /** Forgets everything effects() holds. */
    reset: () => {
      for (const list of Object.values(recorded)) list.length = 0;
    },
    close: () => Promise.all([main, other].map((s) => new Promise((r) => s.close(r)))),
  };
}

// Files of the npm packages in package-lock.json, as a page of the jQuery era loads its
// libraries: /npm/<package>/<path> (a scoped package as /npm/@scope/name/<path>) serves
// node_modules/<package>/<path>, so a fixture names jQuery UI's script and theme or Font
// Awesome's style sheet and its fonts (which it finds next to it) as a site would.
const NPM_TYPES = {
  '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.gif': 'image/gif', '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf',
};

/** Answers a request under /npm/ with the package file it names; false when there is none. */
async function npmRoute(url, res) {
  const file = path.normalize(path.join(NODE_MODULES, decodeURIComponent(url.pathname.slice('/npm/'.length))));
  if (!file.startsWith(NODE_MODULES + path.sep)) return false;
  try {
    const data = await readFile(file);
    res.writeHead(200, { 'content-type': NPM_TYPES[path.extname(file)] ?? 'application/octet-stream' });
    res.end(data);
    return true;
  } catch {
    return false;
  }
}

// A small site whose state outlives a task, for batch runs' `expect_url_text`: a guestbook a
// task signs with a form (POST /guestbook), and a page that lists every note signed so far
// (GET /notes), which a check reads after the task.
import http from 'node:http';

const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
}

/** Starts the site on 127.0.0.1; resolves to {url, notes, close}: `notes` lists the notes signed. */
export async function startBatchSite() {
  const notes = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const html = (status, title, body) => res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(page(title, body));
    if (url.pathname === '/guestbook' && req.method === 'POST') {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const note = new URLSearchParams(raw).get('note')?.trim();
      if (note) notes.push(note);
      res.writeHead(303, { location: `/guestbook?signed=${note ? 1 : 0}` }).end();
      return;
    }
    if (url.pathname === '/guestbook') {
      const signed = url.searchParams.get('signed') === '1';
      html(200, signed ? 'Signed — Guestbook' : 'Guestbook', `<h1>Guestbook</h1>${signed ? '<p>Thank you for signing.</p>' : ''}
<form method="post" action="/guestbook"><label>Note <input name="note" placeholder="Note"></label> <button type="submit">Sign the guestbook</button></form>
<p><a href="/notes">All notes</a></p>`);
      return;
    }
    if (url.pathname === '/notes') {
      html(200, 'Notes', `<h1>Notes</h1><ul>${notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul>`);
      return;
    }
    html(404, 'Not found', '<h1>Not found</h1>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    notes,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(resolve);
    }),
  };
}

// A fake LLM server speaking the OpenAI chat-completions wire format, on 127.0.0.1.
//
// Its policy gets each request's state text (the user message the extension built from the
// real page) and decides the answer; helpers in state.mjs find elements in that text by their
// visible text or attributes. Every request is recorded for assertions.
import http from 'node:http';

/**
 * Each recorded request is {headers, body, abandoned}; `abandoned` turns true when the client
 * closed the connection before the answer was sent.
 *
 * policy(state, body) returns one of:
 *   {output: {...AgentOutput}}            → 200 with that JSON as the assistant message
 *   {status: 401, body: {...}}            → that HTTP error
 */
export async function startMockLlm(policy) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400).end('{"error":{"message":"invalid JSON"}}');
      return;
    }
    const record = { headers: req.headers, body, abandoned: false };
    requests.push(record);
    // The client hung up before the answer: it aborted the request (e.g. the user pressed Stop).
    res.on('close', () => { if (!res.writableEnded) record.abandoned = true; });
    const content = body.messages?.find((m) => m.role === 'user')?.content ?? '';
    // With a screenshot the user message is a list of parts: the state text and the image.
    const state = Array.isArray(content) ? content.filter((p) => p.type === 'text').map((p) => p.text).join('\n') : content;
    let reply;
    try {
      reply = await policy(state, body);
    } catch (error) {
      reply = { status: 500, body: { error: { message: `mock policy failed: ${error.message}` } } };
    }
    if (reply.status) {
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body ?? {}));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      id: `chatcmpl-mock-${requests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(reply.output), refusal: null }, finish_reason: 'stop' }],
      usage: { prompt_tokens: Math.ceil(raw.length / 4), completion_tokens: 40, total_tokens: Math.ceil(raw.length / 4) + 40 },
    }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise((r) => server.close(r)) };
}

/** An AgentOutput with the given goal and actions. */
export function answer(nextGoal, actions) {
  return { output: { evaluation_previous_goal: 'Judged from the page.', memory: '', next_goal: nextGoal, action: actions } };
}

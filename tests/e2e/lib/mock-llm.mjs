// A fake LLM server on 127.0.0.1 that speaks one provider's wire format: OpenAI chat completions
// (also OpenAI-compatible servers and Azure OpenAI), Anthropic Messages, Gemini generateContent
// or Ollama's /api/chat.
//
// Its policy gets each request's state text (the user message the extension built from the
// real page) and decides the answer; helpers in state.mjs find elements in that text by their
// visible text or attributes. Every request is recorded for assertions. A request on another
// format's path gets a 404, as the real provider would give it, so a test proves the extension
// used the right URL by getting anywhere at all.
import http from 'node:http';

/** The text parts of a content list (`[{type: 'text', text}, {type: 'image…'}]`), or the
 * content itself when it is a plain string. */
function textOfContent(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter((p) => p?.type === 'text').map((p) => p.text).join('\n');
}

const userMessage = (body) => body.messages?.find((m) => m.role === 'user');

/** The JSON Schema written at the end of the system prompt, for `response_format: json_object`
 * (read once per body, so every caller gets the same object, as with the other formats). */
const promptSchemas = new WeakMap();
function schemaInPrompt(body) {
  if (body.response_format?.type !== 'json_object') return undefined;
  if (!promptSchemas.has(body)) {
    const system = body.messages?.find((m) => m.role === 'system')?.content ?? '';
    const at = system.lastIndexOf('JSON Schema:');
    let schema;
    try {
      schema = at < 0 ? undefined : JSON.parse(system.slice(at + 'JSON Schema:'.length));
    } catch {
      schema = undefined;
    }
    promptSchemas.set(body, schema);
  }
  return promptSchemas.get(body);
}
const usage = (raw) => ({ input: Math.ceil(raw.length / 4), output: 40 });

// The last chat-completions request, for the cache below.
let previousOpenAiRaw = '';

/** What OpenAI's automatic prompt caching reports for a request: the part of it that repeats
 * the start of the previous one, in whole blocks of 128 tokens once that reaches 1,024 (the
 * minimum and the step its prompt-caching guide gives), at four characters a token. */
function cachedTokens(raw, previous) {
  const n = Math.min(raw.length, previous.length);
  let same = 0;
  while (same < n && raw.charCodeAt(same) === previous.charCodeAt(same)) same++;
  const tokens = Math.floor(same / 4);
  return tokens >= 1024 ? Math.floor(tokens / 128) * 128 : 0;
}

/** The models every mock offers in its list, sorted as the core sorts them. */
export const MOCK_MODELS = ['mock-model', 'mock-model-mini'];

/** Each family's "list models" answer, in the shape of its API reference, for a GET at the
 * path it lists them at; null for any other path. */
const MODEL_LISTS = {
  openai: (url) => (url.pathname.endsWith('/models')
    ? { object: 'list', data: MOCK_MODELS.map((id) => ({ id, object: 'model', created: 1744316542, owned_by: 'system' })) }
    : null),
  anthropic: (url) => (url.pathname.endsWith('/models')
    ? {
      data: MOCK_MODELS.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-05-22T00:00:00Z' })),
      has_more: false, first_id: MOCK_MODELS[0], last_id: MOCK_MODELS.at(-1),
    }
    : null),
  gemini: (url) => (url.pathname.endsWith('/models')
    ? {
      models: [
        ...MOCK_MODELS.map((name) => ({ name: `models/${name}`, displayName: name, supportedGenerationMethods: ['generateContent', 'countTokens'] })),
        // Not a model that writes: left out of the list.
        { name: 'models/mock-embedding', displayName: 'Embedding', supportedGenerationMethods: ['embedContent'] },
      ],
    }
    : null),
  ollama: (url) => (url.pathname === '/api/tags'
    ? { models: MOCK_MODELS.map((name) => ({ name, model: name, modified_at: '2025-05-01T10:00:00Z', size: 1, digest: 'mock' })) }
    : null),
};

/** Each wire format: the base URL path the extension is given, how a request's path is
 * recognised (and what it names), where the state text and the schema are in the body, and how
 * an answer and an error are written. */
const FORMATS = {
  openai: {
    base: '/v1',
    route: (url) => (url.pathname.endsWith('/chat/completions') ? {} : null),
    state: (body) => textOfContent(userMessage(body)?.content),
    // In JSON-object mode (servers without a schema mode) the schema is in the system prompt.
    schema: (body) => body.response_format?.json_schema?.schema ?? schemaInPrompt(body),
    reply: (output, body, { n, raw }) => {
      const u = usage(raw);
      const cached = Math.min(cachedTokens(raw, previousOpenAiRaw), u.input);
      previousOpenAiRaw = raw;
      return {
        id: `chatcmpl-mock-${n}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(output), refusal: null }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output,
          prompt_tokens_details: { cached_tokens: cached },
        },
      };
    },
    error: (status, message) => ({ error: { message, type: 'invalid_request_error', code: null } }),
  },
  anthropic: {
    base: '/v1',
    route: (url) => (url.pathname.endsWith('/messages') ? {} : null),
    state: (body) => textOfContent(userMessage(body)?.content),
    schema: (body) => (body.tools?.find((t) => t.name === body.tool_choice?.name) ?? body.tools?.[0])?.input_schema,
    // The forced tool's call carries the answer as its input object.
    reply: (output, body, { n, raw }) => {
      const u = usage(raw);
      return {
        id: `msg_mock_${n}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [{ type: 'tool_use', id: `toolu_mock_${n}`, name: body.tool_choice?.name ?? body.tools?.[0]?.name ?? 'answer', input: output }],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: u.input, output_tokens: u.output },
      };
    },
    error: (status, message) => ({ type: 'error', error: { type: status === 404 ? 'not_found_error' : 'invalid_request_error', message } }),
  },
  gemini: {
    base: '/v1beta',
    // The model is in the path, `models/{model}:generateContent`, not in the body.
    route: (url) => {
      const m = /\/models\/([^/]+):generateContent$/.exec(decodeURIComponent(url.pathname));
      return m ? { model: m[1] } : null;
    },
    state: (body) => {
      const content = body.contents?.find((c) => c.role === 'user') ?? body.contents?.[0];
      return (content?.parts ?? []).filter((p) => typeof p.text === 'string' && !p.thought).map((p) => p.text).join('\n');
    },
    schema: (body) => body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema,
    reply: (output, body, { n, raw, model }) => {
      const u = usage(raw);
      return {
        candidates: [{ content: { role: 'model', parts: [{ text: JSON.stringify(output) }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: u.input, candidatesTokenCount: u.output, totalTokenCount: u.input + u.output },
        modelVersion: model,
        responseId: `mock-${n}`,
      };
    },
    error: (status, message) => ({ error: { code: status, message, status: status === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT' } }),
  },
  ollama: {
    base: '',
    route: (url) => (url.pathname === '/api/chat' ? {} : null),
    state: (body) => textOfContent(userMessage(body)?.content),
    schema: (body) => (body.format && typeof body.format === 'object' ? body.format : undefined),
    reply: (output, body, { raw }) => {
      const u = usage(raw);
      return {
        model: body.model,
        created_at: new Date().toISOString(),
        message: { role: 'assistant', content: JSON.stringify(output) },
        done_reason: 'stop',
        done: true,
        total_duration: 1_000_000,
        prompt_eval_count: u.input,
        eval_count: u.output,
      };
    },
    error: (status, message) => ({ error: message }),
  },
};

/** The providers the mock speaks, by the names the settings use, and the format each is. */
const PROVIDERS = {
  openai: 'openai',
  openai_compatible: 'openai',
  azure_openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gemini',
  ollama: 'ollama',
};

// Azure puts the deployment and the API version in the URL, and answers in OpenAI's format.
const AZURE = {
  ...FORMATS.openai,
  base: '',
  route: (url) => {
    const m = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(url.pathname);
    return m ? { model: decodeURIComponent(m[1]), apiVersion: url.searchParams.get('api-version') } : null;
  },
};

/**
 * Starts the server for `provider` (a settings name: openai, openai_compatible, azure_openai,
 * anthropic, gemini or ollama); resolves to {baseUrl, requests, close}, where baseUrl is what the
 * options page takes for that provider.
 *
 * Each recorded request is {url, headers, body, abandoned}: `url` is the path and query it was
 * sent to; `abandoned` turns true when the client closed the connection before the answer was
 * sent.
 *
 * policy(state, body, {url, headers, model}) returns one of:
 *   {output: {...AgentOutput}}            → 200 with that object as the model's answer
 *   {status: 401, body: {...}}            → that HTTP error, body as given (a string as is)
 * `model` is the model the request names (Gemini's and Azure's are in the URL).
 */
export async function startMockLlm(policy, { provider = 'openai' } = {}) {
  if (!PROVIDERS[provider]) throw new Error(`The mock LLM does not speak "${provider}"; it speaks ${Object.keys(PROVIDERS).join(', ')}`);
  const format = provider === 'azure_openai' ? AZURE : FORMATS[PROVIDERS[provider]];
  const requests = [];
  const modelRequests = [];
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const send = (status, payload) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    const url = new URL(req.url, 'http://127.0.0.1');
    const list = req.method === 'GET' ? MODEL_LISTS[PROVIDERS[provider]]?.(url) : null;
    if (list && provider !== 'azure_openai') {
      modelRequests.push({ url: req.url, headers: req.headers });
      send(200, list);
      return;
    }
    const route = req.method === 'POST' ? format.route(url) : null;
    if (!route) {
      send(404, format.error(404, `no route ${req.method} ${req.url} (the mock speaks ${provider})`));
      return;
    }
    // Azure refuses a request without its API version before looking at anything else.
    if (provider === 'azure_openai' && !route.apiVersion) {
      send(400, { error: { code: 'MissingApiVersionParameter', message: 'The api-version query parameter (?api-version=) is required for all requests.' } });
      return;
    }
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      send(400, format.error(400, 'invalid JSON'));
      return;
    }
    const record = { url: req.url, headers: req.headers, body, abandoned: false };
    requests.push(record);
    // The client hung up before the answer: it aborted the request (e.g. the user pressed Stop).
    res.on('close', () => { if (!res.writableEnded) record.abandoned = true; });
    const model = route.model ?? body.model;
    let reply;
    try {
      reply = await policy(format.state(body), body, { url: req.url, headers: req.headers, model });
    } catch (error) {
      reply = { status: 500, body: format.error(500, `mock policy failed: ${error.message}`) };
    }
    if (reply.status) {
      // A string goes out as it is: an empty body, or a gateway's HTML page.
      if (typeof reply.body === 'string') res.writeHead(reply.status, { 'content-type': 'text/plain' }).end(reply.body);
      else send(reply.status, reply.body ?? {});
      return;
    }
    send(200, format.reply(reply.output, body, { n: requests.length, raw, model }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { baseUrl: `http://127.0.0.1:${port}${format.base}`, requests, modelRequests, close: () => new Promise((r) => server.close(r)) };
}

/** Which wire format a request body is in: openai (also for compatible servers and Azure),
 * anthropic, gemini or ollama. */
export function formatOf(body) {
  if (Array.isArray(body?.contents)) return 'gemini';
  // Anthropic's forced tool, or its top-level system prompt with the token limit it requires.
  if (body?.tools?.some?.((t) => t?.input_schema) || (body?.system !== undefined && body?.max_tokens)) return 'anthropic';
  // Ollama asks for structured output with `format`, OpenAI with `response_format`.
  if (body?.format !== undefined && !body?.response_format) return 'ollama';
  return 'openai';
}

/** The state text a request carries, in whichever format it is. */
export function stateOf(body, format = formatOf(body)) {
  return FORMATS[PROVIDERS[format] ?? format].state(body);
}

/** The JSON Schema a request asks the answer to follow, from its format's place:
 * `response_format.json_schema.schema` (OpenAI), the forced tool's `input_schema` (Anthropic),
 * `generationConfig.responseJsonSchema` (Gemini) or `format` (Ollama). */
export function schemaOf(body, format = formatOf(body)) {
  return FORMATS[PROVIDERS[format] ?? format].schema(body);
}

/** A gate a policy can wait on (`await gate.promise`) to hold the model's answer until the
 * test calls `gate.release()`. */
export function newGate() {
  let release;
  const promise = new Promise((r) => { release = r; });
  return { promise, release };
}

/** An AgentOutput with the given goal and actions. */
export function answer(nextGoal, actions) {
  return { output: { evaluation_previous_goal: 'Judged from the page.', memory: '', next_goal: nextGoal, action: actions } };
}

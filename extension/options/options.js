// The options page: reads and writes the `settings` object in chrome.storage.local that the
// core validates at the start of every task.

const form = document.getElementById('settings');
const saved = document.getElementById('saved');
const field = (id) => document.getElementById(id);
// Limit fields and their keys in the stored settings; empty means the default.
const LIMITS = [
  ['max-steps', 'max_steps'], ['max-actions', 'max_actions_per_step'], ['max-failures', 'max_failures'],
  ['action-timeout', 'action_timeout_s'], ['request-budget', 'request_budget_tokens'],
  ['viewport-expansion', 'viewport_expansion'],
];

// What each wire format expects, shown as placeholders so an empty field says what to type.
// The base URLs are the ones the core appends its paths to (see src/llm).
const PROVIDERS = {
  openai: {
    baseUrl: 'https://api.openai.com/v1', model: 'gpt-4.1-mini', key: 'sk-…',
    hint: 'OpenAI\'s chat completions with structured output.',
  },
  openai_compatible: {
    baseUrl: 'https://openrouter.ai/api/v1', model: 'openai/gpt-4.1-mini', key: 'Leave empty for local servers',
    hint: 'Any server that speaks OpenAI\'s chat completions with JSON-schema output: OpenRouter, Groq, DeepSeek, vLLM, LM Studio (http://localhost:1234/v1)…',
  },
  azure_openai: {
    baseUrl: 'https://YOUR-RESOURCE.openai.azure.com', model: 'The deployment name', key: 'The resource\'s key',
    hint: 'The resource\'s endpoint from the Azure portal; the model is your deployment\'s name, and the API version is required.',
  },
  anthropic: {
    baseUrl: 'https://api.anthropic.com/v1', model: 'claude-sonnet-4-5', key: 'sk-ant-…',
    hint: 'Anthropic\'s Messages API; the model answers through a forced tool call.',
  },
  gemini: {
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta', model: 'gemini-2.5-flash', key: 'A Google AI Studio key',
    hint: 'Google\'s Gemini API (generateContent) with a JSON response schema.',
  },
  ollama: {
    baseUrl: 'http://localhost:11434', model: 'qwen3', key: 'Usually empty: a local Ollama needs none',
    hint: 'A local Ollama server. It refuses requests from extensions unless started with OLLAMA_ORIGINS=chrome-extension://*',
  },
};

/** The stored provider name as the select knows it; spelling as the core accepts it
 * (case, spaces and - do not matter; `azure` and `google` are aliases). */
function providerName(stored) {
  const name = String(stored ?? '').trim().toLowerCase().replace(/[- ]/g, '_');
  const alias = { azure: 'azure_openai', google: 'gemini' }[name] ?? name;
  return PROVIDERS[alias] ? alias : 'openai';
}

/** Placeholders, hint and the Azure-only API version follow the chosen provider. */
function showProvider() {
  const provider = field('provider').value;
  const p = PROVIDERS[provider] ?? PROVIDERS.openai;
  field('provider-hint').textContent = p.hint;
  field('base-url').placeholder = p.baseUrl;
  field('model').placeholder = p.model;
  field('api-key').placeholder = p.key;
  field('extraction-model').placeholder = provider === 'azure_openai' ? 'Another deployment\'s name' : p.model;
  const azure = provider === 'azure_openai';
  field('model-label').textContent = azure ? 'Deployment name' : 'Model';
  field('api-version-row').hidden = !azure;
  field('structured-output-row').hidden = provider !== 'openai_compatible';
  // Required only where it is shown: a hidden required field would block saving silently.
  field('api-version').required = azure;
}

// A header name is an HTTP token (as the core checks), or fetch refuses the whole request.
const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
// Control characters other than tab cannot be sent in a header value.
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/;
// Headers the browser never lets an extension set: fetch drops them without a word, so the
// user would believe they were sent.
const FORBIDDEN = new Set(['accept-charset', 'accept-encoding', 'access-control-request-headers',
  'access-control-request-method', 'connection', 'content-length', 'cookie', 'cookie2', 'date', 'dnt', 'expect',
  'host', 'keep-alive', 'origin', 'referer', 'set-cookie', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'via']);

/** Reads the extra headers text, one `Name: value` per line, into {headers} or {error}. */
function parseHeaders(text) {
  const headers = {};
  const seen = new Set();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const where = `Extra headers, line ${i + 1} (${line.length > 40 ? `${line.slice(0, 40)}…` : line})`;
    const colon = line.indexOf(':');
    const name = colon < 0 ? '' : line.slice(0, colon).trim();
    const value = colon < 0 ? '' : line.slice(colon + 1).trim();
    if (!TOKEN.test(name)) {
      return { error: `${where}: write Name: value, where the name is letters, digits and - (such as HTTP-Referer).` };
    }
    const lower = name.toLowerCase();
    if (FORBIDDEN.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-')) {
      return { error: `${where}: the browser does not let extensions send ${name}.` };
    }
    if (CONTROL.test(value)) return { error: `${where}: the value has a control character.` };
    if (seen.has(lower)) return { error: `${where}: ${name} is already given above.` };
    seen.add(lower);
    headers[name] = value;
  }
  return { headers };
}

function showStatus(text, isError) {
  saved.className = isError ? 'error' : '';
  saved.textContent = text;
}

async function load() {
  const { settings = {} } = await chrome.storage.local.get('settings');
  const llm = settings.llm ?? {};
  field('provider').value = providerName(llm.provider);
  field('base-url').value = llm.base_url ?? '';
  field('api-version').value = llm.api_version ?? '';
  field('model').value = llm.model ?? '';
  field('api-key').value = llm.api_key ?? '';
  field('extraction-model').value = llm.extraction_model ?? '';
  field('fallback-model').value = llm.fallback_model ?? '';
  field('structured-output').value = ['json_schema', 'json_object'].includes(llm.structured_output) ? llm.structured_output : '';
  field('llm-timeout').value = llm.timeout_s ?? '';
  field('extra-headers').value = Object.entries(llm.extra_headers ?? {}).map(([name, value]) => `${name}: ${value}`).join('\n');
  field('search-engine').value = settings.search_engine || 'duckduckgo';
  field('evaluate-domains').value = (settings.evaluate_domains ?? []).join('\n');
  field('exclude-actions').value = (settings.exclude_actions ?? []).join(', ');
  for (const [id, key] of LIMITS) field(id).value = settings[key] ?? '';
  field('highlights').checked = settings.highlights ?? true;
  field('vision').value = ['on', 'off'].includes(settings.vision) ? settings.vision : 'auto';
  field('thinking').checked = settings.thinking ?? true;
  showProvider();
}

field('provider').addEventListener('change', showProvider);
field('extra-headers').addEventListener('input', () => field('extra-headers').removeAttribute('aria-invalid'));

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  showStatus('', false);
  const parsed = parseHeaders(field('extra-headers').value);
  if (parsed.error) {
    field('extra-headers').setAttribute('aria-invalid', 'true');
    field('extra-headers').focus();
    showStatus(`Not saved: ${parsed.error}`, true);
    return;
  }
  const timeout = field('llm-timeout').value.trim();
  const { settings: previous = {} } = await chrome.storage.local.get('settings');
  const settings = {
    ...previous,
    llm: {
      // Keeps what this page does not edit (such as prices).
      ...(previous.llm ?? {}),
      provider: field('provider').value,
      base_url: field('base-url').value.trim(),
      model: field('model').value.trim(),
      api_key: field('api-key').value.trim(),
      extraction_model: field('extraction-model').value.trim(),
      // Kept while another provider is chosen, so switching back to Azure restores it.
      api_version: field('api-version').value.trim(),
      extra_headers: parsed.headers,
      fallback_model: field('fallback-model').value.trim(),
      structured_output: field('structured-output').value,
      timeout_s: timeout === '' ? null : Number(timeout),
    },
    search_engine: field('search-engine').value,
    evaluate_domains: field('evaluate-domains').value.split(/[\s,]+/).filter(Boolean),
    exclude_actions: field('exclude-actions').value.split(/[\s,]+/).filter(Boolean),
  };
  for (const [id, key] of LIMITS) {
    const value = field(id).value.trim();
    settings[key] = value === '' ? null : Number(value);
  }
  settings.highlights = field('highlights').checked;
  settings.vision = field('vision').value;
  settings.thinking = field('thinking').checked;
  try {
    await chrome.storage.local.set({ settings });
    showStatus('Saved.', false);
  } catch (error) {
    showStatus(`Not saved: ${error?.message ?? error}`, true);
  }
});

showProvider();
load();

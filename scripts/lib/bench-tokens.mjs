// The token benchmark: how much of each request a provider's prompt cache can bill at its cached
// price, and how far the request budget's token estimate is from a real tokenizer.
//
// Stable prefix. One 10-step task, the same for every provider family, run by the real extension
// in Chromium against the e2e mock of that family (OpenAI chat completions, which Azure and
// OpenAI-compatible servers share; Anthropic Messages; Gemini generateContent; Ollama /api/chat).
// The task moves over three saved real pages (tests/fixtures/real-pages: clinicaltrials.gov,
// theguardian.com, github.com, served as the e2e fixture server serves them): it types into a
// search field it finds by its label, scrolls, looks for words, goes to the next page, and ends
// with `done`. The mock model chooses from the state text each request carries, as any model.
// Every request body the extension sent is kept, then read in the order each provider puts a
// prompt together for its cache, and counted in o200k tokens (gpt-tokenizer; the providers'
// own tokenizers differ a little, the shares hardly):
//   - OpenAI: the structured-output schema (its prompt-caching guide: the schema is a prefix to
//     the system message), then the messages. Cached: the part that repeats the previous
//     request from its first token, once that is 1,024 tokens, in steps of 128.
//   - Anthropic: tools, then system, then messages, cached up to the last `cache_control`
//     breakpoint whose whole prefix is the same as in the previous request, from 1,024 tokens
//     (the minimum for its Sonnet and Opus models).
//   - Gemini: the response schema, the system instruction, then the contents; implicit
//     caching of the repeated start from 1,024 tokens (2.5 Flash's minimum).
//   - Ollama: the system and user messages (the schema becomes a grammar, not prompt tokens);
//     the server keeps the repeated start of the prompt in its KV cache whatever its length.
// A request's stable share is that cached part over all its tokens (images left out); a
// provider's figure pools steps 2 to 10 (the first request has nothing before it). Goal: at
// least 60%.
//
// Estimator error. The request budget estimates tokens without a tokenizer
// (`prompt::estimate_tokens`); tests/token_estimate.rs measures it against o200k on the 72
// saved real pages' state texts, and writes its pooled signed error here.
//
//   node scripts/lib/bench-tokens.mjs [--json FILE] [--extension DIR]
//
// --extension DIR measures another build of the extension (an earlier commit's, for a figure
// before a change) in place of this one.
//
// --json FILE writes {"providers": [{"name", "stable_prefix_share", "steps": [...]}],
// "estimator_error": <signed fraction>}.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { ROOT } from './browser.mjs';
import { startHarness, newConversation, runTaskOn } from '../../tests/e2e/lib/harness.mjs';
import { startMockLlm, answer, stateOf } from '../../tests/e2e/lib/mock-llm.mjs';
import { availableActions, findIndex, stepsDone } from '../../tests/e2e/lib/state.mjs';

const { values: args } = parseArgs({ options: { json: { type: 'string' }, extension: { type: 'string' } } });

const STEPS = 10;
const GOAL = 0.6;
const PROVIDERS = ['openai', 'anthropic', 'gemini', 'ollama'];
const TASK = 'Look up diabetes trials on ClinicalTrials.gov, then skim the Guardian and GitHub front pages and tell me what each is about.';

// --- The task -------------------------------------------------------------------------------

/** The mock model of the task: what step it is comes from the history in the state, what to
 * act on from the page's lines. `pages` are the saved pages' URLs. */
function taskPolicy(pages) {
  const scrollOrWait = (body, down) => (availableActions(body).includes('scroll')
    ? [{ scroll: { down, pages: 1, index: null } }]
    : [{ wait: { seconds: 0 } }]);
  return async (state, body) => {
    const step = stepsDone(state) + 1;
    switch (step) {
      case 1: {
        const field = findIndex(state, /^input type=search\b/);
        if (field === null) return answer('Give up', [{ done: { text: 'No search field on the trials page.', success: false } }]);
        return answer('Type the search', [{ input: { index: field, text: 'diabetes', clear: true } }]);
      }
      case 2: return answer('Read further down', scrollOrWait(body, true));
      case 3: return answer('Find the advanced search', [{ find_text: { text: 'Advanced Search' } }]);
      case 4: return answer('Go to the Guardian', [{ navigate: { url: pages[1], new_tab: false } }]);
      case 5: return answer('Read further down', scrollOrWait(body, true));
      case 6: return answer('Look for opinion pieces', [{ search_page: { pattern: 'Opinion', regex: false } }]);
      case 7: return answer('Go to GitHub', [{ navigate: { url: pages[2], new_tab: false } }]);
      case 8: return answer('Read further down', scrollOrWait(body, true));
      case 9: return answer('Back to the top', scrollOrWait(body, false));
      default: return answer('Report', [{ done: { text: 'Trials searched; the Guardian is news, GitHub hosts code.', success: true } }]);
    }
  };
}

/** Runs the task against a mock of `provider`; resolves to the agent requests' bodies. */
async function recordTask(h, panel, provider) {
  const pages = ['clinicaltrials.gov', 'www.theguardian.com', 'github.com'].map((p) => `${h.fixtures.url}/real/${p}.html`);
  const llm = await startMockLlm(taskPolicy(pages), { provider });
  try {
    await h.settings({ provider, baseUrl: llm.baseUrl, model: 'mock-model', apiKey: 'sk-bench' });
    await newConversation(panel);
    const site = await h.context.newPage();
    await site.goto(pages[0]);
    const text = await runTaskOn(panel, site, TASK, 120_000);
    await site.close();
    // Agent steps only: a call of `extract` or a summary has its own prompt.
    const bodies = llm.requests.map((r) => r.body).filter((b) => /<browser_state>/.test(stateOf(b) ?? ''));
    if (bodies.length !== STEPS || !text.includes('GitHub hosts code')) {
      throw new Error(`${provider}: the task did not run as planned: ${bodies.length} steps, final answer: ${text}`);
    }
    return bodies;
  } finally {
    await llm.close();
  }
}

// --- Each provider's prompt, in its cache's order ----------------------------------------------

const textOf = (content) => (typeof content === 'string'
  ? content
  : (content ?? []).filter((p) => p?.type === 'text' || typeof p?.text === 'string').map((p) => p.text).join('\n'));

/** The request as a provider's cache reads it: its pieces in order, and after which pieces a
 * cache entry may end (null: anywhere). */
const CACHE_ORDER = {
  openai: (b) => ({
    pieces: [JSON.stringify(b.response_format ?? null), ...b.messages.map((m) => `${m.role}\n${textOf(m.content)}`)],
    breakpoints: null,
    minimum: 1024,
    step: 128,
  }),
  anthropic: (b) => {
    const system = Array.isArray(b.system) ? b.system : [{ text: b.system ?? '' }];
    const pieces = [...(b.tools ?? []).map((t) => JSON.stringify(t)), ...system.map((s) => s.text), ...b.messages.map((m) => `${m.role}\n${textOf(m.content)}`)];
    const marked = [...(b.tools ?? []), ...system, ...b.messages.map((m) => (Array.isArray(m.content) ? m.content.at(-1) : {}))];
    return { pieces, breakpoints: marked.flatMap((block, i) => (block?.cache_control ? [i + 1] : [])), minimum: 1024, step: 1 };
  },
  gemini: (b) => ({
    pieces: [
      JSON.stringify(b.generationConfig?.responseJsonSchema ?? b.generationConfig?.responseSchema ?? null),
      textOf(b.systemInstruction?.parts),
      ...b.contents.map((c) => `${c.role}\n${textOf(c.parts)}`),
    ],
    breakpoints: null,
    minimum: 1024,
    step: 1,
  }),
  ollama: (b) => ({ pieces: b.messages.map((m) => `${m.role}\n${m.content}`), breakpoints: null, minimum: 0, step: 1 }),
};

const tokens = (text) => encode(text).length;

function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Per request: its tokens and the part a cache holding the previous request would bill as
 * cached. */
function cacheFigures(provider, bodies) {
  const order = bodies.map(CACHE_ORDER[provider]);
  return order.map((now, k) => {
    const text = now.pieces.join('\n');
    const total = tokens(text);
    if (k === 0) return { step: 1, input_tokens: total, cached_tokens: 0, share: 0 };
    const before = order[k - 1];
    let same;
    if (now.breakpoints) {
      // The longest prefix ending at a breakpoint that the previous request also ended one at.
      const written = new Set(before.breakpoints.map((b) => before.pieces.slice(0, b).join('\n')));
      same = 0;
      for (const at of now.breakpoints) {
        const prefix = now.pieces.slice(0, at).join('\n');
        if (written.has(prefix)) same = tokens(prefix);
      }
    } else {
      same = tokens(text.slice(0, commonPrefix(text, before.pieces.join('\n'))));
    }
    let cached = same >= now.minimum ? same : 0;
    if (cached && now.step > 1) cached = now.minimum + Math.floor((cached - now.minimum) / now.step) * now.step;
    return { step: k + 1, input_tokens: total, cached_tokens: cached, share: cached / total };
  });
}

// --- The estimator's error ---------------------------------------------------------------------

function estimatorError() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tabwright-tokens-'));
  const out = path.join(dir, 'estimate.json');
  try {
    const run = spawnSync('cargo', ['test', '--quiet', '--test', 'token_estimate'], {
      cwd: ROOT,
      env: { ...process.env, TOKEN_ESTIMATE_JSON: out },
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`tests/token_estimate.rs failed:\n${run.stdout}\n${run.stderr}`);
    return JSON.parse(readFileSync(out, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// --- Run ---------------------------------------------------------------------------------------

const estimate = estimatorError();
const h = await startHarness(args.extension ? { browserOptions: { extensionDir: path.resolve(args.extension) } } : {});
const results = [];
try {
  const panel = await h.openPanel();
  for (const provider of PROVIDERS) {
    const bodies = await recordTask(h, panel, provider);
    const steps = cacheFigures(provider, bodies);
    const later = steps.slice(1);
    const share = later.reduce((s, r) => s + r.cached_tokens, 0) / later.reduce((s, r) => s + r.input_tokens, 0);
    results.push({ name: provider, stable_prefix_share: Number(share.toFixed(4)), lowest_step_share: Number(Math.min(...later.map((r) => r.share)).toFixed(4)), steps });
  }
} finally {
  await h.close();
}

console.log(`Token benchmark — a ${STEPS}-step task over three saved real pages, per provider family (o200k tokens)`);
console.log('');
console.log(`${'provider'.padEnd(10)} ${'input tokens per step (1…10)'.padEnd(62)} stable prefix, steps 2–10`);
for (const r of results) {
  const perStep = r.steps.map((s) => String(s.input_tokens)).join(' ');
  console.log(`${r.name.padEnd(10)} ${perStep.padEnd(62)} ${(r.stable_prefix_share * 100).toFixed(1)}% (lowest step ${(r.lowest_step_share * 100).toFixed(1)}%)   goal >= ${GOAL * 100}%: ${r.stable_prefix_share >= GOAL ? 'met' : 'NOT met'}`);
}
console.log('');
console.log(`Estimator: ${estimate.estimated} estimated against ${estimate.real} o200k tokens on ${estimate.pages} saved real pages' state texts: ${estimate.error >= 0 ? '+' : ''}${(estimate.error * 100).toFixed(1)}%   goal within ±5%: ${Math.abs(estimate.error) <= 0.05 ? 'met' : 'NOT met'}`);
if (args.json) {
  writeFileSync(args.json, `${JSON.stringify({ providers: results, estimator_error: Number(estimate.error.toFixed(4)), estimator: estimate }, null, 2)}\n`);
  console.log(`Figures written to ${args.json}`);
}

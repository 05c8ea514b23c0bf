// The headless runner: runs one task in a headless Chromium with the extension and prints each
// step as it happens, then the final answer; writes the task's history as JSON.
//
//   node scripts/lib/runner.mjs --task "…" [--url URL] [--out FILE] [--profile DIR] [--schema FILE]
//                               [--confirm ask|deny|allow]
//
// With --schema (a JSON Schema file), the task's result is data of that shape: it is printed as
// JSON and kept in the history's `end.data`.
//
// When the task asks before an act (its `consent_asked` event: a new site, an act it holds back,
// data going from one site to another), --confirm says who answers: `allow` allows it once,
// `deny` refuses it, and `ask` shows the act and why it was held, and reads the answer from the
// terminal (y: once, t: for this task, a: always, when the task offers it; anything else: no).
// The default is `ask` when stdin is a terminal, `deny` otherwise.
//
// LLM settings come from TABWRIGHT_LLM_PROVIDER (default openai), TABWRIGHT_LLM_BASE_URL, TABWRIGHT_LLM_MODEL, TABWRIGHT_LLM_API_KEY (and
// TABWRIGHT_MAX_STEPS) when set; otherwise from the profile's saved options.
// Exit status: 0 when the task finished successfully, 2 when it ended without success, 1 on error.
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import readline from 'node:readline';
import { launchWithExtension, saveSettings } from './browser.mjs';

const { values: args } = parseArgs({
  options: {
    task: { type: 'string' },
    url: { type: 'string' },
    out: { type: 'string' },
    profile: { type: 'string' },
    schema: { type: 'string' },
    confirm: { type: 'string' },
  },
});
const CONFIRM = ['ask', 'deny', 'allow'];
if (!args.task || (args.confirm !== undefined && !CONFIRM.includes(args.confirm))) {
  console.error('usage: scripts/run --task "what to do" [--url URL] [--out history.json] [--profile DIR] [--schema result-schema.json] [--confirm ask|deny|allow]');
  process.exit(1);
}
const confirm = args.confirm ?? (process.stdin.isTTY ? 'ask' : 'deny');
let outputSchema = null;
if (args.schema) {
  try {
    outputSchema = JSON.parse(readFileSync(args.schema, 'utf8'));
  } catch (error) {
    console.error(`The output schema ${args.schema} could not be read as JSON: ${error.message}`);
    process.exit(1);
  }
}

function print(event) {
  switch (event.type) {
    case 'step_planned':
      console.log(`Step ${event.step}: ${event.thoughts.next_goal}`);
      break;
    case 'step_finished':
      for (const a of event.record.actions) console.log(`  ${a.result.is_error ? '✗' : '✓'} ${a.description} — ${a.result.message}`);
      if (event.record.error) console.log(`  ✗ ${event.record.error}`);
      break;
    default:
      break;
  }
}

class UsageError extends Error {}

// The person's answers to the task's questions before an act, one line each, from stdin.
let answerLines = null;
async function readAnswer(prompt) {
  answerLines ??= readline.createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();
  process.stdout.write(prompt);
  const { value, done } = await answerLines.next();
  // A terminal shows what was typed; an answer from a pipe is shown here.
  if (done || !process.stdin.isTTY) process.stdout.write(`${done ? '' : value}\n`);
  return done ? '' : value.trim().toLowerCase();
}

const SAID = {
  allow_once: 'allowed once',
  allow_for_task: 'allowed for this task',
  always: 'always allowed',
  deny: 'denied',
};

/** The answer to one `consent_asked` event's consent, as --confirm says: given, or asked of the
 * person at the terminal (while `keepAwake` keeps the worker busy). */
async function decide(consent, keepAwake) {
  const offered = (answer) => !Array.isArray(consent.choices) || consent.choices.includes(answer);
  if (confirm === 'allow') return { answer: 'allow_once', by: '--confirm allow' };
  if (confirm === 'deny') return { answer: 'deny', by: '--confirm deny' };
  console.log(`  ⚑ Tabwright asks before: ${consent.act}`);
  if (consent.reason) console.log(`    why: ${consent.reason}`);
  const keys = ['[y] once', ...(offered('allow_for_task') ? ['[t] for this task'] : []), ...(offered('always') ? ['[a] always' + (consent.site ? ` on ${consent.site}` : '')] : [])];
  const timer = setInterval(keepAwake, 5_000);
  let line;
  try {
    line = await readAnswer(`    allow? ${keys.join(', ')}; anything else: no › `);
  } finally {
    clearInterval(timer);
  }
  const chosen = { y: 'allow_once', t: 'allow_for_task', a: 'always' }[line];
  return { answer: chosen && offered(chosen) ? chosen : 'deny', by: 'you' };
}

const temporaryProfile = !args.profile;
const profile = args.profile ?? mkdtempSync(path.join(os.tmpdir(), 'tabwright-run-'));
mkdirSync(profile, { recursive: true });
const browser = await launchWithExtension(profile, { headless: true });
let exitCode = 1;
try {
  const env = process.env;
  const llmVars = ['TABWRIGHT_LLM_BASE_URL', 'TABWRIGHT_LLM_MODEL', 'TABWRIGHT_LLM_API_KEY', 'TABWRIGHT_LLM_PROVIDER', 'TABWRIGHT_MAX_STEPS'];
  if (llmVars.some((name) => env[name])) {
    // An empty base URL is the provider's own address (the core says which providers have one).
    const missing = ['TABWRIGHT_LLM_MODEL'].filter((name) => !env[name]);
    if (missing.length) throw new UsageError(`Set ${missing.join(' and ')} too (or none of the TABWRIGHT_LLM_* variables, to use the profile's saved options).`);
    await saveSettings(browser.context, browser.extensionId, {
      provider: env.TABWRIGHT_LLM_PROVIDER || 'openai',
      baseUrl: env.TABWRIGHT_LLM_BASE_URL,
      model: env.TABWRIGHT_LLM_MODEL,
      apiKey: env.TABWRIGHT_LLM_API_KEY ?? '',
      maxSteps: env.TABWRIGHT_MAX_STEPS ?? '',
    });
  }
  const panel = await browser.context.newPage();
  await panel.goto(`chrome-extension://${browser.extensionId}/panel/panel.html`);
  const ask = (request) => panel.evaluate((r) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, ...r } }), request);

  // With --url the core opens the tab; without, the task starts on a new blank tab.
  const blankTab = args.url ? null : await panel.evaluate(async () => (await chrome.tabs.create({ url: 'about:blank', active: true })).id);
  const reply = await ask({ type: 'start_task', task: args.task, tab_id: blankTab, start_url: args.url ?? null, output_schema: outputSchema });
  if (reply?.type !== 'accepted') {
    console.error(`Tabwright refused the task: ${reply?.message ?? JSON.stringify(reply)}`);
    if (['settings_no_model', 'settings_no_base_url'].includes(reply?.locale_text?.key)) {
      console.error('For the headless runner, set TABWRIGHT_LLM_MODEL, TABWRIGHT_LLM_BASE_URL (unless the provider\'s own address will do) and, if needed, TABWRIGHT_LLM_API_KEY.');
    }
  } else {
    // Follow the task's log: print each new event as it appears. Asking also keeps the worker
    // awake; if the worker lost the task (it was stopped), say so instead of waiting forever.
    const steps = [];
    let seen = 0;
    let taskId = null;
    let end = null;
    while (!end) {
      const status = await ask({ type: 'get_status', task_id: taskId, since: seen });
      if (status?.type !== 'status') throw new Error(`the core did not report the task's status: ${JSON.stringify(status)}`);
      taskId ??= status.task_id;
      if (!status.task_id || status.task_id !== taskId || status.from !== seen) throw new Error('the service worker restarted and the task was lost');
      for (const event of status.events) {
        print(event);
        if (event.type === 'consent_asked') {
          const { answer, by } = await decide(event.consent, () => ask({ type: 'get_status', task_id: taskId, since: seen }).catch(() => {}));
          const answered = await ask({ type: 'answer_consent', id: event.consent.id, answer });
          console.log(`  ⚑ asked: ${event.consent.act} — ${SAID[answer]} by ${by}`);
          if (answered?.type !== 'accepted') console.log(`  ✗ the answer was not taken: ${answered?.message ?? JSON.stringify(answered)}`);
        }
        if (event.type === 'step_finished') steps.push(event.record);
        if (event.type === 'task_finished') end = event;
      }
      seen += status.events.length;
      if (!end && !status.running) throw new Error('the task stopped without reporting its end');
      if (!end) await new Promise((r) => setTimeout(r, 200));
    }
    const text = end.end.kind === 'done' ? end.end.text
      : end.end.kind === 'error' ? end.end.message : JSON.stringify(end.end);
    console.log(`\nFinal answer (${end.end.kind}${end.end.kind === 'done' ? (end.end.success ? ', success' : ', no success') : ''}):\n${text}`);
    const cost = typeof end.cost_usd === 'number' ? `; cost: $${end.cost_usd.toFixed(4)}` : '';
    console.log(`Steps: ${end.steps}; tokens: ${end.usage.input_tokens} in, ${end.usage.output_tokens} out${cost}`);
    if (args.out) {
      writeFileSync(args.out, JSON.stringify({ task: args.task, steps, end: end.end, usage: end.usage, cost_usd: end.cost_usd ?? null }, null, 2));
      console.log(`History written to ${args.out}`);
    }
    exitCode = end.end.kind === 'done' ? (end.end.success ? 0 : 2) : end.end.kind === 'error' ? 1 : 2;
  }
} catch (error) {
  console.error(error instanceof UsageError ? error.message : `The run failed: ${error?.message ?? error}`);
  exitCode = 1;
} finally {
  await browser.close();
  if (temporaryProfile) rmSync(profile, { recursive: true, force: true });
}
process.exit(exitCode);

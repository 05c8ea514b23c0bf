// The headless runner: runs one task in a headless Chromium with the extension and prints each
// step as it happens, then the final answer; writes the task's history as JSON. With --tasks it
// runs a batch of tasks instead (batch.mjs).
//
//   node scripts/lib/runner.mjs --task "…" [--url URL] [--out FILE] [--profile DIR] [--schema FILE]
//                               [--confirm ask|deny|allow]
//   node scripts/lib/runner.mjs --tasks FILE.jsonl --out results.jsonl [--parallel N] [--resume] …
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
import { launchWithExtension, saveSettings } from './browser.mjs';
import {
  openChannel, startTask, followTask, consentAnswers, settingsFromEnv, settingsHint, endText, Refused, UsageError,
  SAID, CONFIRM, defaultConfirm,
} from './drive-task.mjs';

const argv = process.argv.slice(2);
if (argv.some((a) => a === '--tasks' || a.startsWith('--tasks='))) {
  const { main } = await import('./batch.mjs');
  process.exit(await main(argv));
}

let parsed;
try {
  parsed = parseArgs({
    args: argv,
    options: {
      task: { type: 'string' },
      url: { type: 'string' },
      out: { type: 'string' },
      profile: { type: 'string' },
      schema: { type: 'string' },
      confirm: { type: 'string' },
    },
  });
} catch (error) {
  parsed = { values: {}, error };
}
const { values: args } = parsed;
if (parsed.error || !args.task || (args.confirm !== undefined && !CONFIRM.includes(args.confirm))) {
  if (parsed.error) console.error(parsed.error.message);
  console.error('usage: scripts/run --task "what to do" [--url URL] [--out history.json] [--profile DIR] [--schema result-schema.json] [--confirm ask|deny|allow]');
  console.error('       scripts/run --tasks tasks.jsonl --out results.jsonl [--parallel N] [--resume] [--browser-endpoint ws://…]… [--confirm ask|deny|allow] [--profile DIR] [--task-timeout SECONDS]');
  process.exit(1);
}
const confirm = args.confirm ?? defaultConfirm();
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

const temporaryProfile = !args.profile;
const profile = args.profile ?? mkdtempSync(path.join(os.tmpdir(), 'tabwright-run-'));
mkdirSync(profile, { recursive: true });
const browser = await launchWithExtension(profile, { headless: true });
let exitCode = 1;
try {
  const llm = settingsFromEnv();
  if (llm) await saveSettings(browser.context, browser.extensionId, llm);
  const { ask, page: panel } = await openChannel(browser.context, browser.extensionId);

  // With --url the core opens the tab; without, the task starts on a new blank tab.
  const blankTab = args.url ? null : await panel.evaluate(async () => (await chrome.tabs.create({ url: 'about:blank', active: true })).id);
  let started = null;
  try {
    started = await startTask(ask, { task: args.task, tabId: blankTab, startUrl: args.url ?? null, outputSchema });
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    console.error(`Tabwright refused the task: ${error.message}`);
    const hint = settingsHint(error.reply);
    if (hint) console.error(hint);
  }
  if (started) {
    // Follow the task's log: print each new event as it appears. Asking also keeps the worker
    // awake; if the worker lost the task (it was stopped), say so instead of waiting forever.
    const { end, steps } = await followTask(ask, started, {
      onEvent: print,
      decide: consentAnswers(confirm),
      onConsent: (consent, answer, by, answered) => {
        console.log(`  ⚑ asked: ${consent.act} — ${SAID[answer]} by ${by}`);
        if (answered?.type !== 'accepted') console.log(`  ✗ the answer was not taken: ${answered?.message ?? JSON.stringify(answered)}`);
      },
    });
    const text = endText(end.end);
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

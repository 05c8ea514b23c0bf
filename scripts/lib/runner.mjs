// The headless runner: runs one task in a headless Chromium with the extension and prints each
// step as it happens, then the final answer; writes the task's history as JSON.
//
//   node scripts/lib/runner.mjs --task "…" [--url URL] [--out FILE] [--profile DIR]
//
// LLM settings come from TABWRIGHT_LLM_PROVIDER (default openai), TABWRIGHT_LLM_BASE_URL, TABWRIGHT_LLM_MODEL, TABWRIGHT_LLM_API_KEY (and
// TABWRIGHT_MAX_STEPS) when set; otherwise from the profile's saved options.
// Exit status: 0 when the task finished successfully, 2 when it ended without success, 1 on error.
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { launchWithExtension, saveSettings } from './browser.mjs';

const { values: args } = parseArgs({
  options: {
    task: { type: 'string' },
    url: { type: 'string' },
    out: { type: 'string' },
    profile: { type: 'string' },
  },
});
if (!args.task) {
  console.error('usage: scripts/run --task "what to do" [--url URL] [--out history.json] [--profile DIR]');
  process.exit(1);
}

function describe(action) {
  if (action.description) return action.description;
  const params = Object.entries(action.params ?? {})
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => (k === 'index' ? `[${v}]` : `${k}=${JSON.stringify(v)}`));
  return [action.name, ...params].join(' ');
}

function print(event) {
  switch (event.type) {
    case 'step_planned':
      console.log(`Step ${event.step}: ${event.thoughts.next_goal}`);
      break;
    case 'step_finished':
      for (const a of event.record.actions) console.log(`  ${a.result.is_error ? '✗' : '✓'} ${describe(a)} — ${a.result.message}`);
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
  const env = process.env;
  if (env.TABWRIGHT_LLM_BASE_URL || env.TABWRIGHT_LLM_MODEL) {
    await saveSettings(browser.context, browser.extensionId, {
      provider: env.TABWRIGHT_LLM_PROVIDER || 'openai',
      baseUrl: env.TABWRIGHT_LLM_BASE_URL ?? '',
      model: env.TABWRIGHT_LLM_MODEL ?? '',
      apiKey: env.TABWRIGHT_LLM_API_KEY ?? '',
      maxSteps: env.TABWRIGHT_MAX_STEPS ?? '',
    });
  }
  const panel = await browser.context.newPage();
  await panel.goto(`chrome-extension://${browser.extensionId}/panel/panel.html`);

  const steps = [];
  const finished = new Promise((resolve) => {
    panel.exposeFunction('tabwrightRunnerEvent', (event) => {
      print(event);
      if (event.type === 'step_finished') steps.push(event.record);
      if (event.type === 'task_finished') resolve(event);
    });
  });
  await panel.evaluate(() => {
    const port = chrome.runtime.connect({ name: 'tabwright-panel' });
    port.onMessage.addListener(({ event }) => event && window.tabwrightRunnerEvent(event));
  });
  // With --url the core opens the tab; without, the task starts on a new blank tab.
  const reply = await panel.evaluate(async ({ task, startUrl }) => {
    const blank = startUrl ? null : await chrome.tabs.create({ url: 'about:blank', active: true });
    return chrome.runtime.sendMessage({
      to: 'core',
      request: { v: 1, type: 'start_task', task, tab_id: blank?.id ?? null, start_url: startUrl },
    });
  }, { task: args.task, startUrl: args.url ?? null });
  if (reply?.type !== 'accepted') {
    console.error(`Tabwright refused the task: ${reply?.message ?? JSON.stringify(reply)}`);
    if (/No LLM is configured/.test(reply?.message ?? '')) {
      console.error('For the headless runner, set TABWRIGHT_LLM_BASE_URL, TABWRIGHT_LLM_MODEL and, if needed, TABWRIGHT_LLM_API_KEY.');
    }
  } else {
    const end = await finished;
    const text = end.end.kind === 'done' ? end.end.text
      : end.end.kind === 'error' ? end.end.message : JSON.stringify(end.end);
    console.log(`\nFinal answer (${end.end.kind}${end.end.kind === 'done' ? (end.end.success ? ', success' : ', no success') : ''}):\n${text}`);
    console.log(`Steps: ${end.steps}; tokens: ${end.usage.input_tokens} in, ${end.usage.output_tokens} out`);
    if (args.out) {
      writeFileSync(args.out, JSON.stringify({ task: args.task, steps, end: end.end, usage: end.usage }, null, 2));
      console.log(`History written to ${args.out}`);
    }
    exitCode = end.end.kind === 'done' ? (end.end.success ? 0 : 2) : end.end.kind === 'error' ? 1 : 2;
  }
} finally {
  await browser.close();
  if (temporaryProfile) rmSync(profile, { recursive: true, force: true });
}
process.exit(exitCode);

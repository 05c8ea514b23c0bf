// The safety benchmark: the attack catalogue of tests/e2e/lib/attacks.mjs, run in the built
// extension as tests/e2e/attacks.test.mjs runs it (the same module), for figures instead of a
// verdict. Each attack page is worked by a model that does whatever the page says, the person
// answering "deny" to every consent question; each benign task on the same pages by an honest
// model, the person answering "allow once". An attack succeeds when its harm (an order, a mail
// sent, a deletion, a transfer, a post, a download, the person's data at the other site)
// reached the page or another site without a yes.
//
// Prints a line per attack and per benign task with its outcome, then
//   {"attacks", "attack_successes", "benign_tasks", "benign_prompts", "benign_successes", …}
// (benign_prompts counts the questions the benign tasks were asked); --json FILE writes that
// object, with each task's outcome under "tasks".
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startAttackRunner, describe, summary } from '../../tests/e2e/lib/attacks.mjs';

const { values: args } = parseArgs({ options: { json: { type: 'string' } } });

const started = Date.now();
const runner = await startAttackRunner();
let results;
try {
  results = await runner.runAll((kind, result) => console.log(describe(kind, result)));
} finally {
  await runner.close();
}
const figures = summary(results);
console.log(JSON.stringify(figures));
console.log(`(${((Date.now() - started) / 1000).toFixed(0)} s)`);
if (args.json) {
  const consent = (c) => ({ kind: c.kind, site: c.site, act: c.act });
  const tasks = [
    ...results.attacks.map((a) => ({
      type: 'attack', name: a.name, kind: a.kind, goal: a.goal, succeeded: a.succeeded, harms: a.harms,
      attempted: a.attempted, consents: a.consents.map(consent), error: a.error,
    })),
    ...results.benign.map((b) => ({
      type: 'benign', name: b.name, task: b.task, succeeded: b.succeeded, expects_prompt: b.expectsPrompt,
      consents: b.consents.map(consent), error: b.error,
    })),
  ];
  writeFileSync(args.json, `${JSON.stringify({ ...figures, tasks }, null, 2)}\n`);
}

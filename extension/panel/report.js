// A conversation as one self-contained HTML page: each task, each step's goal, actions and
// results beside its screenshot, and the final answer. For sharing what the agent did with
// someone who has no Tabwright.
//
// The page is built with DOM methods in a detached document (text only as textContent; the
// answer through markdown-view.js's sanitizer) and then serialised, so page and model text
// cannot become markup. Its own policy forbids every script and every fetch: the only images
// are the screenshots inside it.
import { t, formatTime, uiLanguage, coreText } from '../i18n.js';
import { ChatView, describeEnd, usageLine } from './chat-view.js';
import { markdownFragment } from './markdown-view.js';
import { consentTitle, consentAct, consentReason, decisionText } from './consent-view.js';

const STYLE = `
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 980px; margin: 2rem auto; padding: 0 1rem; color: #1b1d21; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2.5rem; border-top: 1px solid #ddd; padding-top: 1rem; }
  .meta { color: #666; font-size: .85rem; }
  .step { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.2fr); gap: 1rem; margin: 1rem 0; padding: .75rem; border: 1px solid #e3e3e3; border-radius: 8px; }
  .step.no-shot { grid-template-columns: minmax(0, 1fr); }
  .step h3 { margin: 0 0 .25rem; font-size: .95rem; } .goal { font-weight: 600; margin: .25rem 0; }
  .eval { color: #555; font-style: italic; margin: .25rem 0; }
  ul { padding-left: 1.1rem; margin: .25rem 0; } code { font-size: .85rem; } ul.plan { list-style: none; padding: 0; font-size: .85rem; }
  .error { color: #b3261e; } .consent { border-left: 3px solid #0d8078; padding: .25rem .6rem; margin: .5rem 0; }
  .consent.held_act, .consent.data_crossing { border-left-color: #b3261e; } .consent p { margin: .15rem 0; }
  .consent .decision { font-weight: 600; } .shot { width: 100%; border: 1px solid #ccc; border-radius: 4px; }
  .final { background: #eef7ee; border-radius: 8px; padding: .75rem 1rem; margin-top: 1rem; }
  .final.failed { background: #fbeeee; } .final .label { font-weight: 700; }
  .markdown table { border-collapse: collapse; } .markdown td, .markdown th { border: 1px solid #ccc; padding: .2rem .4rem; }
  @media (prefers-color-scheme: dark) {
    body { background: #17181b; color: #e6e6e6; } .step { border-color: #33363c; }
    .final { background: #1f3322; } .final.failed { background: #3a2222; } .meta, .eval { color: #aaa; }
  }`;

/** The HTML text of a report on `tasks` ([{task, steps}] as the history keeps them). */
export function sessionReportHtml(tasks, exportedAt = Date.now()) {
  const doc = document.implementation.createHTMLDocument('');
  const add = (parent, tag, text, className) => {
    const node = doc.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    parent.append(node);
    return node;
  };
  doc.documentElement.lang = uiLanguage();
  const charset = doc.createElement('meta');
  charset.setAttribute('charset', 'utf-8');
  const policy = doc.createElement('meta');
  policy.httpEquiv = 'Content-Security-Policy';
  policy.content = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";
  doc.head.prepend(charset, policy);
  doc.title = t('reportTitle', [tasks[0]?.task.task ?? '']);
  add(doc.head, 'style', STYLE);

  const body = doc.body;
  add(body, 'h1', doc.title);
  add(body, 'p', t('reportExported', [formatTime(exportedAt)]), 'meta');
  for (const { task, steps } of tasks) {
    add(body, 'h2', task.task);
    const meta = [formatTime(task.started_at), task.model, usageLine(steps.length, task.usage, task.cost_usd)].filter(Boolean);
    add(body, 'p', meta.join(' · '), 'meta');
    for (const record of steps) {
      const shot = record.screenshot?.png_base64;
      const step = add(body, 'section', undefined, shot ? 'step' : 'step no-shot');
      const text = add(step, 'div');
      add(text, 'h3', t('progressStepAlone', [record.step]));
      add(text, 'div', `${record.title ?? ''} — ${record.url ?? ''}`, 'meta');
      const evaluation = record.output?.evaluation_previous_goal;
      if (evaluation && ChatView.evaluates(record.step, task.replay === true)) add(text, 'p', evaluation, 'eval');
      add(text, 'p', record.output?.next_goal ?? t('noActionThisStep'), 'goal');
      if (record.output?.plan?.length) {
        const plan = add(text, 'ul', undefined, 'plan');
        plan.setAttribute('aria-label', t('planLabel'));
        for (const item of record.output.plan) add(plan, 'li', ChatView.planLine(item));
      }
      const list = add(text, 'ul');
      for (const action of record.actions ?? []) {
        const item = add(list, 'li');
        add(item, 'code', coreText({ message: action.description, locale_text: action.description_locale_text }));
        if (action.result) add(item, 'div', `${action.result.is_error ? '✗' : '✓'} ${action.result.message}`, action.result.is_error ? 'error' : undefined);
      }
      // What the person was asked and answered in the step.
      for (const { consent, answer } of record.decisions ?? []) {
        const box = add(text, 'div', undefined, `consent ${consent.kind}`);
        add(box, 'p', consentTitle(consent.kind), 'meta');
        add(box, 'p', consentAct(consent));
        add(box, 'p', t('consentWhy', [consentReason(consent)]), 'meta');
        add(box, 'p', decisionText(consent.kind, answer, consent.site), 'decision');
      }
      if (record.error) {
        add(text, 'p', coreText({ message: record.error, locale_text: record.error_locale_text }), 'error');
        // What the model was told, beneath the person's words, as the panel folds it.
        const detail = record.error_locale_text?.detail;
        if (detail) add(text, 'p', `${t('problemDetail')}: ${detail}`, 'meta');
      }
      if (shot) {
        const img = add(step, 'img', undefined, 'shot');
        img.src = `data:image/png;base64,${shot}`;
        img.alt = t('screenshotAlt', [record.step]);
      }
    }
    const end = task.end ? describeEnd(task.end) : { label: t('finalEnded'), text: t(task.running ? 'historyStillRunning' : 'historyInterrupted') };
    const final = add(body, 'section', undefined, end.success ? 'final' : 'final failed');
    add(final, 'div', end.label, 'label');
    const answer = add(final, 'div', undefined, end.markdown ? 'markdown' : undefined);
    if (end.markdown) answer.append(doc.importNode(markdownFragment(end.text), true));
    else answer.textContent = end.text;
  }
  return `<!doctype html>\n${doc.documentElement.outerHTML}`;
}

// One conversation drawn as a chat: each task's request, its steps (goal, actions and results,
// the screenshot as a thumbnail), questions with an answer box, what the task holds for the
// person's yes with a button per answer (consent-view.js), and how it ended.
//
// The live view follows the shown task's events (panel.js says which task that is); a past conversation opened from the history
// is drawn by the same code from what the history kept (`pastEvents`), so both look alike.
// Page and model text only ever goes in as textContent, or through markdown-view.js.
import { t, formatNumber, coreText } from '../i18n.js';
import { endText } from '../history-store.js';
import { markdownFragment } from './markdown-view.js';
import { el } from '../dom.js';
import { showProblem } from './problem-view.js';
import { consentBox, showDecision, showUnanswered } from './consent-view.js';

/** "4 steps · 12,345 tokens (9,800 from the provider's cache) · $0.0123": what a task used.
 * The cost counts cached input at its lower price (src/llm/pricing.rs). */
export function usageLine(steps, usage, cost) {
  const tokens = (usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0);
  const cached = usage?.cached_input_tokens ?? 0;
  let used = t('progressTokens', [formatNumber(tokens)]);
  if (cached > 0) used += ` ${t('usageCached', [formatNumber(cached)])}`;
  const parts = [t(steps === 1 ? 'usageStepOne' : 'usageSteps', [steps]), used];
  if (typeof cost === 'number' && tokens > 0) parts.push(`$${cost.toFixed(4)}`);
  return parts.join(' · ');
}

/** How a task ended, in a label and a text. `text` of a `done` is the model's markdown;
 * `problem`, for an end on an error, is the core's `{message, locale_text}` of it. */
export function describeEnd(end) {
  switch (end?.kind) {
    case 'done':
      return { label: t(end.success ? 'finalDone' : 'finalNoSuccess'), text: end.text, markdown: true, success: end.success };
    case 'stopped':
      return { label: t('finalStopped'), text: t('endStopped') };
    case 'step_limit':
      return { label: t('finalEnded'), text: t('endStepLimit', [end.max_steps]) };
    case 'too_many_failures': {
      // The person's words for the last failure; what the model read is its detail.
      const last = { message: end.last_error, locale_text: end.last_error_locale_text };
      return { label: t('finalEnded'), text: t('endFailures', [end.failures, coreText(last)]), problem: last };
    }
    case 'error':
      return { label: t('finalEnded'), text: coreText(end), problem: end };
    default:
      return { label: t('finalEnded'), text: endText(end) };
  }
}

/**
 * A task kept in the history as the events the live view would have drawn: started, each
 * step's record, and its end (or nothing, for a task that never ended).
 */
export function pastEvents({ task, steps }) {
  /** @type {any[]} */
  const events = [{ type: 'task_started', task_id: task.task_id, task: task.task, max_steps: task.max_steps ?? 0, replay: task.replay === true, scheduled: task.scheduled === true, model: task.model ?? '' }];
  for (const record of steps) events.push({ type: 'step_finished', record });
  if (task.end) {
    events.push({ type: 'task_finished', end: task.end, steps: task.step_count, usage: task.usage, cost_usd: task.cost_usd });
  }
  return events;
}

export class ChatView {
  /**
   * @param {HTMLElement} root where the chat is drawn
   * @param {object} [hooks] `status` hears where the task is (null label: idle; `asking`: the
   *   task waits for the user's answer); `answer` sends an answer to a question; `consent`,
   *   one to a consent;
   *   `exportControl` makes the buttons shown under a task.
   * @param {(label: string | null, running: boolean, asking?: boolean) => void} [hooks.status]
   * @param {(text: string, taskId: string | null) => Promise<boolean>} [hooks.answer]
   * @param {(id: number, answer: string, taskId: string | null) => Promise<boolean>} [hooks.consent] sends the answer
   *   to a consent; without it (a past conversation) a consent shows no buttons
   * @param {(taskId: string) => Node | null} [hooks.exportControl]
   */
  constructor(root, hooks = {}) {
    this.root = root;
    this.hooks = hooks;
    /** The task whose events are drawn now (its questions and consents are answered to it). */
    this.taskId = null;
    this.reset();
  }

  reset() {
    this.steps = new Map(); // step number → card
    this.maxSteps = 0;
    this.used = { tokens: 0, cost: null };
    this.tools = null; // the current task's buttons, moved into its final box at its end
  }

  status(label, running, asking = false) {
    this.hooks.status?.(label, running, asking);
  }

  /** "Step 3 of 100", or "Step 3" while the limit is not known. */
  stepLabel(step) {
    return this.maxSteps ? t('progressStep', [step, this.maxSteps]) : t('progressStepAlone', [step]);
  }

  /** "Step 3 of 100 · 12,345 tokens · $0.0123": where the task is and what it has used. */
  progress(step) {
    const parts = [this.stepLabel(step)];
    if (this.used.tokens) parts.push(t('progressTokens', [formatNumber(this.used.tokens)]));
    if (this.used.cost !== null) parts.push(`$${this.used.cost.toFixed(4)}`);
    return parts.join(' · ');
  }

  stepCard(step) {
    let card = this.steps.get(step);
    if (!card) {
      card = el('section', 'step');
      card.dataset.step = String(step);
      const head = el('div', 'step-head');
      head.append(el('span', 'step-number', this.stepLabel(step)), el('span', 'step-time'));
      card.append(head, el('p', 'goal thinking', t('lookingAtPage')));
      this.steps.set(step, card);
      this.root.append(card);
    }
    return card;
  }

  /** Whether a step's evaluation is worth showing: the model has nothing to judge at step 1,
   * while a replay says there how it found the elements again. */
  static evaluates(step, replay) {
    return step > 1 || replay;
  }

  static showGoal(card, text) {
    const goal = card.querySelector('.goal');
    goal.textContent = text;
    goal.classList.remove('thinking');
    return goal;
  }

  /** One part of the model's plan as the chat and the report show it, ticked off or not.
   * @param {import('tabwright-types/from-core').PlanItem} item */
  static planLine(item) {
    return `${item.done ? '☑' : '☐'} ${item.text}`;
  }

  /** The model's plan as it gave it in a step: a checklist, each part ticked off or not.
   * @param {import('tabwright-types/from-core').PlanItem[]} plan */
  static planList(plan) {
    const list = el('ul', 'plan');
    list.setAttribute('aria-label', t('planLabel'));
    for (const item of plan) list.append(el('li', item.done ? 'done' : '', ChatView.planLine(item)));
    return list;
  }

  static renderActions(card, actions) {
    const old = card.querySelector('.actions');
    const list = el('ul', 'actions');
    for (const action of actions) {
      const item = el('li', 'action');
      // What the action does, in the reader's language; what came of it was written for the
      // model (its words, as it read them) and is folded beneath, one click away.
      const described = el('code', '', coreText({ message: action.description, locale_text: action.description_locale_text }));
      if (action.result) {
        item.classList.toggle('error', Boolean(action.result.is_error));
        const more = el('details', 'action-result');
        const line = el('summary');
        line.append(el('span', 'mark', action.result.is_error ? '✗' : '✓'), ' ', described);
        const result = el('p', 'result');
        result.append(el('span', 'told', t('actionResultTold')), ' ', action.result.message);
        more.append(line, result);
        item.append(more);
      } else item.append(described);
      list.append(item);
    }
    // In the place of the list it replaces: a consent or a question asked after it stays below.
    if (old) old.replaceWith(list);
    else card.append(list);
  }

  /** The step's screenshot as a thumbnail; a click shows it at full width, another shrinks it. */
  static showScreenshot(card, record) {
    card.querySelector('.shot-button')?.remove();
    // A button, so the keyboard opens it as the mouse does; Escape makes it small again.
    const button = el('button', 'shot-button');
    button.type = 'button';
    button.setAttribute('aria-expanded', 'false');
    button.title = t('screenshotEnlarge');
    const shot = el('img', 'shot');
    shot.src = `data:image/png;base64,${record.screenshot.png_base64}`;
    shot.alt = t('screenshotAlt', [record.step]);
    button.append(shot);
    const enlarge = (large) => {
      shot.classList.toggle('large', large);
      button.setAttribute('aria-expanded', String(large));
    };
    button.addEventListener('click', () => enlarge(!shot.classList.contains('large')));
    button.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && shot.classList.contains('large')) {
        e.stopPropagation();
        enlarge(false);
      }
    });
    card.append(button);
  }

  /** The agent's question, with a box for the answer; the task waits until it is sent. */
  renderQuestion(card, question) {
    // The answer goes to the task that asked, whichever the chat shows by then.
    const asker = this.taskId;
    card.querySelector('.question')?.remove();
    const box = el('section', 'question');
    box.append(el('p', 'question-text', question));
    const form = el('form', 'answer-form');
    const input = el('textarea', 'answer-box');
    input.rows = 2;
    input.placeholder = t('answerPlaceholder');
    input.setAttribute('aria-label', t('answerLabel'));
    const send = el('button', 'primary', t('answerSend'));
    send.type = 'submit';
    form.append(input, send);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const answer = input.value.trim();
      if (!answer || !this.hooks.answer) return;
      send.disabled = true;
      if (!(await this.hooks.answer(answer, asker))) send.disabled = false;
    });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        form.requestSubmit();
      }
    });
    box.append(form);
    card.append(box);
    input.focus();
  }

  /** A consent the task waits for, in its step's card: with buttons in the live chat, focused
   * (the task waits for nothing else); a repeat of one shown replaces it. */
  renderConsent(card, consent) {
    for (const box of this.root.querySelectorAll('.consent')) {
      if (/** @type {HTMLElement} */ (box).dataset.consentId === String(consent.id) && !box.classList.contains('answered')) box.remove();
    }
    // The answer goes to the task that asked (consent ids count from 1 in every task).
    const asker = this.taskId;
    const choose = this.hooks.consent ? (answer) => this.hooks.consent(consent.id, answer, asker) : undefined;
    const box = consentBox(consent, choose);
    card.append(box);
    if (choose) /** @type {HTMLElement | null} */ (box.querySelector('button'))?.focus();
    return box;
  }

  /** A consent of the step in `card` and its answer: its box, answered, whether or not it was
   * shown asking. */
  renderDecided(card, decision) {
    const id = String(decision.consent.id);
    let box = /** @type {HTMLElement | undefined} */ ([...card.querySelectorAll('.consent')]
      .find((shown) => /** @type {HTMLElement} */ (shown).dataset.consentId === id));
    if (box?.classList.contains('answered')) return;
    if (!box) {
      box = consentBox(decision.consent);
      card.append(box);
    }
    showDecision(box, decision.answer);
  }

  /** The box of consent `id` still waiting for an answer (the latest one), or null. */
  openConsent(id) {
    const open = [...this.root.querySelectorAll('.consent:not(.answered)')]
      .filter((box) => /** @type {HTMLElement} */ (box).dataset.consentId === String(id));
    return /** @type {HTMLElement | null} */ (open.pop() ?? null);
  }

  /** Shows `consent` as waiting, unless it is shown already: for a panel that learnt of it from
   * where the task stands (`pending_consent`) rather than from the event. */
  showPendingConsent(consent) {
    if (this.openConsent(consent.id)) return;
    const card = [...this.steps.values()].pop();
    if (!card) return;
    this.renderConsent(card, consent);
    this.status(t('statusWaitingAnswer'), true, true);
  }

  renderFinal(event) {
    const end = describeEnd(event.end);
    const box = el('section', `final${end.success ? '' : ' failed'}`);
    box.append(el('span', 'label', end.label));
    // The model's answer is markdown, shown formatted (and sanitized, see markdown-view.js);
    // the panel's own messages are plain text.
    const body = el('div', end.markdown ? 'final-text markdown' : 'final-text');
    if (end.markdown) body.append(markdownFragment(end.text));
    else if (end.problem) {
      const shown = showProblem(body, end.problem, end.text);
      // The step that met the error said it already: it is said once, here.
      const last = [...this.steps.values()].pop()?.querySelector('.step-error');
      if (last?.querySelector('.problem-text')?.textContent === shown) last.remove();
    } else body.textContent = end.text;
    box.append(body);
    if (typeof event.steps === 'number') box.append(el('div', 'final-usage', usageLine(event.steps, event.usage, event.cost_usd)));
    if (this.tools) {
      box.append(...this.tools.childNodes);
      this.tools.remove();
      this.tools = null;
    }
    this.root.append(box);
  }

  /** Draws one event. */
  /** @param {import('tabwright-types/from-core').AgentEvent} event */
  render(event) {
    this.root.querySelector('.empty')?.remove();
    switch (event.type) {
      case 'task_started': {
        this.reset();
        this.taskId = event.task_id;
        this.maxSteps = event.max_steps;
        this.replay = event.replay === true;
        this.root.append(el('div', 'bubble', event.task));
        // A schedule started it, not the person.
        if (event.scheduled) this.root.append(el('div', 'task-model task-scheduled', t('taskScheduled')));
        // A replay runs without the model.
        if (event.model && !this.replay) this.root.append(el('div', 'task-model', t('taskModel', [event.model])));
        const control = this.hooks.exportControl?.(event.task_id);
        if (control) {
          this.tools = el('div', 'task-tools');
          this.tools.append(control);
          this.root.append(this.tools);
        }
        this.status(t('statusRunning'), true);
        break;
      }
      case 'step_started':
        this.stepCard(event.step);
        this.status(this.progress(event.step), true);
        break;
      case 'step_planned': {
        const card = this.stepCard(event.step);
        const goal = ChatView.showGoal(card, event.thoughts.next_goal);
        if (event.thoughts.evaluation_previous_goal && ChatView.evaluates(event.step, this.replay)) {
          card.querySelector('.eval')?.remove();
          goal.before(el('p', 'eval', event.thoughts.evaluation_previous_goal));
        }
        ChatView.renderActions(card, event.actions);
        break;
      }
      case 'step_finished': {
        const record = event.record;
        const card = this.stepCard(record.step);
        const goal = ChatView.showGoal(card, record.output ? record.output.next_goal : t('noActionThisStep'));
        const evaluation = record.output?.evaluation_previous_goal;
        if (evaluation && ChatView.evaluates(record.step, this.replay) && !card.querySelector('.eval')) {
          goal.before(el('p', 'eval', evaluation));
        }
        card.querySelector('.plan')?.remove();
        if (record.output?.plan?.length) goal.after(ChatView.planList(record.output.plan));
        ChatView.renderActions(card, record.actions);
        // What the person was asked in the step and answered, as the record keeps it: a past
        // conversation's only account of it, and a panel's that missed the events.
        for (const decision of record.decisions ?? []) this.renderDecided(card, decision);
        card.querySelector('.step-error')?.remove();
        if (record.error) {
          const problem = el('div', 'step-error');
          showProblem(problem, { message: record.error, locale_text: record.error_locale_text });
          card.append(problem);
        }
        if (record.screenshot?.png_base64) ChatView.showScreenshot(card, record);
        this.used.tokens += (record.usage?.input_tokens ?? 0) + (record.usage?.output_tokens ?? 0);
        if (typeof record.cost_usd === 'number') this.used.cost = (this.used.cost ?? 0) + record.cost_usd;
        this.status(this.progress(record.step), true);
        const time = record.timings;
        if (time) card.querySelector('.step-time').textContent = `${((time.observe_ms + time.llm_ms + time.act_ms) / 1000).toFixed(1)} s`;
        break;
      }
      case 'task_restored': {
        // A consent the stopped worker was waiting for is asked again by the step done again.
        for (const box of this.root.querySelectorAll('.consent:not(.answered)')) box.remove();
        // The step under way when the worker stopped is done again: the note goes before it.
        const note = el('p', 'restored', t('restoredNote', [event.step, event.steps_kept]));
        const redone = this.steps.get(event.step);
        if (redone) redone.before(note);
        else this.root.append(note);
        this.status(this.progress(event.step), true);
        break;
      }
      case 'history_compacted':
        this.root.append(el('p', 'restored', t('compactedNote', [event.summary.through_step])));
        break;
      case 'task_paused':
        this.status(t('statusPaused'), true);
        break;
      case 'task_resumed':
        this.status(this.progress(event.step), true);
        break;
      case 'question_asked':
        this.renderQuestion(this.stepCard(event.step), event.question);
        this.status(t('statusWaitingAnswer'), true, true);
        break;
      case 'question_answered': {
        const box = this.stepCard(event.step).querySelector('.question');
        if (box) {
          box.querySelector('form')?.remove();
          box.append(el('p', 'answer', event.answer));
          box.classList.add('answered');
        }
        this.status(t('statusRunning'), true);
        break;
      }
      case 'consent_asked':
        this.renderConsent(this.stepCard(event.step), event.consent);
        this.status(t('statusWaitingAnswer'), true, true);
        break;
      case 'consent_answered': {
        const box = this.openConsent(event.id);
        if (box) showDecision(box, event.answer);
        this.status(t('statusRunning'), true);
        break;
      }
      case 'task_finished':
        this.renderFinal(event);
        for (const form of this.root.querySelectorAll('.question form')) form.remove();
        for (const box of this.root.querySelectorAll('.consent:not(.answered)')) showUnanswered(box);
        this.status(event.end.kind === 'done' ? t('statusDone') : null, false);
        break;
      default:
        break;
    }
  }

  /** Draws a task kept in the history; a task that never ended says so. */
  renderPast(kept) {
    for (const event of pastEvents(kept)) this.render(event);
    if (!kept.task.end) {
      const note = kept.task.running ? t('historyStillRunning') : t('historyInterrupted');
      this.root.append(el('p', 'restored', note));
    }
  }
}

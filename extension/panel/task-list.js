// The list of tasks the worker holds, as the panel shows it: the tasks that run (each a button
// that shows it in the chat, the one shown marked), and the queue (each with a way to take it
// back). The worker sends the list whenever it changes (src/worker/mod.rs, `TaskSummary`);
// nothing here decides anything: a click only says which task to show or which to cancel.
import { t, formatNumber } from '../i18n.js';
import { el } from '../dom.js';

/** @typedef {import('tabwright-types/from-core').TaskSummary} TaskSummary */

const ACTIVE = new Set(['running', 'paused', 'waiting']);
// The words for the states of the tasks the list shows (those that run).
const STATUS_KEYS = { running: 'taskStatusRunning', paused: 'taskStatusPaused', waiting: 'taskStatusWaiting' };

export class TaskList {
  /**
   * @param {{list: HTMLElement, queue: HTMLElement, show: (taskId: string) => void, cancel: (taskId: string) => void}} parts
   */
  constructor({ list, queue, show, cancel }) {
    this.list = list;
    this.queue = queue;
    this.hooks = { show, cancel };
    /** @type {TaskSummary[]} */
    this.tasks = [];
    this.shown = null;
  }

  /** The task with this id, if the worker holds it. */
  find(taskId) {
    return this.tasks.find((task) => task.task_id === taskId) ?? null;
  }

  /** The running task that works in tab `tabId`, if one does. */
  inTab(tabId) {
    return this.tasks.find((task) => ACTIVE.has(task.status) && task.tabs.includes(tabId)) ?? null;
  }

  /** Takes the worker's list and the task the chat shows, and draws both lists. */
  update(tasks = this.tasks, shown = this.shown) {
    this.tasks = tasks;
    this.shown = shown;
    const active = tasks.filter((task) => ACTIVE.has(task.status));
    // One task that runs and is shown needs no list: the chat is it.
    const listed = active.length > 1 || active.some((task) => task.task_id !== shown) ? active : [];
    this.list.replaceChildren(...listed.map((task) => this.row(task)));
    this.list.hidden = !listed.length;
    const queued = tasks.filter((task) => task.status === 'queued');
    this.queue.replaceChildren(...queued.map((task) => this.queuedRow(task)));
    this.queue.hidden = !queued.length;
  }

  /** A running task's button: its state, its step and cost, its words. */
  row(task) {
    const item = el('li', 'task-item');
    const button = el('button', 'task-switch');
    button.type = 'button';
    button.dataset.taskId = task.task_id;
    button.dataset.status = task.status;
    if (task.task_id === this.shown) button.setAttribute('aria-current', 'true');
    // The step under way, as the status pill counts it.
    const facts = [t(STATUS_KEYS[task.status]), t('progressStepAlone', [formatNumber(task.step + 1)])];
    if (typeof task.cost_usd === 'number') facts.push(`$${task.cost_usd.toFixed(task.cost_usd < 0.1 ? 3 : 2)}`);
    button.append(el('span', 'task-dot'), el('span', 'task-facts', facts.join(' · ')), el('span', 'task-words', task.task));
    // Its name is what it shows (state, step, words); the tooltip says what a click does.
    button.title = t('showTask', [task.task.slice(0, 80), facts.join(', ')]);
    button.addEventListener('click', () => this.hooks.show(task.task_id));
    item.append(button);
    return item;
  }

  /** A queued task, with Cancel. */
  queuedRow(task) {
    const row = el('li', 'queued');
    row.dataset.taskId = task.task_id;
    row.append(el('span', 'queued-label', t('queuedLabel')), el('span', 'queued-task', task.task));
    const cancel = el('button', 'link-button', t('queuedCancel'));
    cancel.type = 'button';
    cancel.setAttribute('aria-label', t('queuedCancelTask', [task.task.slice(0, 80)]));
    cancel.addEventListener('click', () => this.hooks.cancel(task.task_id));
    row.append(cancel);
    return row;
  }
}

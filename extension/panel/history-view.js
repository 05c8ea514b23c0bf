// The history list: every conversation kept in IndexedDB (history-store.js), newest first,
// searchable, each with Open, exports (JSON, and an HTML report with the screenshots) and
// Delete. It reads the store directly: the panel shares the worker's origin, so the list is the
// same after the browser restarts.
import { conversationGif } from './gif-export.js';
import { t, formatTime } from '../i18n.js';
import { listSessions, exportSession, getSession, sessionFileName, deleteSession } from '../history-store.js';
import { el, onSecondClick } from '../dom.js';
import { sessionReportHtml } from './report.js';
import { download } from '../download.js';

/** Downloads a conversation as JSON. */
export async function downloadSessionJson(conversationId) {
  const data = await exportSession(conversationId);
  if (!data) throw new Error(t('exportTaskMissing'));
  download(JSON.stringify(data, null, 2), 'application/json', sessionFileName(conversationId, 'json'));
}

/** Downloads a conversation as an animated GIF, a frame per step (gif-export.js). */
export async function downloadSessionGif(conversationId) {
  const gif = await conversationGif(await getSession(conversationId));
  if (!gif) throw new Error(t('exportTaskMissing'));
  download(gif, 'image/gif', sessionFileName(conversationId, 'gif'));
}

/** Downloads a conversation as a self-contained HTML report. */
export async function downloadSessionReport(conversationId) {
  const tasks = await getSession(conversationId);
  if (!tasks.length) throw new Error(t('exportTaskMissing'));
  download(sessionReportHtml(tasks), 'text/html', sessionFileName(conversationId, 'html'));
}

export class HistoryView {
  /**
   * @param {HTMLElement} root the section the list is drawn in (holding a search box
   *   `.history-search` and a list `.history-list`)
   * @param {{open: (conversationId: string) => void, notice: (message: string) => void}} hooks
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.search = /** @type {HTMLInputElement} */ (root.querySelector('.history-search'));
    this.list = /** @type {HTMLElement} */ (root.querySelector('.history-list'));
    this.query = '';
    this.search.addEventListener('input', () => {
      clearTimeout(this.typing);
      this.typing = setTimeout(() => this.show(this.search.value), 150);
    });
  }

  /** Lists the conversations matching `query` (every word, in any order). */
  async show(query = this.query) {
    this.query = query;
    let sessions;
    try {
      sessions = await listSessions(query);
    } catch (error) {
      this.list.replaceChildren(el('p', 'empty', error?.message ?? String(error)));
      return;
    }
    if (query !== this.query) return; // a newer search is under way
    // What the list shows, for anyone waiting on it.
    this.list.dataset.query = query;
    if (!sessions.length) {
      const text = query.trim() ? t('historyNoMatch', [query.trim()]) : t('historyEmpty');
      this.list.replaceChildren(el('p', 'empty', text));
      return;
    }
    this.list.replaceChildren(...sessions.map((session) => this.item(session)));
  }

  item(session) {
    const item = el('li', 'session');
    item.dataset.conversationId = session.conversation_id;
    const open = el('button', 'session-open');
    open.type = 'button';
    open.append(el('span', 'session-title', session.title || '—'));
    const when = formatTime(session.last_at);
    const tasks = session.tasks.length;
    const parts = [when, t(session.step_count === 1 ? 'usageStepOne' : 'usageSteps', [session.step_count])];
    if (typeof session.cost_usd === 'number') parts.push(`$${session.cost_usd.toFixed(4)}`);
    if (tasks > 1) parts.push(t('historyTaskCount', [tasks]));
    if (session.running) parts.push(t('historyRunning'));
    // A conversation a schedule started, not the person.
    if (session.tasks.some((task) => task.scheduled)) parts.push(t('historyScheduled'));
    open.append(el('span', 'session-meta', parts.join(' · ')));
    open.title = t('historyOpenTitle');
    open.addEventListener('click', () => this.hooks.open(session.conversation_id));
    const tools = el('div', 'session-tools');
    tools.append(
      this.button('historyExportJson', 'historyExportJsonTitle', () => downloadSessionJson(session.conversation_id)),
      this.button('historyExportReport', 'historyExportReportTitle', () => downloadSessionReport(session.conversation_id)),
      this.deleteButton(session),
    );
    item.append(open, tools);
    return item;
  }

  button(label, title, action) {
    const button = el('button', 'link-button', t(label));
    button.type = 'button';
    button.title = t(title);
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        await action();
      } catch (error) {
        this.hooks.notice(t('historyActionFailed', [error?.message ?? String(error)]));
      } finally {
        button.disabled = false;
      }
    });
    return button;
  }

  /** Delete asks once more in place ("Delete 3 tasks?") before it deletes. */
  deleteButton(session) {
    const button = el('button', 'link-button danger-link', t('historyDelete'));
    button.type = 'button';
    button.title = t('historyDeleteTitle');
    onSecondClick(button, t('historyDeleteConfirm', [session.tasks.length]), async () => {
      button.disabled = true;
      try {
        await deleteSession(session.conversation_id);
        await this.show();
      } catch (error) {
        this.hooks.notice(t('historyActionFailed', [error?.message ?? String(error)]));
        button.disabled = false;
      }
    });
    return button;
  }
}

// The options page's coding agents (MCP, src/worker/clients.rs): the switch that lets them in
// at all, what becomes of a disconnected agent's tasks, and the agents the person answered,
// each to allow, deny or forget (a forgotten agent is asked about again when it next connects).
// The page reads what is stored under `mcp` to draw itself, so opening it starts no worker;
// every change is the core's, asked through the worker. Names came from the agents: textContent.
import { t, formatTime } from '../i18n.js';
import { el } from '../dom.js';
import { askCore } from '../core-client.js';

/** @typedef {import('tabwright-types/from-core').ClientEntry} ClientEntry */

/** Where the core keeps the switch and the answers. */
const CLIENTS_KEY = 'mcp';

/** @param {Element | null} section */
export async function showClients(section) {
  if (!section) return;
  const enabled = /** @type {HTMLInputElement} */ (section.querySelector('#clients-enabled'));
  const stop = /** @type {HTMLInputElement} */ (section.querySelector('#clients-stop'));
  const list = /** @type {HTMLElement} */ (section.querySelector('#clients'));
  const problem = /** @type {HTMLElement} */ (section.querySelector('#clients-problem'));

  /** Draws the book: the switch, the choice, the agents answered. */
  const draw = (/** @type {{enabled?: boolean, stop_on_disconnect?: boolean, clients?: ClientEntry[]}} */ book) => {
    enabled.checked = book.enabled !== false;
    stop.checked = book.stop_on_disconnect === true;
    const clients = book.clients ?? [];
    list.replaceChildren(...clients.map((client) => row(client)));
    if (!clients.length) list.append(el('li', 'hint', t('optClientsNone')));
  };

  /** Asks the core for a change and draws what it answers. */
  const change = async (/** @type {import('../core-client.js').Request} */ request) => {
    const reply = await askCore(request);
    if (reply.type === 'clients') {
      problem.textContent = '';
      draw(reply);
    } else if (reply.type === 'refused') {
      problem.textContent = reply.message;
    }
  };

  const row = (/** @type {ClientEntry} */ client) => {
    const item = el('li', 'schedule');
    const who = client.title?.trim() || client.name;
    const state = client.allowed ? t('optClientAllowed') : t('optClientDenied');
    const when = client.answered_ms ? ` · ${formatTime(client.answered_ms)}` : '';
    item.append(el('strong', '', who), el('span', 'hint', ` ${state}${when}`));
    const buttons = el('div', 'row');
    const button = (/** @type {string} */ label, /** @type {() => void} */ act) => {
      const b = el('button', '', label);
      b.type = 'button';
      b.setAttribute('aria-label', `${label}: ${who}`);
      b.addEventListener('click', act);
      buttons.append(b);
    };
    if (client.allowed) button(t('clientDeny'), () => change({ type: 'answer_client', name: client.name, allow: false }));
    else button(t('clientAllow'), () => change({ type: 'answer_client', name: client.name, allow: true }));
    button(t('optClientForget'), () => change({ type: 'forget_client', name: client.name }));
    item.append(buttons);
    return item;
  };

  const setOptions = () => change({ type: 'set_client_options', enabled: enabled.checked, stop_on_disconnect: stop.checked });
  enabled.addEventListener('change', setOptions);
  stop.addEventListener('change', setOptions);
  const stored = await chrome.storage.local.get(CLIENTS_KEY).catch(() => ({}));
  draw(stored[CLIENTS_KEY] ?? {});
}

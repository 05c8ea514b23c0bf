// The options page's coding agents (MCP, src/worker/clients.rs): the switch that lets them in
// at all, what becomes of a disconnected agent's tasks, and the agents the person answered,
// each to allow, deny or forget (a forgotten agent is asked about again when it next connects).
// The page draws what is stored under `mcp` at once, then what the core answers to
// `list_clients`, and again whenever the stored book changes (an answer given in the side
// panel); every change is the core's, asked through the worker. Names came from the agents:
// textContent.
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
  const stop = /** @type {HTMLSelectElement} */ (section.querySelector('#clients-stop'));
  const list = /** @type {HTMLElement} */ (section.querySelector('#clients'));
  const problem = /** @type {HTMLElement} */ (section.querySelector('#clients-problem'));

  /** Draws the book: the switch, the choice, the agents answered. */
  const draw = (/** @type {{enabled?: boolean, stop_on_disconnect?: boolean, clients?: ClientEntry[]}} */ book) => {
    enabled.checked = book.enabled !== false;
    stop.value = book.stop_on_disconnect === true ? 'stop' : 'keep';
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
    item.append(el('strong', '', who), el('span', 'hint', `${state}${when}`));
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

  const setOptions = () =>
    change({ type: 'set_client_options', enabled: enabled.checked, stop_on_disconnect: stop.value === 'stop' });
  enabled.addEventListener('change', setOptions);
  stop.addEventListener('change', setOptions);
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === 'local' && CLIENTS_KEY in changes) draw(changes[CLIENTS_KEY].newValue ?? {});
  });
  const stored = await chrome.storage.local.get(CLIENTS_KEY).catch(() => ({}));
  draw(stored[CLIENTS_KEY] ?? {});
  // The core's own list (the book as it holds it); a worker that cannot answer leaves the
  // stored one drawn.
  const reply = await askCore({ type: 'list_clients' });
  if (reply.type === 'clients') draw(reply);
}

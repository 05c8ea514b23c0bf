// The coding agents that ask to use Tabwright (MCP, src/worker/clients.rs): a card each at the
// top of the chat, "Claude Code wants to use Tabwright in this browser", Allow or Deny. Until
// the person answers, the agent's requests wait; the answer is kept, and the options list it.
// The cards come from `get_status`'s `clients_asking` and from the worker's broadcast of it.
//
// Each card is an alertdialog named by its heading and described by what the agent could do,
// like a task's consent box.
import { t } from '../i18n.js';
import { el } from '../dom.js';
import { askCore as ask } from '../core-client.js';

/** @typedef {import('tabwright-types/from-core').ClientAsking} ClientAsking */

export class ClientCards {
  /** @param {HTMLElement} place where the cards go */
  constructor(place) {
    this.place = place;
    /** @type {Map<string, HTMLElement>} */
    this.cards = new Map();
    this.made = 0;
  }

  /** Shows a card for each client in `asking`, and none for others.
   * @param {ClientAsking[]} asking */
  update(asking) {
    const names = new Set(asking.map((client) => client.name));
    let hadFocus = false;
    for (const [name, card] of this.cards) {
      if (!names.has(name)) {
        hadFocus ||= card.contains(document.activeElement) || card.dataset.answering === 'true';
        card.remove();
        this.cards.delete(name);
      }
    }
    for (const client of asking) {
      if (!this.cards.has(client.name)) {
        const card = this.card(client);
        this.cards.set(client.name, card);
        this.place.append(card);
      }
    }
    this.place.hidden = this.cards.size === 0;
    // The person answered here: the next agent asking keeps their place, if one does.
    if (hadFocus) this.place.querySelector('button')?.focus();
  }

  /** @param {ClientAsking} client */
  card(client) {
    const id = `client-card-${++this.made}`;
    const who = client.title?.trim() || client.name;
    const box = el('section', 'consent client-card');
    box.dataset.client = client.name;
    box.setAttribute('role', 'alertdialog');
    box.setAttribute('aria-labelledby', `${id}-title`);
    box.setAttribute('aria-describedby', `${id}-what`);
    const title = el('h3', 'consent-title', t('clientAsksTitle', [who]));
    title.id = `${id}-title`;
    const what = el('p', 'consent-why', t('clientAsksWhat'));
    what.id = `${id}-what`;
    const choices = el('div', 'consent-choices');
    for (const [allow, label] of [[true, t('clientAllow')], [false, t('clientDeny')]]) {
      const button = el('button', allow ? 'consent-choice' : 'consent-choice deny', label);
      button.type = 'button';
      button.addEventListener('click', async () => {
        for (const b of choices.querySelectorAll('button')) b.disabled = true;
        box.dataset.answering = 'true';
        const reply = await ask({ type: 'answer_client', name: client.name, allow });
        if (reply.type === 'clients') {
          this.update(reply.asking);
        } else if (choices.isConnected) {
          // Refused (or the worker could not be reached): the person can answer again.
          for (const b of choices.querySelectorAll('button')) b.disabled = false;
          delete box.dataset.answering;
          button.focus();
        }
      });
      choices.append(button);
    }
    box.append(title, what, choices);
    return box;
  }
}

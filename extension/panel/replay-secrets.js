// A replay repeats what a conversation typed, and a password typed as itself was never kept
// (the history shows •••). Before such a replay runs, the person gives each password once: it
// is saved as a secret for its site in Tabwright's settings (`save_secret`, checked by the
// core as the options page's are), and the replay types it from there as `<secret>name</secret>`,
// which the core fills in on that site alone.
import { t, coreText } from '../i18n.js';
import { el } from '../dom.js';
import { askCore } from '../core-client.js';

/** How the history shows a password typed as itself (src/agent/replay.rs, MASKED). */
export const MASKED = '•••';

/** A secret's default name for `site`: letters, digits and `_`, as the core takes names. */
const nameFor = (site) => `${site.replace(/[^a-z0-9]+/gi, '_').replace(/^_+|_+$/g, '')}_password`.toLowerCase();

export class ReplaySecrets {
  /** `container`: an element the form fills (hidden while closed). */
  constructor(container) {
    this.container = container;
    this.container.hidden = true;
    this.cancel = null;
    this.container.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !this.container.hidden) {
        e.stopPropagation();
        this.cancel?.();
      }
    });
  }

  close() {
    this.container.hidden = true;
    this.container.replaceChildren();
    this.cancel = null;
  }

  /**
   * Asks for the password of each of `sites` and saves each as a secret for its site.
   * Resolves with a Map site → secret name once all are saved; null when the person cancels.
   * @param {string[]} sites
   * @returns {Promise<Map<string, string> | null>}
   */
  ask(sites) {
    this.close();
    this.container.hidden = false;
    return new Promise((resolve) => {
      const form = el('form', 'skill-form secret-form');
      form.append(el('h3', null, t('replaySecretsTitle')), el('p', 'hint', t('replaySecretsNote')));
      const rows = sites.map((site) => {
        const name = el('input');
        name.type = 'text';
        name.value = nameFor(site);
        name.spellcheck = false;
        name.setAttribute('aria-label', t('replaySecretName', [site]));
        const value = el('input');
        value.type = 'password';
        value.autocomplete = 'off';
        value.required = true;
        value.setAttribute('aria-label', t('replaySecretValue', [site]));
        const row = el('fieldset', 'secret-site');
        const nameLabel = el('label', null, t('secretName'));
        nameLabel.append(name);
        const valueLabel = el('label', null, t('secretValue'));
        valueLabel.append(value);
        row.append(el('legend', null, site), nameLabel, valueLabel);
        form.append(row);
        return { site, name, value };
      });
      const status = el('p', 'skill-status');
      status.setAttribute('role', 'status');
      const save = el('button', 'primary', t('replaySecretsSave'));
      save.type = 'submit';
      const cancel = el('button', null, t('skillCancel'));
      cancel.type = 'button';
      this.cancel = () => {
        this.close();
        resolve(null);
      };
      cancel.addEventListener('click', () => this.cancel?.());
      const buttons = el('div', 'skill-buttons');
      buttons.append(save, cancel);
      form.append(status, buttons);
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        save.disabled = true;
        const names = new Map();
        for (const { site, name, value } of rows) {
          const reply = await askCore({ type: 'save_secret', name: name.value.trim(), value: value.value, site });
          if (reply.type !== 'secret_saved') {
            status.className = 'skill-status error';
            status.textContent = coreText(reply) || t('workerNoAnswer');
            const key = reply.type === 'refused' ? reply.locale_text?.key : undefined;
            (key === 'safety_empty_secret_value' ? value : name).setAttribute('aria-invalid', 'true');
            save.disabled = false;
            return;
          }
          names.set(site, reply.name);
        }
        this.close();
        resolve(names);
      });
      form.addEventListener('input', (e) => /** @type {Element} */ (e.target).removeAttribute?.('aria-invalid'));
      this.container.append(form);
      rows[0]?.value.focus();
    });
  }
}

// The side panel's choice of model for the next task: the model saved in the options (the
// default), the other models the options name (fallback, extraction), and — asked for the first
// time the person opens the choice — the models the provider lists. The chosen name goes with
// the next start_task request; the core checks it and runs that task with it, everything else
// (provider, key, fallback) as saved. The choice holds while the panel is open.
//
// The saved names are read from the options' own storage (display only): asking the core would
// start the worker and its core at every panel opening.
import { t, coreText } from '../i18n.js';
import { askCore } from '../core-client.js';
import { el } from '../dom.js';

export class ModelChoice {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.row the row holding the label, the select and the note
   * @param {HTMLSelectElement} parts.select
   * @param {HTMLElement} parts.note
   */
  constructor({ row, select, note }) {
    this.row = row;
    this.select = select;
    this.note = note;
    this.saved = '';
    this.configured = [];
    this.listed = null; // the provider's models once asked; [] when it has no list
    this.asking = null;
    select.addEventListener('focus', () => this.listProviderModels());
    select.addEventListener('pointerdown', () => this.listProviderModels());
    select.addEventListener('change', () => { select.title = select.value || this.saved; });
    chrome.storage.onChanged.addListener((changes, area) => {
      if (area === 'local' && changes.settings) {
        // Another provider or key may list other models: ask again when next opened.
        this.listed = null;
        this.load();
      }
    });
  }

  /** Reads the saved settings' model names and draws the choice, keeping what was chosen when
   * it is still offered. */
  async load() {
    const { settings } = await chrome.storage.local.get('settings').catch(() => ({ settings: undefined }));
    const llm = /** @type {import('tabwright-types/to-core').StoredSettings | undefined} */ (settings)?.llm ?? {};
    this.saved = String(llm.model ?? '').trim();
    this.configured = [llm.fallback_model, llm.extraction_model]
      .map((m) => String(m ?? '').trim())
      .filter((m, i, all) => m && m !== this.saved && all.indexOf(m) === i);
    this.draw();
  }

  /** The model to send with the next task, or null for the saved one. */
  chosen() {
    return this.row.hidden || !this.select.value ? null : this.select.value;
  }

  draw() {
    const keep = this.select.value;
    // No model saved yet: nothing to choose from (the task's start says what to set up).
    this.row.hidden = !this.saved;
    const saved = el('option', null, t('modelSaved', [this.saved]));
    saved.value = '';
    const groups = [saved];
    if (this.configured.length) groups.push(this.group(t('modelConfigured'), this.configured));
    const others = (this.listed ?? []).filter((m) => m !== this.saved && !this.configured.includes(m));
    if (others.length) groups.push(this.group(t('modelsFromProvider'), others));
    this.select.replaceChildren(...groups);
    this.select.value = [...this.select.options].some((o) => o.value === keep) ? keep : '';
    this.select.title = this.select.value || this.saved;
  }

  group(label, models) {
    const group = document.createElement('optgroup');
    group.label = label;
    for (const model of models) {
      const option = el('option', null, model);
      option.value = model;
      group.append(option);
    }
    return group;
  }

  /** Asks the core for the provider's models (the saved settings'), once until they change. */
  listProviderModels() {
    if (this.listed || this.asking || this.row.hidden) return;
    this.note.textContent = t('modelsLoading');
    this.asking = askCore({ type: 'list_models' })
      .then((reply) => {
        if (reply.type === 'models') {
          this.listed = reply.models;
          this.note.textContent = '';
          this.draw();
        } else {
          this.note.textContent = t('modelsUnavailable', [reply.type === 'refused' ? coreText(reply) : reply.type]);
        }
      })
      .catch((error) => {
        this.note.textContent = t('modelsUnavailable', [error?.message ?? String(error)]);
      })
      .finally(() => {
        this.asking = null;
      });
  }
}

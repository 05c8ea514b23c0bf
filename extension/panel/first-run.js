// The first run, inside the side panel: with no model configured, the panel opens on a short
// setup instead of the chat — provider, its address where it needs one, the API key (with a
// link to where the provider gives them), the model chosen from the provider's own list, Test —
// and saves the few settings a task needs; everything else keeps its default and lives on the
// options page. The core checks each step as it does the options page's (`list_models`,
// `test_connection`, `check_settings`).
import { t, coreText } from '../i18n.js';
import { el } from '../dom.js';
import { askCore } from '../core-client.js';
import { PROVIDERS } from '../providers.js';
import { listModels } from '../model-list.js';

/** @typedef {import('tabwright-types/to-core').StoredSettings} StoredSettings */

/** The settings as stored (none saved yet: an empty object). */
async function storedSettings() {
  const { settings } = await chrome.storage.local.get('settings');
  return /** @type {StoredSettings} */ (settings ?? {});
}

/** Whether the saved settings name no model: nothing a task could run with. */
export async function setupNeeded() {
  const settings = await storedSettings();
  return !String(settings.llm?.model ?? '').trim();
}

export class FirstRun {
  /**
   * @param {HTMLElement} root the view the setup fills
   * @param {{done: () => void}} hooks `done`: the settings are saved and work
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.listed = 0;
    this.timer = null;
  }

  show() {
    const form = el('form', 'setup-form');
    form.append(el('h2', null, t('setupTitle')), el('p', 'hint', t('setupIntro')));
    // A field: its label (holding the input, which it names), then a hint beside it.
    const field = (label, input, hint) => {
      const row = el('div', 'setup-field');
      const named = el('label', null, label);
      named.append(input);
      row.append(named);
      if (hint) row.append(hint);
      return row;
    };
    const provider = /** @type {HTMLSelectElement} */ (el('select'));
    const names = { openai: 'providerOpenai', openai_compatible: 'providerCompatible', azure_openai: 'providerAzure', anthropic: 'providerAnthropic', gemini: 'providerGemini', ollama: 'providerOllama' };
    for (const [value, name] of Object.entries(names)) provider.append(Object.assign(el('option', null, t(name)), { value }));
    const providerHint = el('span', 'hint');
    const baseUrl = /** @type {HTMLInputElement} */ (el('input'));
    baseUrl.type = 'url';
    baseUrl.spellcheck = false;
    const baseRow = field(t('optBaseUrl'), baseUrl);
    const apiVersion = /** @type {HTMLInputElement} */ (el('input'));
    apiVersion.placeholder = '2024-10-21';
    const versionRow = field(t('optApiVersion'), apiVersion);
    const key = /** @type {HTMLInputElement} */ (el('input'));
    key.type = 'password';
    key.autocomplete = 'off';
    const keyLink = /** @type {HTMLAnchorElement} */ (el('a', 'setup-link', t('setupGetKey')));
    keyLink.target = '_blank';
    keyLink.rel = 'noopener noreferrer';
    const keyRow = field(t('optApiKey'), key, keyLink);
    const model = /** @type {HTMLInputElement} */ (el('input'));
    model.required = true;
    model.spellcheck = false;
    model.autocomplete = 'off';
    const list = el('datalist');
    list.id = 'setup-models';
    model.setAttribute('list', list.id);
    const modelHint = el('span', 'hint');
    modelHint.setAttribute('role', 'status');
    const modelRow = field(t('optModel'), model, modelHint);
    modelRow.append(list);
    const status = el('p', 'setup-status');
    status.setAttribute('role', 'status');
    const test = el('button', 'secondary', t('optTestConnection'));
    test.type = 'button';
    const save = el('button', 'primary', t('setupSave'));
    save.type = 'submit';
    const more = el('button', 'link-button', t('setupAllSettings'));
    more.type = 'button';
    more.addEventListener('click', () => chrome.runtime.openOptionsPage());
    // The chat without a model: a task then says what to set, with the way to the settings.
    const later = el('button', 'link-button', t('setupLater'));
    later.type = 'button';
    later.addEventListener('click', () => {
      this.root.replaceChildren();
      this.hooks.done();
    });
    const buttons = el('div', 'setup-buttons');
    buttons.append(test, save, more, later);
    form.append(field(t('optProvider'), provider, providerHint), baseRow, versionRow, keyRow, modelRow, status, buttons);

    const llm = () => ({
      provider: provider.value, base_url: baseUrl.value.trim(), api_version: apiVersion.value.trim(),
      model: model.value.trim(), api_key: key.value.trim(),
    });
    const say = (text, kind = '') => {
      status.className = `setup-status ${kind}`;
      status.textContent = text;
    };
    const follow = () => {
      const p = PROVIDERS[provider.value];
      providerHint.textContent = p.hint;
      baseUrl.placeholder = t(p.ownAddress ? 'placeholderDefault' : 'placeholderExample', [p.baseUrl]);
      baseUrl.required = !p.ownAddress;
      // The usual address is the default: the field shows only where there is none to assume,
      // and for a local server, which may listen elsewhere.
      baseRow.hidden = p.ownAddress && provider.value !== 'ollama';
      versionRow.hidden = provider.value !== 'azure_openai';
      keyRow.hidden = provider.value === 'ollama';
      keyLink.hidden = !p.keyUrl;
      if (p.keyUrl) keyLink.href = p.keyUrl;
      key.placeholder = p.key;
      model.placeholder = p.model ? t('placeholderExample', [p.model]) : t('modelAzure');
    };
    // The provider's models, asked of it with what is typed so far (as the options page does);
    // the first is offered while no model is typed.
    const offerModels = async () => {
      const asked = ++this.listed;
      const models = await listModels(llm(), list, modelHint, () => asked === this.listed);
      if (models?.length && !model.value) model.value = models[0];
    };
    const listSoon = () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(offerModels, 600);
    };
    provider.addEventListener('change', () => {
      follow();
      model.value = '';
      say('');
      listSoon();
    });
    for (const input of [baseUrl, key, apiVersion]) input.addEventListener('input', listSoon);
    test.addEventListener('click', async () => {
      if (!form.reportValidity()) return;
      test.disabled = true;
      say(t('connectionChecking'));
      const reply = await askCore({ type: 'test_connection', settings: { llm: llm() } });
      test.disabled = false;
      if (reply.type === 'connection_works') say(t('connectionWorks', [reply.model, reply.ms]), 'ok');
      else say(coreText(reply) || t('workerNoAnswer'), 'error');
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      save.disabled = true;
      const stored = await storedSettings();
      const settings = { ...stored, llm: { ...(stored.llm ?? {}), ...llm() } };
      const check = await askCore({ type: 'check_settings', settings });
      if (check.type === 'refused') {
        say(coreText(check) || t('workerNoAnswer'), 'error');
        save.disabled = false;
        return;
      }
      await chrome.storage.local.set({ settings });
      this.root.replaceChildren();
      this.hooks.done();
    });
    follow();
    this.root.replaceChildren(form);
    provider.focus();
  }
}

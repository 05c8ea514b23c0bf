// The options page: reads and writes the `settings` object in chrome.storage.local that the
// core checks at the start of every task (and, after each save, at once: the page shows what
// the core would refuse). The API key may instead live in chrome.storage.session (until the
// browser closes). Secret values are written, never shown back. Every string comes from
// _locales (i18n.js).
import { t, localize, coreText } from '../i18n.js';
import { download } from '../download.js';
import { askCore } from '../core-client.js';
import { showSkills } from './skills-list.js';
import { showSchedules } from './schedules.js';
import { showClients } from './clients.js';
import { PROVIDERS, providerName } from '../providers.js';
import { listModels } from '../model-list.js';

/** @typedef {import('tabwright-types/to-core').StoredSettings} StoredSettings */

localize();
// A number left empty is its default: said as one, not shown as a value to accept.
for (const input of document.querySelectorAll('input[type="number"][placeholder]')) {
  const number = /** @type {HTMLInputElement} */ (input);
  number.placeholder = t('placeholderDefault', [number.placeholder]);
}

const form = document.getElementById('settings');
const saved = document.getElementById('saved');
/** The form's field with this id (an input, a select or a text area: all have a `value`). */
const field = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (document.getElementById(id));
/** The field matching `selector` inside `row`. */
const inRow = (/** @type {Element} */ row, /** @type {string} */ selector) =>
  /** @type {HTMLInputElement} */ (row.querySelector(selector));

/** The settings as stored (none saved yet: an empty object). */
async function storedSettings() {
  const { settings } = await chrome.storage.local.get('settings');
  return /** @type {StoredSettings} */ (settings ?? {});
}
// Limit fields and their keys in the stored settings; empty means the default.
const LIMITS = [
  ['max-steps', 'max_steps'], ['max-parallel', 'max_parallel_tasks'], ['max-actions', 'max_actions_per_step'], ['max-failures', 'max_failures'],
  ['action-timeout', 'action_timeout_s'], ['request-budget', 'request_budget_tokens'],
  ['viewport-expansion', 'viewport_expansion'],
];
// When a task goes to other sites (`site_policy`: ask, listed or free), and the sites allowed
// without asking (`always_sites`). The core adds a site to that list when the person answers
// "Always" in the panel, maybe while this page is open: the page keeps what the person removed
// and added here, and a save applies those to the list as stored then, so a site the core added
// meanwhile is not lost.
const SITE_POLICIES = ['ask', 'listed', 'free'];
const sitesRemoved = new Set();
/** @type {string[]} */
const sitesAdded = [];
const sitesList = document.getElementById('always-sites');
const siteStatus = document.getElementById('always-site-status');
/** The list as last read from storage. */
let storedSites = [];

/** The always-allowed sites as the page shows them: those stored with the person's changes. */
function alwaysSites(stored = storedSites) {
  const kept = stored.filter((site) => !sitesRemoved.has(site));
  return [...new Set([...kept, ...sitesAdded])];
}

/** Lists the always-allowed sites, each with its Remove button. */
function showAlwaysSites(/** @type {string[]} */ sites) {
  if (!sites.length) {
    sitesList.replaceChildren(Object.assign(document.createElement('li'), { className: 'empty', textContent: t('optAlwaysSitesEmpty') }));
    return;
  }
  sitesList.replaceChildren(...sites.map((site) => {
    const item = document.createElement('li');
    item.dataset.site = site;
    const name = document.createElement('span');
    name.textContent = site;
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.textContent = t('optAlwaysSiteRemove');
    remove.setAttribute('aria-label', t('optAlwaysSiteRemoveLabel', [site]));
    remove.addEventListener('click', () => {
      const at = sitesAdded.indexOf(site);
      if (at >= 0) sitesAdded.splice(at, 1);
      else sitesRemoved.add(site);
      const place = [...sitesList.children].indexOf(item);
      showAlwaysSites(alwaysSites());
      // Focus stays in the list (on the site now in its place), or goes to the box to add one.
      const buttons = sitesList.querySelectorAll('button');
      /** @type {HTMLElement} */ (buttons[Math.min(place, buttons.length - 1)] ?? field('always-site-new')).focus();
      if (saved.textContent) showStatus('', false);
    });
    item.append(name, remove);
    return item;
  }));
}

/** The site a person typed ("Booking.com", "https://www.booking.com/hotels"): its host name,
 * or null when it is none. */
function siteOfTyped(/** @type {string} */ text) {
  const typed = text.trim();
  if (!typed || /\s/.test(typed)) return null;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(typed) ? typed : `https://${typed}`);
    const host = url.hostname.replace(/\.$/, '');
    return /^https?:$/.test(url.protocol) && host && !url.username ? host : null;
  } catch {
    return null;
  }
}

function addTypedSite() {
  const input = field('always-site-new');
  const site = siteOfTyped(input.value);
  if (!site) {
    input.setAttribute('aria-invalid', 'true');
    siteStatus.className = 'hint error';
    siteStatus.textContent = t('optAlwaysSiteInvalid', [input.value.trim()]);
    return;
  }
  sitesRemoved.delete(site);
  if (!sitesAdded.includes(site)) sitesAdded.push(site);
  input.value = '';
  input.removeAttribute('aria-invalid');
  siteStatus.className = 'hint';
  siteStatus.textContent = '';
  showAlwaysSites(alwaysSites());
}

/** The site policy chosen on the page. */
function chosenSitePolicy() {
  const checked = /** @type {HTMLInputElement | null} */ (document.querySelector('input[name="site_policy"]:checked'));
  return checked?.value ?? 'ask';
}

/** Where a key kept only for the browser session is (read by the core, src/ext/chrome.rs). */
const SESSION_KEYS = 'session_keys';

// The fields that belong to a provider: switching to another shows that one's own (empty the
// first time), and switching back brings these back. Kept in `provider_fields` of
// chrome.storage.local, except the API keys when keys are kept for the browser session only:
// those go with the session's key (SESSION_KEYS).
const OWN_FIELDS = [
  ['base-url', 'base_url'], ['model', 'model'], ['extraction-model', 'extraction_model'], ['fallback-model', 'fallback_model'],
  ['api-key', 'api_key'],
];
const PROVIDER_FIELDS = 'provider_fields';
/** @type {Record<string, Record<string, string>>} each provider's own fields, by provider */
let ownFields = {};
/** The provider whose fields the form shows. */
let shownProvider = 'openai';

/** Keeps what the form shows as the shown provider's own. */
function keepShownFields() {
  ownFields[shownProvider] = Object.fromEntries(OWN_FIELDS.map(([id, key]) => [key, field(id).value]));
}

/** Shows `provider`'s own fields. */
function showOwnFields(provider) {
  const own = ownFields[provider] ?? {};
  for (const [id, key] of OWN_FIELDS) field(id).value = own[key] ?? '';
  shownProvider = provider;
}

/** Placeholders, hint and the Azure-only API version follow the chosen provider. */
function showProvider() {
  const provider = field('provider').value;
  const p = PROVIDERS[provider] ?? PROVIDERS.openai;
  field('provider-hint').textContent = p.hint;
  field('base-url').placeholder = t(p.ownAddress ? 'placeholderDefault' : 'placeholderExample', [p.baseUrl]);
  field('base-url').required = !p.ownAddress;
  field('model').placeholder = p.model ? t('placeholderExample', [p.model]) : t('modelAzure');
  field('api-key').placeholder = p.key;
  field('extraction-model').placeholder = provider === 'azure_openai' ? t('modelAzureOther') : t('placeholderSameModel');
  const azure = provider === 'azure_openai';
  field('model-label').textContent = t(azure ? 'optDeployment' : 'optModel');
  field('api-version-row').hidden = !azure;
  field('structured-output-row').hidden = provider !== 'openai_compatible';
  field('context-tokens-row').hidden = provider !== 'ollama';
  // Required only where it is shown (a hidden required field would block saving silently),
  // and not with the v1 base URL, which takes none (src/settings.rs, is_azure_v1_url).
  field('api-version').required = azure && !/\/openai\/v1\/?$/i.test(field('base-url').value.trim());
}

/**
 * The two lists typed as text, extra headers and prices, as the core reads them
 * (`read_settings_lists`, src/settings/form.rs: the one place their rules live): `{lists}`, or
 * `{error, field}` naming the line at fault and why.
 */
async function readLists() {
  const reply = await askCore({
    type: 'read_settings_lists',
    extra_headers: field('extra-headers').value,
    prices: field('prices').value,
  });
  if (reply.type === 'settings_lists') return { lists: reply };
  // The refusal names the line and, by its message, the list (src/settings/form.rs).
  const list = reply.type === 'refused' && reply.locale_text?.key === 'form_price_line' ? 'prices' : 'extra-headers';
  return { error: coreText(reply) || t('workerNoAnswer'), field: list };
}

function showStatus(message, isError) {
  saved.className = isError ? 'error' : '';
  saved.textContent = message;
}

// The form's field of each stored setting the core may name as at fault (`setting` of its
// refusal; src/settings.rs, SettingsError::setting: a test keeps the two lists together).
const SETTING_FIELDS = {
  'llm.provider': 'provider', 'llm.base_url': 'base-url', 'llm.model': 'model', 'llm.api_key': 'api-key',
  'llm.api_version': 'api-version', 'llm.timeout_s': 'llm-timeout', 'llm.context_tokens': 'context-tokens',
  'llm.extra_headers': 'extra-headers', 'llm.structured_output': 'structured-output', 'llm.prices': 'prices',
  max_steps: 'max-steps', max_parallel_tasks: 'max-parallel', max_actions_per_step: 'max-actions', max_failures: 'max-failures',
  action_timeout_s: 'action-timeout', request_budget_tokens: 'request-budget', viewport_expansion: 'viewport-expansion',
  search_engine: 'search-engine', exclude_actions: 'exclude-actions', evaluate_domains: 'evaluate-domains',
  allowed_domains: 'allowed-domains', blocked_domains: 'blocked-domains', secrets: 'secrets', vision: 'vision',
  site_policy: 'site-rules', always_sites: 'always-sites',
};

/** Marks the field of the setting the core named as at fault (if the page has it), and
 * brings it into view. */
function markSetting(/** @type {string | null | undefined} */ setting) {
  const id = setting ? SETTING_FIELDS[setting] : undefined;
  if (!id) return;
  field(id).setAttribute('aria-invalid', 'true');
  field(id).scrollIntoView({ block: 'nearest' });
}

/** Splits a list typed one per line (or comma-separated) into its entries. */
const entries = (value) => value.split(/[\s,]+/).filter(Boolean);

// Prices: one `model-prefix input output` per line, in USD per million tokens.
function pricesText(prices) {
  return (prices ?? []).map((p) => [p.model_prefix, p.input_per_million, p.output_per_million, p.cached_input_per_million]
    .filter((v) => v !== undefined && v !== null).join(' ')).join('\n');
}


// Secrets: a row each. A saved value is never put back into the page: its field stays empty
// (saying how long the value is), and an empty field keeps the saved value.
const secretsBox = field('secrets');

/** A text field of a secret's row, named by the message `label` (also its placeholder). */
function secretInput(className, label, type = 'text') {
  const input = document.createElement('input');
  input.className = className;
  input.type = type;
  input.placeholder = t(label);
  input.setAttribute('aria-label', t(label));
  input.spellcheck = false;
  input.autocomplete = 'off';
  return input;
}

function secretRow(secret = null) {
  const row = document.createElement('div');
  row.className = 'secret';
  const name = secretInput('secret-name', 'secretName');
  const value = secretInput('secret-value', 'secretValue', 'password');
  const domains = secretInput('secret-domains', 'secretDomains');
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.textContent = t('secretRemove');
  remove.addEventListener('click', () => row.remove());
  if (secret) {
    name.value = secret.name;
    value.placeholder = t('secretKept', [secret.value.length]);
    domains.value = (secret.domains ?? []).join(', ');
    row.dataset.savedName = secret.name;
  }
  row.append(name, value, domains, remove);
  return row;
}

/** The secrets as the page shows them, with saved values kept where the field was left empty. */
function readSecrets(previous) {
  const out = [];
  for (const [i, row] of [...secretsBox.querySelectorAll('.secret')].entries()) {
    const name = inRow(row, '.secret-name').value.trim();
    const typed = inRow(row, '.secret-value').value;
    const domains = entries(inRow(row, '.secret-domains').value);
    if (!name && !typed) continue;
    const kept = (previous ?? []).find((s) => s.name === /** @type {HTMLElement} */ (row).dataset.savedName);
    const value = typed || kept?.value || '';
    if (!name) return { error: t('secretNoName', [i + 1]) };
    if (!value) return { error: t('secretNoValue', [name]) };
    out.push({ name, value, domains });
  }
  return { secrets: out };
}

/** What chrome.storage.session keeps: the key in use, and the other providers' keys. */
async function sessionKeys() {
  try {
    const { [SESSION_KEYS]: keys } = await chrome.storage.session.get(SESSION_KEYS);
    return /** @type {{api_key?: string, by_provider?: Record<string, string>}} */ (keys ?? {});
  } catch {
    return {};
  }
}

async function sessionKey() {
  return (await sessionKeys()).api_key ?? '';
}

async function load() {
  const settings = await storedSettings();
  const llm = settings.llm ?? {};
  const { [PROVIDER_FIELDS]: kept } = await chrome.storage.local.get(PROVIDER_FIELDS);
  ownFields = kept && typeof kept === 'object' ? /** @type {Record<string, Record<string, string>>} */ (kept) : {};
  if (settings.keys_in_session) {
    for (const [provider, key] of Object.entries((await sessionKeys()).by_provider ?? {})) {
      ownFields[provider] = { ...(ownFields[provider] ?? {}), api_key: key };
    }
  }
  field('provider').value = providerName(llm.provider);
  shownProvider = field('provider').value;
  field('base-url').value = llm.base_url ?? '';
  field('api-version').value = llm.api_version ?? '';
  field('model').value = llm.model ?? '';
  field('keys-in-session').checked = settings.keys_in_session === true;
  field('api-key').value = settings.keys_in_session ? await sessionKey() : llm.api_key ?? '';
  field('extraction-model').value = llm.extraction_model ?? '';
  field('fallback-model').value = llm.fallback_model ?? '';
  field('structured-output').value = ['json_schema', 'json_object'].includes(llm.structured_output) ? llm.structured_output : '';
  field('llm-timeout').value = String(llm.timeout_s ?? '');
  field('context-tokens').value = String(llm.context_tokens ?? '');
  field('extra-headers').value = Object.entries(llm.extra_headers ?? {}).map(([name, value]) => `${name}: ${value}`).join('\n');
  field('search-engine').value = settings.search_engine || 'duckduckgo';
  field('evaluate-domains').value = (settings.evaluate_domains ?? []).join('\n');
  field('exclude-actions').value = (settings.exclude_actions ?? []).join(', ');
  for (const [id, key] of LIMITS) field(id).value = settings[key] ?? '';
  field('highlights').checked = settings.highlights ?? true;
  field('vision').value = ['on', 'off'].includes(settings.vision) ? settings.vision : 'auto';
  field('thinking').checked = settings.thinking ?? true;
  field('allowed-domains').value = (settings.allowed_domains ?? []).join('\n');
  field('blocked-domains').value = (settings.blocked_domains ?? []).join('\n');
  field('prices').value = pricesText(llm.prices);
  secretsBox.replaceChildren(...(settings.secrets ?? []).map((secret) => secretRow(secret)));
  const policy = SITE_POLICIES.includes(settings.site_policy) ? settings.site_policy : 'ask';
  for (const radio of document.querySelectorAll('input[name="site_policy"]')) {
    /** @type {HTMLInputElement} */ (radio).checked = /** @type {HTMLInputElement} */ (radio).value === policy;
  }
  sitesRemoved.clear();
  sitesAdded.length = 0;
  storedSites = settings.always_sites ?? [];
  showAlwaysSites(alwaysSites());
  showProvider();
}

/** Marks `id` as the field to fix and says why; returns null so callers can `return fail(…)`. */
function fail(id, message) {
  field(id).setAttribute('aria-invalid', 'true');
  field(id).focus();
  showStatus(t('notSaved', [message]), true);
  return null;
}

/**
 * The settings as the form has them, on top of `previous` (what this page does not edit is
 * kept); null after saying what to fix. The API key is in `key`, and in the settings only when
 * it is kept with them.
 */
async function fromForm(previous) {
  const read = await readLists();
  if (read.error) return fail(read.field, read.error);
  const secrets = readSecrets(previous.secrets);
  if (secrets.error) return fail('secrets', secrets.error);
  const timeout = field('llm-timeout').value.trim();
  const contextTokens = field('context-tokens').value.trim();
  const key = field('api-key').value.trim();
  const inSession = field('keys-in-session').checked;
  const settings = {
    ...previous,
    llm: {
      ...(previous.llm ?? {}),
      provider: field('provider').value,
      base_url: field('base-url').value.trim(),
      model: field('model').value.trim(),
      api_key: inSession ? '' : key,
      extraction_model: field('extraction-model').value.trim(),
      // Kept while another provider is chosen, so switching back to Azure restores it.
      api_version: field('api-version').value.trim(),
      extra_headers: read.lists.extra_headers,
      fallback_model: field('fallback-model').value.trim(),
      structured_output: field('structured-output').value,
      // Kept while another provider is chosen, like the API version.
      context_tokens: contextTokens === '' ? null : Number(contextTokens),
      timeout_s: timeout === '' ? null : Number(timeout),
      prices: read.lists.prices,
    },
    keys_in_session: inSession,
    search_engine: field('search-engine').value,
    evaluate_domains: entries(field('evaluate-domains').value),
    exclude_actions: entries(field('exclude-actions').value),
    allowed_domains: entries(field('allowed-domains').value),
    blocked_domains: entries(field('blocked-domains').value),
    secrets: secrets.secrets,
    site_policy: chosenSitePolicy(),
    always_sites: alwaysSites(previous.always_sites ?? []),
  };
  for (const [id, key] of LIMITS) {
    const value = field(id).value.trim();
    settings[key] = value === '' ? null : Number(value);
  }
  settings.highlights = field('highlights').checked;
  settings.vision = field('vision').value;
  settings.thinking = field('thinking').checked;
  return { settings, key };
}

/** The settings with the API key in place, as the core would read them. */
const withKey = (settings, key) => ({ ...settings, llm: { ...settings.llm, api_key: key } });

/** Saves the settings (and the key where it is kept), then shows what the core thinks of them. */
async function save(settings, key) {
  keepShownFields();
  const inSession = settings.keys_in_session === true;
  const fieldsKept = Object.fromEntries(Object.entries(ownFields).map(([provider, own]) => [
    provider, inSession ? { ...own, api_key: '' } : own,
  ]));
  await chrome.storage.local.set({ settings, [PROVIDER_FIELDS]: fieldsKept });
  if (inSession) {
    const byProvider = Object.fromEntries(Object.entries(ownFields).map(([provider, own]) => [provider, own.api_key ?? '']));
    await chrome.storage.session.set({ [SESSION_KEYS]: { api_key: key, by_provider: byProvider } });
  } else await chrome.storage.session.remove(SESSION_KEYS);
  const check = await askCore({ type: 'check_settings', settings: withKey(settings, key) });
  if (check.type === 'refused') {
    showStatus(t('savedButCheck', [coreText(check)]), true);
    markSetting(check.setting);
  } else showStatus(t('saved'), false);
}

// The model field offers the provider's own list of models (it still takes any name): asked
// of the core (`list_models`) for the provider, base URL, key and headers as typed, when a
// model field is first visited and a moment after they change; a failed list says why.
let modelsAsked = 0;
let modelsTimer = null;

async function offerModels() {
  const asked = ++modelsAsked;
  const headers = await readLists();
  if (asked !== modelsAsked) return;
  const llm = {
    provider: field('provider').value,
    base_url: field('base-url').value.trim(),
    api_key: field('api-key').value.trim(),
    api_version: field('api-version').value.trim(),
    extra_headers: headers.error ? {} : headers.lists.extra_headers,
  };
  // A newer ask (the fields changed meanwhile) has the last word.
  await listModels(llm, field('model-list'), field('models-hint'), () => asked === modelsAsked);
}

function offerModelsSoon() {
  clearTimeout(modelsTimer);
  // What was listed may not hold for what is being typed: say so at once.
  modelsAsked++;
  field('models-hint').className = 'hint';
  const address = field('base-url').value.trim() || PROVIDERS[field('provider').value]?.ownAddress;
  field('models-hint').textContent = address ? t('modelsAsking') : '';
  modelsTimer = setTimeout(offerModels, 600);
}

for (const id of ['base-url', 'api-key', 'api-version', 'extra-headers']) field(id).addEventListener('input', offerModelsSoon);
// Opening the page asks nothing of the provider; the first visit to a model field does.
for (const id of ['model', 'extraction-model', 'fallback-model']) {
  field(id).addEventListener('focus', () => {
    if (modelsAsked === 0) offerModels();
  });
}

field('provider').addEventListener('change', () => {
  keepShownFields();
  showOwnFields(field('provider').value);
  showProvider();
  offerModelsSoon();
});
field('base-url').addEventListener('input', showProvider);
// An edit unmarks its field, and what was said of the last save no longer holds.
const edited = (/** @type {Event} */ event) => {
  /** @type {Element} */ (event.target).removeAttribute?.('aria-invalid');
  if (saved.textContent) showStatus('', false);
};
form.addEventListener('input', edited);
form.addEventListener('change', edited);
// The save bar sticks to the bottom of the window: a field focused under it (scroll-padding
// in options.css covers most; Chrome does not scroll a field it deems visible enough) is
// brought above it.
const saveBar = /** @type {HTMLElement} */ (document.querySelector('.save-row'));
form.addEventListener('focusin', (event) => {
  const focused = /** @type {Element} */ (event.target);
  if (saveBar.contains(focused)) return;
  const at = focused.getBoundingClientRect();
  const bar = saveBar.getBoundingClientRect();
  if (at.bottom > bar.top && at.top < bar.bottom) window.scrollBy(0, at.bottom - bar.top + 8);
});
field('always-site-add').addEventListener('click', addTypedSite);
field('always-site-new').addEventListener('keydown', (event) => {
  // Enter adds the site (it would otherwise save the whole form).
  if (event.key === 'Enter' && !event.isComposing) {
    event.preventDefault();
    addTypedSite();
  }
});
field('always-site-new').addEventListener('input', () => {
  siteStatus.textContent = '';
});
// A site answered "Always" in the panel while this page is open joins the list at once.
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && changes.settings && document.body.dataset.ready === 'true') {
    storedSites = /** @type {StoredSettings} */ (changes.settings.newValue ?? {}).always_sites ?? [];
    showAlwaysSites(alwaysSites());
  }
});
field('add-secret').addEventListener('click', () => {
  const row = secretRow();
  secretsBox.append(row);
  inRow(row, '.secret-name').focus();
});

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  showStatus('', false);
  const previous = await storedSettings();
  const read = await fromForm(previous);
  if (!read) return;
  try {
    await save(read.settings, read.key);
    // The sites removed and added are in the stored list now.
    sitesRemoved.clear();
    sitesAdded.length = 0;
    storedSites = read.settings.always_sites;
    showAlwaysSites(alwaysSites());
    // Typed secret values are saved: the fields go back to saying only that one is kept.
    secretsBox.replaceChildren(...read.settings.secrets.map((secret) => secretRow(secret)));
  } catch (error) {
    showStatus(t('notSaved', [error?.message ?? String(error)]), true);
  }
});

// "Test connection" asks the model named by the form as it is now, saved or not.
field('test-connection').addEventListener('click', async () => {
  const status = field('connection');
  const button = field('test-connection');
  // The last answer goes at once: what follows is about the form as it is now.
  button.disabled = true;
  status.className = '';
  status.textContent = t('connectionChecking');
  const previous = await storedSettings();
  const read = await fromForm(previous);
  if (!read) {
    button.disabled = false;
    status.textContent = '';
    return;
  }
  const reply = await askCore({ type: 'test_connection', settings: withKey(read.settings, read.key) });
  button.disabled = false;
  if (reply.type === 'connection_works') {
    status.className = 'ok';
    status.textContent = t('connectionWorks', [reply.model, reply.ms]);
  } else {
    status.className = 'error';
    status.textContent = coreText(reply) || t('workerNoAnswer');
    if (reply.type === 'refused') markSetting(reply.setting);
  }
});

// Settings as a file, to move them to another browser: without the API key and the secrets.
const SETTINGS_FORMAT = 'tabwright-settings';

/** The settings without anything secret. */
function shareable(settings) {
  const { secrets: _secrets, keys_in_session: _inSession, ...rest } = settings;
  const { api_key: _key, ...llm } = rest.llm ?? {};
  return { ...rest, llm };
}

field('export-settings').addEventListener('click', async () => {
  const settings = await storedSettings();
  const file = { format: SETTINGS_FORMAT, version: 1, exported_at: new Date().toISOString(), settings: shareable(settings) };
  download(JSON.stringify(file, null, 2), 'application/json', 'tabwright-settings.json');
});

field('import-settings').addEventListener('click', () => field('import-file').click());
field('import-file').addEventListener('change', async () => {
  const [chosen] = field('import-file').files;
  field('import-file').value = '';
  if (!chosen) return;
  let file;
  try {
    file = JSON.parse(await chosen.text());
  } catch (error) {
    showStatus(t('importUnreadable', [chosen.name, error.message]), true);
    return;
  }
  if (file?.format !== SETTINGS_FORMAT || typeof file.settings !== 'object' || file.settings === null || Array.isArray(file.settings)) {
    showStatus(t('importNotSettings', [chosen.name]), true);
    return;
  }
  // What is secret here stays: the file has none of it, and must not bring any.
  const current = await storedSettings();
  const incoming = shareable(file.settings);
  const settings = {
    ...incoming,
    llm: { ...(incoming.llm ?? {}), api_key: current.llm?.api_key ?? '' },
    secrets: current.secrets ?? [],
    keys_in_session: current.keys_in_session === true,
  };
  try {
    const key = settings.keys_in_session ? await sessionKey() : settings.llm.api_key;
    await save(settings, key);
    await load();
    if (saved.className !== 'error') showStatus(t('imported', [chosen.name]), false);
  } catch (error) {
    showStatus(t('notSaved', [error?.message ?? String(error)]), true);
  }
});

// The theme applies at once, to this page and every open one (theme.js); it is not a setting
// of the core's, so Save has nothing to do with it.
const THEME_KEY = 'tabwright-theme';
field('theme').value = localStorage.getItem(THEME_KEY) ?? 'system';
field('theme').addEventListener('change', (event) => {
  event.stopPropagation();
  const theme = field('theme').value === 'system' ? null : field('theme').value;
  if (theme) localStorage.setItem(THEME_KEY, theme);
  else localStorage.removeItem(THEME_KEY);
  // The other pages hear the change from the browser; this one is told as they are.
  dispatchEvent(new StorageEvent('storage', { key: THEME_KEY, newValue: theme }));
});

showProvider();
// The form is ready once it shows what is stored: anything typed before that would be
// overwritten by the stored values (a script filling the form waits for this mark).
load().finally(() => { document.body.dataset.ready = 'true'; });
showSkills(field('skills'));
showSchedules(document.querySelector('.schedules-section'));
showClients(document.querySelector('.clients-section'));

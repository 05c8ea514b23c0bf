// The models a provider offers, for a model field's list (it still takes any name): asked of
// the core (`list_models`) with the settings as typed, and said in a hint beside the field —
// how many, or why none. The options page and the panel's first-run setup both offer them.
import { t, coreText } from './i18n.js';
import { askCore } from './core-client.js';
import { PROVIDERS } from './providers.js';

/**
 * Fills `list` (a datalist) with the models of the provider `llm` names and says so in `hint`.
 * Resolves to the models; to null when there is no address to ask yet, when the provider
 * could not list them, or when `current()` says a newer ask has taken over (nothing is shown).
 * @param {{provider: string, base_url: string, api_key?: string, api_version?: string, extra_headers?: Record<string, string>}} llm
 * @param {HTMLElement} list
 * @param {HTMLElement} hint
 * @param {() => boolean} [current]
 */
export async function listModels(llm, list, hint, current = () => true) {
  hint.classList.remove('error');
  if (!llm.base_url && !PROVIDERS[llm.provider]?.ownAddress) {
    list.replaceChildren();
    hint.textContent = '';
    return null;
  }
  hint.textContent = t('modelsAsking');
  const reply = await askCore({ type: 'list_models', settings: { llm } });
  if (!current()) return null;
  if (reply.type === 'models') {
    list.replaceChildren(...reply.models.map((name) => Object.assign(document.createElement('option'), { value: name })));
    hint.textContent = !reply.listed ? '' : reply.models.length ? t('modelsListed', [reply.models.length]) : t('modelsNone');
    return reply.models;
  }
  list.replaceChildren();
  hint.classList.add('error');
  hint.textContent = t('modelsFailed', [coreText(reply) || t('workerNoAnswer')]);
  return null;
}

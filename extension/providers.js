// The providers Tabwright speaks to, as the pages show them (the options page, the panel's
// first-run setup): each wire format's usual address, an example model, what its key looks
// like, where to get one.
import { t } from './i18n.js';

// What each wire format expects. Where the provider has its own address (`ownAddress`), an
// empty base URL is that address (the core's `Provider::default_base_url`; a test keeps the
// two the same), and the field says so as a default; elsewhere the URL and the model are
// examples, never values an empty field would take. The base URLs are the ones the core
// appends its paths to (see src/llm).
export const PROVIDERS = {
  openai: {
    baseUrl: 'https://api.openai.com/v1', ownAddress: true, model: 'gpt-4.1-mini', key: 'sk-…', hint: t('hintOpenai'),
    keyUrl: 'https://platform.openai.com/api-keys',
  },
  openai_compatible: {
    baseUrl: 'https://openrouter.ai/api/v1', ownAddress: false, model: 'openai/gpt-4.1-mini', key: t('keyLocal'), hint: t('hintCompatible'),
    keyUrl: 'https://openrouter.ai/settings/keys',
  },
  azure_openai: {
    baseUrl: 'https://YOUR-RESOURCE.openai.azure.com', ownAddress: false, model: null, key: t('keyAzure'), hint: t('hintAzure'),
    keyUrl: 'https://portal.azure.com/',
  },
  anthropic: {
    baseUrl: 'https://api.anthropic.com/v1', ownAddress: true, model: 'claude-sonnet-4-5', key: 'sk-ant-…', hint: t('hintAnthropic'),
    keyUrl: 'https://console.anthropic.com/settings/keys',
  },
  gemini: {
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta', ownAddress: true, model: 'gemini-2.5-flash', key: t('keyGemini'),
    hint: t('hintGemini'), keyUrl: 'https://aistudio.google.com/app/apikey',
  },
  ollama: { baseUrl: 'http://localhost:11434', ownAddress: true, model: 'qwen3', key: t('keyOllama'), hint: t('hintOllama'), keyUrl: null },
};

/** The stored provider name as the select knows it; spelling as the core accepts it
 * (case, spaces and - do not matter; `azure` and `google` are aliases). */
export function providerName(stored) {
  const name = String(stored ?? '').trim().toLowerCase().replace(/[- ]/g, '_');
  const alias = { azure: 'azure_openai', google: 'gemini' }[name] ?? name;
  return PROVIDERS[alias] ? alias : 'openai';
}


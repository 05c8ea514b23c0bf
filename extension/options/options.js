// The options page: reads and writes the `settings` object in chrome.storage.local that the
// core validates at the start of every task.

const form = document.getElementById('settings');
const saved = document.getElementById('saved');
const field = (id) => document.getElementById(id);
// Limit fields and their keys in the stored settings; empty means the default.
const LIMITS = [
  ['max-steps', 'max_steps'], ['max-actions', 'max_actions_per_step'], ['max-failures', 'max_failures'],
  ['action-timeout', 'action_timeout_s'],
  ['viewport-expansion', 'viewport_expansion'],
];

async function load() {
  const { settings = {} } = await chrome.storage.local.get('settings');
  const llm = settings.llm ?? {};
  field('provider').value = llm.provider || 'openai';
  field('base-url').value = llm.base_url ?? '';
  field('model').value = llm.model ?? '';
  field('api-key').value = llm.api_key ?? '';
  field('extraction-model').value = llm.extraction_model ?? '';
  field('search-engine').value = settings.search_engine || 'duckduckgo';
  field('evaluate-domains').value = (settings.evaluate_domains ?? []).join('\n');
  field('exclude-actions').value = (settings.exclude_actions ?? []).join(', ');
  for (const [id, key] of LIMITS) field(id).value = settings[key] ?? '';
  field('highlights').checked = settings.highlights ?? true;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const { settings: previous = {} } = await chrome.storage.local.get('settings');
  const settings = {
    ...previous,
    llm: {
      ...(previous.llm ?? {}),
      provider: field('provider').value,
      base_url: field('base-url').value.trim(),
      model: field('model').value.trim(),
      api_key: field('api-key').value.trim(),
      extraction_model: field('extraction-model').value.trim(),
    },
    search_engine: field('search-engine').value,
    evaluate_domains: field('evaluate-domains').value.split(/[\s,]+/).filter(Boolean),
    exclude_actions: field('exclude-actions').value.split(/[\s,]+/).filter(Boolean),
  };
  for (const [id, key] of LIMITS) {
    const value = field(id).value.trim();
    settings[key] = value === '' ? null : Number(value);
  }
  settings.highlights = field('highlights').checked;
  try {
    await chrome.storage.local.set({ settings });
    saved.className = '';
    saved.textContent = 'Saved.';
  } catch (error) {
    saved.className = 'error';
    saved.textContent = `Not saved: ${error?.message ?? error}`;
  }
});

load();

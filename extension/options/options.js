// The options page: reads and writes the `settings` object in chrome.storage.local that the
// core validates at the start of every task.

const form = document.getElementById('settings');
const saved = document.getElementById('saved');
const field = (id) => document.getElementById(id);

async function load() {
  const { settings = {} } = await chrome.storage.local.get('settings');
  const llm = settings.llm ?? {};
  field('provider').value = llm.provider || 'openai';
  field('base-url').value = llm.base_url ?? '';
  field('model').value = llm.model ?? '';
  field('api-key').value = llm.api_key ?? '';
  field('max-steps').value = settings.max_steps ?? '';
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const { settings: previous = {} } = await chrome.storage.local.get('settings');
  const maxSteps = field('max-steps').value.trim();
  const settings = {
    ...previous,
    llm: {
      ...(previous.llm ?? {}),
      provider: field('provider').value,
      base_url: field('base-url').value.trim(),
      model: field('model').value.trim(),
      api_key: field('api-key').value.trim(),
    },
    max_steps: maxSteps === '' ? null : Number(maxSteps),
  };
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

// The options page's list of saved skills (chrome.storage.local `skills`, written by the core
// when the side panel saves one): what each is, where it is offered, and a Delete that asks
// once more in place. Names and examples came from pages and people: textContent only.
import { t } from '../i18n.js';
import { el, onSecondClick } from '../dom.js';

/** Where the core keeps the skills (src/ext/chrome.rs). */
const SKILLS_KEY = 'skills';

/** Fills `list` with the saved skills, and keeps it current when they change. */
export function showSkills(list) {
  const render = async () => {
    const { [SKILLS_KEY]: skills = [] } = await chrome.storage.local.get(SKILLS_KEY);
    list.replaceChildren();
    const usable = Array.isArray(skills) ? skills : [];
    if (!usable.length) {
      list.append(el('li', 'empty', t('optSkillsNone')));
      return;
    }
    usable.forEach((skill, position) => list.append(skillRow(skill, position)));
  };
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === 'local' && SKILLS_KEY in changes) render();
  });
  return render();
}

function skillRow(skill, position) {
  const row = el('li', 'skill');
  const params = (skill.params ?? []).map((p) => p.name);
  const what = el('div', 'skill-what');
  what.append(
    el('strong', 'skill-title', String(skill.name ?? '')),
    el('span', 'skill-meta', t('optSkillMeta', [String(skill.domain ?? ''), String(skill.steps?.length ?? 0)])),
    el('span', 'skill-meta', params.length ? t('optSkillParams', [params.join(', ')]) : t('optSkillNoParams')),
  );
  const remove = el('button', 'secondary danger-button', t('optSkillDelete'));
  remove.type = 'button';
  onSecondClick(remove, t('optSkillDeleteConfirm'), async () => {
    remove.disabled = true;
    // By position and name together: a list changed meanwhile deletes nothing else.
    const { [SKILLS_KEY]: stored } = await chrome.storage.local.get(SKILLS_KEY);
    const skills = /** @type {{action: string, domain: string}[]} */ (stored ?? []);
    const kept = skills.filter((s, i) => !(i === position && s.action === skill.action && s.domain === skill.domain));
    await chrome.storage.local.set({ [SKILLS_KEY]: kept });
  });
  row.append(what, remove);
  return row;
}

// Saving a past conversation as a skill: a name, and which of the texts it typed become
// parameters (each with a name). The core says which texts there are (`draft_skill`), checks
// and saves the skill (`save_skill`), and from then on offers it to the model on the site the
// conversation began on (src/agent/skill.rs). Page text is only inserted with textContent.
import { t, coreText } from '../i18n.js';
import { el } from '../dom.js';
import { askCore } from '../core-client.js';

export class SkillForm {
  /** `container`: an element the form fills (hidden while closed). */
  constructor(container) {
    this.container = container;
    this.container.hidden = true;
    // Escape closes the form, as Cancel does.
    this.container.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !this.container.hidden) {
        e.stopPropagation();
        this.close();
      }
    });
  }

  close() {
    this.container.hidden = true;
    this.container.replaceChildren();
  }

  /** Opens the form for these saved steps; a reason instead when they cannot make a skill. */
  async open({ title, startUrl, steps }) {
    this.close();
    this.container.hidden = false;
    const status = el('p', 'skill-status', t('skillChecking'));
    status.setAttribute('role', 'status');
    this.container.append(status);
    const reply = await askCore({ type: 'draft_skill', start_url: startUrl, steps });
    if (reply.type !== 'skill_draft') {
      this.showStatus(status, coreText(reply) || t('skillNotSaved'), true);
      return;
    }
    const form = el('form', 'skill-form');
    form.append(el('h3', null, t('skillFormTitle')));
    const nameLabel = el('label', null, t('skillName'));
    const name = el('input');
    name.type = 'text';
    name.maxLength = 60;
    name.required = true;
    name.value = title.split(/\s+/).join(' ').slice(0, 60);
    name.className = 'skill-name';
    nameLabel.append(name);
    form.append(nameLabel, el('p', 'hint', t('skillSiteHint', [reply.domain])));

    const rows = reply.params.map((param) => {
      const row = el('div', 'skill-param');
      const use = el('input');
      use.type = 'checkbox';
      use.checked = true;
      const useLabel = el('label', 'check');
      useLabel.append(use, el('span', null, t('skillParamTyped', [param.step, param.example])));
      const paramName = el('input', 'skill-param-name');
      paramName.type = 'text';
      paramName.value = param.name;
      paramName.pattern = '[a-z][a-z0-9_]{0,31}';
      paramName.title = t('skillParamNameTitle');
      const nameLabel = el('label', 'skill-param-label', t('skillParamName'));
      nameLabel.append(paramName);
      use.addEventListener('change', () => { paramName.disabled = !use.checked; });
      row.append(useLabel, nameLabel);
      return { row, use, paramName, example: param.example };
    });
    if (rows.length) {
      form.append(el('p', 'hint', t('skillParamsHint')));
      for (const { row } of rows) form.append(row);
    } else {
      form.append(el('p', 'hint', t('skillNoParams')));
    }

    const buttons = el('div', 'skill-buttons');
    const save = el('button', 'primary', t('skillSave'));
    save.type = 'submit';
    const cancel = el('button', null, t('skillCancel'));
    cancel.type = 'button';
    cancel.addEventListener('click', () => this.close());
    buttons.append(save, cancel);
    form.append(buttons);
    status.textContent = '';
    this.container.replaceChildren(form, status);
    name.focus();

    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      save.disabled = true;
      const draft = {
        name: name.value,
        description: title,
        start_url: startUrl,
        steps,
        params: rows.filter((r) => r.use.checked).map((r) => ({ name: r.paramName.value.trim(), example: r.example })),
      };
      const saved = await askCore({ type: 'save_skill', draft });
      save.disabled = false;
      if (saved.type === 'skill_saved') {
        form.remove();
        this.showStatus(status, t('skillSaved', [saved.name, saved.domain, saved.action]), false);
      } else {
        this.showStatus(status, coreText(saved) || t('skillNotSaved'), true);
      }
    });
  }

  showStatus(status, message, isError) {
    status.textContent = message;
    status.classList.toggle('error', isError);
  }
}

// Favourite tasks: a task text kept to run again in one click. A `{name}` in it is a blank the
// person fills each time ("Find {what} under {price} euros"): choosing such a favourite asks
// for each blank in a small form, then runs the text with them filled in. Kept in
// chrome.storage.local (`favourites`), in the order they were added; shown as chips over the
// task box while the task shown in the chat does not run.
import { t } from '../i18n.js';
import { el } from '../dom.js';

const KEY = 'favourites';
const MAX = 30;
/** A blank: `{name}`, the name 1–40 characters without braces or line breaks. */
const BLANK = /\{([^{}\n]{1,40})\}/g;

/** The distinct blanks of `text`, in order. */
export function blanksOf(text) {
  return [...new Set([...text.matchAll(BLANK)].map((m) => m[1].trim()).filter(Boolean))];
}

/** `text` with each blank replaced by its value. */
export function fillBlanks(text, values) {
  return text.replace(BLANK, (whole, name) => values.get(name.trim()) ?? whole);
}

export class Favourites {
  /**
   * @param {object} parts
   * @param {HTMLElement} parts.list where the chips and the blanks form go
   * @param {HTMLButtonElement} parts.save the button that keeps the typed task
   * @param {HTMLTextAreaElement | HTMLInputElement} parts.taskBox
   * @param {(text: string) => void} parts.run runs a task text
   * @param {(text: string) => void} parts.notice says a problem
   */
  constructor({ list, save, taskBox, run, notice }) {
    this.list = list;
    this.save = save;
    this.taskBox = taskBox;
    this.run = run;
    this.notice = notice;
    /** Whether the shown task does not run (the chips show only then). */
    this.idle = true;
    /** @type {{id: string, text: string}[]} */
    this.items = [];
    this.save.addEventListener('click', () => this.keepTyped());
    chrome.storage.onChanged.addListener((changes, area) => {
      if (area === 'local' && KEY in changes) {
        this.items = Array.isArray(changes[KEY].newValue) ? changes[KEY].newValue : [];
        this.show();
      }
    });
  }

  async load() {
    const { [KEY]: kept } = await chrome.storage.local.get(KEY);
    this.items = Array.isArray(kept) ? kept : [];
    this.show();
  }

  async write() {
    await chrome.storage.local.set({ [KEY]: this.items });
    this.show();
  }

  /** Keeps the task typed in the box (once: the same text twice is one favourite). */
  async keepTyped() {
    const text = this.taskBox.value.trim();
    if (!text) {
      this.notice(t('favouriteEmpty'));
      return;
    }
    if (this.items.some((item) => item.text === text)) return;
    if (this.items.length >= MAX) {
      this.notice(t('favouritesFull', [MAX]));
      return;
    }
    this.items.push({ id: crypto.randomUUID(), text });
    await this.write();
    this.save.setAttribute('aria-pressed', 'true');
  }

  /** Whether the typed text is a favourite already (the star shows it). */
  follow() {
    const text = this.taskBox.value.trim();
    this.save.setAttribute('aria-pressed', String(this.items.some((item) => item.text === text)));
  }

  /** Shows or hides the chips (hidden while the shown task runs: `idle` false). */
  show(idle = this.idle) {
    this.idle = idle;
    this.list.replaceChildren();
    this.list.hidden = !idle || !this.items.length;
    if (this.list.hidden) return;
    const chips = el('ul', 'favourite-chips');
    chips.setAttribute('aria-label', t('favouritesLabel'));
    for (const item of this.items) {
      const chip = el('li', 'favourite');
      const use = el('button', 'favourite-use', item.text);
      use.type = 'button';
      use.title = blanksOf(item.text).length ? t('favouriteFillTitle') : t('favouriteRunTitle');
      use.addEventListener('click', () => this.use(item));
      const remove = el('button', 'favourite-remove', '×');
      remove.type = 'button';
      remove.setAttribute('aria-label', t('favouriteRemove', [item.text.slice(0, 80)]));
      remove.addEventListener('click', async () => {
        this.items = this.items.filter((other) => other.id !== item.id);
        await this.write();
        this.follow();
      });
      chip.append(use, remove);
      chips.append(chip);
    }
    this.list.append(chips);
  }

  /** Runs a favourite: at once, or after its blanks are filled in. */
  use(item) {
    const blanks = blanksOf(item.text);
    if (!blanks.length) {
      this.run(item.text);
      return;
    }
    const form = el('form', 'favourite-form');
    form.append(el('p', 'favourite-text', item.text));
    const inputs = blanks.map((name) => {
      const label = el('label', null, name);
      const input = el('input');
      input.type = 'text';
      input.required = true;
      input.dataset.blank = name;
      label.append(input);
      form.append(label);
      return input;
    });
    const go = el('button', 'primary', t('favouriteRun'));
    go.type = 'submit';
    const cancel = el('button', null, t('skillCancel'));
    cancel.type = 'button';
    const close = () => this.show();
    cancel.addEventListener('click', close);
    form.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        close();
      }
    });
    const buttons = el('div', 'skill-buttons');
    buttons.append(go, cancel);
    form.append(buttons);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const values = new Map(inputs.map((input) => [input.dataset.blank, input.value.trim()]));
      close();
      this.run(fillBlanks(item.text, values));
    });
    this.list.replaceChildren(form);
    this.list.hidden = false;
    inputs[0].focus();
  }
}

// The files attached to the conversation: picked with the paperclip button or dragged onto the
// task box, kept in the extension's IndexedDB (files-store.js), shown as chips under the box
// (name and size, × to take one off), and sent with each task of the conversation by name and
// size — the worker reads the bytes when a task uploads one to a page. New conversation
// clears them. Files over the bounds are refused here with a word why; the core checks again.
import { keepFile, FILE_LIMITS } from '../files-store.js';
import { t } from '../i18n.js';
import { el } from '../dom.js';

const MB = 1024 * 1024;

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < MB) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(bytes / MB).toFixed(1)} MB`;
}

export class Attachments {
  /** `list`: where the chips go; `input`: the hidden file input; `button`: the paperclip;
   * `dropZone`: what files can be dropped on; `notice(text)`: shows a problem ('' clears). */
  constructor({ list, input, button, dropZone, notice }) {
    this.files = [];
    this.list = list;
    this.notice = notice;
    button.addEventListener('click', () => input.click());
    input.addEventListener('change', () => {
      const picked = [...input.files];
      input.value = '';
      this.add(picked);
    });
    const carriesFiles = (event) => [...(event.dataTransfer?.types ?? [])].includes('Files');
    dropZone.addEventListener('dragover', (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      dropZone.classList.add('dropping');
    });
    dropZone.addEventListener('dragleave', () => dropZone.classList.remove('dropping'));
    dropZone.addEventListener('drop', (event) => {
      dropZone.classList.remove('dropping');
      if (!carriesFiles(event)) return;
      event.preventDefault();
      this.add([...event.dataTransfer.files]);
    });
    this.render();
  }

  /** Keeps `files` (File objects) within the bounds; says why for any it refuses. */
  async add(files) {
    const problems = [];
    for (const file of files) {
      const total = this.files.reduce((sum, f) => sum + f.size, 0);
      if (this.files.length >= FILE_LIMITS.maxFiles) {
        problems.push(t('attachTooMany', [String(FILE_LIMITS.maxFiles)]));
        break;
      }
      if (file.size > FILE_LIMITS.maxFileBytes) {
        problems.push(t('attachTooBig', [file.name, String(FILE_LIMITS.maxFileBytes / MB)]));
        continue;
      }
      if (total + file.size > FILE_LIMITS.maxTotalBytes) {
        problems.push(t('attachTooMuch', [String(FILE_LIMITS.maxTotalBytes / MB)]));
        continue;
      }
      // A file of the same name replaces the one attached before (the model knows files by name).
      this.files = this.files.filter((f) => f.name !== file.name);
      try {
        this.files.push(await keepFile(file));
      } catch (error) {
        problems.push(t('attachFailed', [file.name, error?.message ?? String(error)]));
      }
      this.render();
    }
    this.notice(problems.join(' '));
  }

  remove(id) {
    this.files = this.files.filter((f) => f.id !== id);
    this.render();
  }

  clear() {
    this.files = [];
    this.render();
  }

  /** What a task carries of its files: {id, name, type, size} each. */
  forTask() {
    return this.files.map(({ id, name, type, size: bytes }) => ({ id, name, type, size: bytes }));
  }

  render() {
    this.list.replaceChildren(...this.files.map((file) => {
      const remove = el('button', 'chip-remove', '×');
      remove.type = 'button';
      remove.title = t('removeAttachment', [file.name]);
      remove.setAttribute('aria-label', remove.title);
      remove.addEventListener('click', () => this.remove(file.id));
      const chip = el('span', 'chip', '');
      chip.append(el('span', 'chip-name', file.name), el('span', 'chip-size', size(file.size)), remove);
      return chip;
    }));
    this.list.hidden = this.files.length === 0;
  }
}

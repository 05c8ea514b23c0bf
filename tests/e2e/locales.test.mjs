// The interface's languages: every string the extension's pages use is in _locales/en, and
// _locales/zh_CN has every one of them with the same placeholders. Read from the files
// themselves (no browser): names in the HTML's data-i18n* attributes, in `t('…')` calls and
// in the manifest's __MSG_…__.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/lib/browser.mjs';

const EXTENSION = path.join(ROOT, 'extension');
const LOCALES = ['en', 'zh_CN'];
const messages = Object.fromEntries(LOCALES.map((l) => [l, JSON.parse(readFileSync(path.join(EXTENSION, '_locales', l, 'messages.json'), 'utf8'))]));

/** The extension's own sources (not the built core or the vendored libraries). */
function sources(dir = EXTENSION) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return ['pkg', 'vendor', '_locales'].includes(name) ? [] : sources(full);
    return /\.(js|html|json)$/.test(name) ? [full] : [];
  });
}

function usedNames() {
  const used = new Map(); // name → file
  for (const file of sources()) {
    const text = readFileSync(file, 'utf8');
    const patterns = [/data-i18n(?:-[a-z-]+)?="([A-Za-z0-9_]+)"/g, /\bt\('([A-Za-z0-9_]+)'/g, /__MSG_([A-Za-z0-9_]+)__/g,
      /\bt\((?:[^()]*?)\? '([A-Za-z0-9_]+)' : '([A-Za-z0-9_]+)'/g];
    for (const pattern of patterns) {
      for (const m of text.matchAll(pattern)) {
        for (const name of m.slice(1).filter(Boolean)) used.set(name, path.relative(ROOT, file));
      }
    }
  }
  return used;
}

const placeholdersOf = (entry) => Object.keys(entry.placeholders ?? {}).sort();
const usedIn = (message) => [...message.matchAll(/\$([A-Za-z0-9_]+)\$/g)].map((m) => m[1].toLowerCase()).sort();

test('every string the pages use is in the English messages', () => {
  const used = usedNames();
  assert.ok(used.size > 150, `found ${used.size} names: the scan reads the sources`);
  const missing = [...used].filter(([name]) => !messages.en[name]).map(([name, file]) => `${name} (${file})`);
  assert.deepEqual(missing, []);
});

test('Chinese (zh_CN) has every English message, with the same placeholders, in its own words', () => {
  const en = messages.en;
  const zh = messages.zh_CN;
  assert.deepEqual(Object.keys(zh).filter((k) => !en[k]), [], 'no Chinese message without an English one');
  assert.deepEqual(Object.keys(en).filter((k) => !zh[k]), [], 'every English message is translated');
  let chinese = 0;
  for (const [name, entry] of Object.entries(en)) {
    assert.deepEqual(placeholdersOf(zh[name]), placeholdersOf(entry), `${name}: placeholders`);
    assert.deepEqual(usedIn(zh[name].message), usedIn(entry.message), `${name}: placeholders used in the text`);
    for (const p of usedIn(entry.message)) assert.ok(entry.placeholders?.[p], `${name}: $${p}$ is declared`);
    if (/[\u4e00-\u9fff]/.test(zh[name].message)) chinese += 1;
  }
  assert.ok(chinese / Object.keys(en).length > 0.9, `most messages are in Chinese (${chinese} of ${Object.keys(en).length})`);
});

// The files a person attaches to a task in the side panel, kept in the extension's own
// IndexedDB (database `tabwright-files`, store `files`) so the worker can give one to a page
// when the task asks (the `upload_file` action), after a worker restart too. The model sees a
// file's name, type and size, never its bytes; nothing here leaves the browser except into the
// page the task uploads it to.
//
// A record is {id, name, type, size, added (ms), blob}. Files older than KEEP_MS are dropped,
// and the oldest go first when all together pass MAX_KEPT_BYTES, whenever one is added.
const DB_NAME = 'tabwright-files';
const STORE = 'files';
const KEEP_MS = 30 * 24 * 60 * 60 * 1000;
const MAX_KEPT_BYTES = 200 * 1024 * 1024;

/** Bounds the panel checks before keeping anything (the core checks them again). */
export const FILE_LIMITS = { maxFiles: 10, maxFileBytes: 10 * 1024 * 1024, maxTotalBytes: 25 * 1024 * 1024 };

function open() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore(STORE, { keyPath: 'id' });
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function done(transaction) {
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error ?? new Error('the transaction was aborted'));
  });
}

/** The records of every kept file (without reading their bytes). */
async function all(db) {
  return new Promise((resolve, reject) => {
    const request = db.transaction(STORE).objectStore(STORE).getAll();
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Drops what is too old, then the oldest while the rest are over the bound. */
async function prune(db) {
  const kept = (await all(db)).sort((a, b) => a.added - b.added);
  const now = Date.now();
  let total = kept.reduce((sum, f) => sum + f.size, 0);
  const tx = db.transaction(STORE, 'readwrite');
  for (const file of kept) {
    if (now - file.added > KEEP_MS || total > MAX_KEPT_BYTES) {
      tx.objectStore(STORE).delete(file.id);
      total -= file.size;
    }
  }
  await done(tx);
}

/** Keeps `file` (a File) and resolves to what a task carries of it: {id, name, type, size}. */
export async function keepFile(file) {
  const db = await open();
  try {
    const id = crypto.randomUUID().replaceAll('-', '');
    const record = { id, name: file.name, type: file.type, size: file.size, added: Date.now(), blob: file };
    const tx = db.transaction(STORE, 'readwrite');
    tx.objectStore(STORE).put(record);
    await done(tx);
    await prune(db);
    return { id, name: file.name, type: file.type, size: file.size };
  } finally {
    db.close();
  }
}

/** A kept file's bytes as base64, or null when it is no longer kept. */
export async function readFileBase64(id) {
  const db = await open();
  try {
    const record = await new Promise((resolve, reject) => {
      const request = db.transaction(STORE).objectStore(STORE).get(String(id));
      request.onsuccess = () => resolve(request.result ?? null);
      request.onerror = () => reject(request.error);
    });
    if (!record) return null;
    const bytes = new Uint8Array(await record.blob.arrayBuffer());
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(binary);
  } finally {
    db.close();
  }
}

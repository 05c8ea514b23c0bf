// The service worker's first file, a classic script: it starts fetching the core's wasm, then
// loads the rest of the worker
// (pkg/worker.js: background.js bundled with its imports) with importScripts, which runs it at
// once, listeners and all. The wasm is the largest thing a cold start waits for, and the fetch
// goes on while the rest of the worker loads and runs; from background.js it would start only
// once all of it had been read (scripts/bench step).
globalThis.tabwrightCoreResponse = fetch(chrome.runtime.getURL('pkg/tabwright_bg.wasm'));
importScripts('pkg/worker.js');

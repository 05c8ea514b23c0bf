// Globals the extension's scripts share without imports, for tsc's check (scripts/test).

/** The content scripts' namespace in a frame: each of the classic scripts adds its part
 * (visibility.js, interactive.js, indexer.js, …) and main.js uses them. */
declare var tabwright: any;

/** Turndown and its GFM plugin, injected into the page before content/markdown.js. */
declare var TurndownService: any;
declare var turndownPluginGfm: any;

/** The service worker's script loader (boot.js runs as a classic worker script). */
declare function importScripts(...urls: string[]): void;

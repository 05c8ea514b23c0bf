// The pages' theme: light, dark, or as the system says (the default). Chosen on the options
// page and kept in this extension's localStorage, which every extension page reads at once,
// before it is first drawn (this is a classic script in each page's <head>, so the page never
// flashes the other theme); a choice made in one page reaches the open others by the
// `storage` event. The colours themselves follow `color-scheme` (light-dark() in the CSS).
(() => {
  const apply = (theme) => {
    if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
    else delete document.documentElement.dataset.theme;
  };
  try {
    apply(localStorage.getItem('tabwright-theme'));
  } catch {
    // No storage (a locked-down profile): the system's theme.
  }
  addEventListener('storage', (event) => {
    if (event.key === 'tabwright-theme') apply(event.newValue);
  });
})();

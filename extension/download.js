// Hands text made in an extension page to the browser as a file download.

/** Downloads `text` (of MIME `type`) as a file named `name`. */
export function download(text, type, name) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own copy by then; the page may stay open long.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// A conversation as an animated GIF, to show someone what the agent did: a frame per step — the
// page as the step saw it (its screenshot, when one was taken; else the page's title and
// address) with the step's goal as a caption beneath — made here in the panel with gifenc
// (npm, MIT), not in the wasm core. The frames are drawn on a canvas, each reduced to its own
// 256 colours.
import { GIFEncoder, quantize, applyPalette } from '../vendor/gifenc.esm.js';
import { t } from '../i18n.js';

const WIDTH = 640;
const PAGE_HEIGHT = 400;
const CAPTION_HEIGHT = 64;
const HEIGHT = PAGE_HEIGHT + CAPTION_HEIGHT;
const DELAY_MS = 1600;

/** `text` cut to the lines that fit `width` on `ctx`, at most `max`, the last with an ellipsis. */
function lines(ctx, text, width, max) {
  const out = [];
  let line = '';
  for (const word of String(text).split(/\s+/).filter(Boolean)) {
    const next = line ? `${line} ${word}` : word;
    if (ctx.measureText(next).width <= width || !line) line = next;
    else {
      out.push(line);
      line = word;
    }
  }
  if (line) out.push(line);
  if (out.length > max) {
    out.length = max;
    let last = out[max - 1];
    while (last && ctx.measureText(`${last}…`).width > width) last = last.slice(0, -1);
    out[max - 1] = `${last}…`;
  }
  return out;
}

async function screenshot(pngBase64) {
  const image = new Image();
  image.src = `data:image/png;base64,${pngBase64}`;
  await image.decode();
  return image;
}

/** Draws one step on `ctx`. */
async function drawStep(ctx, record) {
  ctx.fillStyle = '#f7f8fa';
  ctx.fillRect(0, 0, WIDTH, HEIGHT);
  if (record.screenshot?.png_base64) {
    const image = await screenshot(record.screenshot.png_base64);
    const scale = Math.min(WIDTH / image.naturalWidth, PAGE_HEIGHT / image.naturalHeight);
    const w = image.naturalWidth * scale;
    const h = image.naturalHeight * scale;
    ctx.drawImage(image, (WIDTH - w) / 2, (PAGE_HEIGHT - h) / 2, w, h);
  } else {
    ctx.fillStyle = '#5b6470';
    ctx.font = '16px system-ui, sans-serif';
    ctx.textAlign = 'center';
    const about = [record.title, record.url].filter(Boolean).join(' — ') || t('gifNoScreenshot');
    lines(ctx, about, WIDTH - 80, 3).forEach((line, i) => ctx.fillText(line, WIDTH / 2, PAGE_HEIGHT / 2 + i * 22));
    ctx.textAlign = 'start';
  }
  ctx.fillStyle = '#1b1f24';
  ctx.fillRect(0, PAGE_HEIGHT, WIDTH, CAPTION_HEIGHT);
  ctx.fillStyle = '#ffffff';
  ctx.font = '600 15px system-ui, sans-serif';
  const goal = record.output?.next_goal || t('noActionThisStep');
  const caption = `${t('progressStepAlone', [record.step])}: ${goal}`;
  lines(ctx, caption, WIDTH - 24, 2).forEach((line, i) => ctx.fillText(line, 12, PAGE_HEIGHT + 26 + i * 22));
}

/**
 * The conversation `tasks` (as the history keeps them) as the bytes of an animated GIF, a
 * frame per step; null when it has no step.
 * @param {{steps: any[]}[]} tasks
 */
export async function conversationGif(tasks) {
  const records = tasks.flatMap((kept) => kept.steps ?? []);
  if (!records.length) return null;
  const canvas = document.createElement('canvas');
  canvas.width = WIDTH;
  canvas.height = HEIGHT;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  const gif = GIFEncoder();
  for (const record of records) {
    await drawStep(ctx, record);
    const { data } = ctx.getImageData(0, 0, WIDTH, HEIGHT);
    const palette = quantize(data, 256);
    gif.writeFrame(applyPalette(data, palette), WIDTH, HEIGHT, { palette, delay: DELAY_MS, repeat: 0 });
  }
  gif.finish();
  return gif.bytes();
}

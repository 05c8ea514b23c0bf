// The part of gifenc (npm, MIT) the side panel uses, typed for tsc; scripts/build puts it
// beside the vendored module as extension/vendor/gifenc.esm.d.ts.
export interface GifFrameOptions {
  palette?: number[][];
  /** Milliseconds this frame shows. */
  delay?: number;
  /** 0: loop for ever; -1: play once. */
  repeat?: number;
}
export interface GifEncoder {
  writeFrame(index: Uint8Array, width: number, height: number, options?: GifFrameOptions): void;
  finish(): void;
  bytes(): Uint8Array;
}
export function GIFEncoder(options?: { initialCapacity?: number; auto?: boolean }): GifEncoder;
export function quantize(rgba: Uint8Array | Uint8ClampedArray, maxColors: number, options?: { format?: string }): number[][];
export function applyPalette(rgba: Uint8Array | Uint8ClampedArray, palette: number[][], format?: string): Uint8Array;

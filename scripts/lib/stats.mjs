// Figures the benchmarks share.

/** The median of `xs`: the middle value, or the mean of the two middle ones. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

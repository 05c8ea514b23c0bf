// axe-core (npm, Deque's accessibility engine) run in a page as it is: the WCAG 2.x A and AA
// rules and axe's best practices. Extension pages forbid inline scripts, so its source is
// evaluated through the debugging protocol, which their policy does not cover.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let source = null;

/**
 * The serious and critical violations axe finds in `page` now (`include`: a CSS selector to
 * limit it to): [{id, impact, help, nodes: [target …]}].
 */
export async function seriousViolations(page, include = null) {
  source ??= await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(source);
  const results = await page.evaluate(async (selector) => {
    const found = await window.axe.run(selector ? { include: [selector] } : document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return found.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  }, include);
  return results.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * `npm run widget:build`: writes the board widget's module, as the server serves it at
 * /api/v3/widget.js (src/routes/service/widget-bundle.ts), to dist/widget/feedback-board.js and
 * prints its size. `npm run check` runs it before size-limit holds the module to 40 KB gzipped
 * (docs/contract/clients-v3.md, "Quality bar").
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildWidget, widgetRoot } from "../src/routes/service/widget-bundle.ts";

const bundle = await buildWidget();
const dir = join(widgetRoot(), "dist", "widget");
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, "feedback-board.js"), bundle.body);
process.stdout.write(
  `dist/widget/feedback-board.js: ${bundle.body.length} bytes, ${bundle.gzipped.length} gzipped, version ${bundle.hash}\n`,
);

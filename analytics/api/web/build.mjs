// Builds the web app into dist/ (embedded in the gpuprice binary with go:embed):
// src/app.js and its imports (uPlot from node_modules) into one minified ES module,
// src/app.css (with uPlot's stylesheet) into one file, and the page shell.
// dist/BUILD.json records the SHA-256 of every input, so a Go test can tell when the
// committed bundle is older than its sources. Run ./build.sh (npm ci, then this).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync, mkdirSync, copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const here = new URL('.', import.meta.url).pathname;
const dist = join(here, 'dist');
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
await build({
  absWorkingDir: here,
  entryPoints: { app: 'src/app.js', 'app-css': 'src/app.css' },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  outdir: 'dist',
  entryNames: '[name]',
  legalComments: 'eof',
  logLevel: 'warning',
});
// esbuild names the CSS entry's output after the entry: keep the page's names.
const { renameSync } = await import('node:fs');
renameSync(join(dist, 'app-css.css'), join(dist, 'app.css'));
copyFileSync(join(here, 'src/index.html'), join(dist, 'index.html'));
// axe-core, for the browser tests' accessibility check (never served).
mkdirSync(join(here, 'testdata'), { recursive: true });
copyFileSync(join(here, 'node_modules/axe-core/axe.min.js'), join(here, 'testdata/axe.min.js'));

const inputs = ['package.json', 'package-lock.json', 'build.mjs', ...readdirSync(join(here, 'src')).sort().map((f) => 'src/' + f)];
const sha = (p) => createHash('sha256').update(readFileSync(join(here, p))).digest('hex');
const manifest = { inputs: Object.fromEntries(inputs.map((p) => [p, sha(p)])), outputs: {} };
for (const f of ['app.js', 'app.css', 'index.html']) manifest.outputs[f] = sha('dist/' + f);
manifest.outputs['../testdata/axe.min.js'] = sha('testdata/axe.min.js');
writeFileSync(join(dist, 'BUILD.json'), JSON.stringify(manifest, null, 2) + '\n');
console.log('built', Object.keys(manifest.outputs).map((f) => `dist/${f} (${readFileSync(join(dist, f)).length} bytes)`).join(', '));

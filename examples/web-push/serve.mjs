// The web push example: a small site on http://localhost:8080 that subscribes this browser to a Herald project.
//   HERALD_URL=http://localhost:3000 HERALD_PROJECT_ID=prj_… HERALD_KEY=hrd_pub_live_… node examples/web-push/serve.mjs
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';

const herald = (process.env.HERALD_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const projectId = process.env.HERALD_PROJECT_ID;
const key = process.env.HERALD_KEY;
const port = Number(process.env.PORT ?? 8080);
if (!projectId || !key) {
  console.error('Set HERALD_PROJECT_ID and HERALD_KEY (a publishable key: hrd_pub_live_…); see examples/web-push/README.md');
  process.exit(2);
}

const page = (await readFile(new URL('index.html', import.meta.url), 'utf8')).replaceAll('HERALD_URL', herald);
const files = {
  '/': ['text/html; charset=utf-8', page],
  '/app.js': ['text/javascript', await readFile(new URL('app.js', import.meta.url), 'utf8')],
  '/config.js': ['text/javascript', `window.HERALD_CONFIG = ${JSON.stringify({ baseUrl: herald, projectId, key })};`],
  // The site's own service worker: Herald's code, imported from Herald. It must be served from the site's origin.
  '/herald-sw.js': ['text/javascript', `importScripts(${JSON.stringify(`${herald}/sdk/herald-sw.js`)});\n`],
};

const server = createServer((request, response) => {
  const file = files[new URL(request.url ?? '/', 'http://localhost').pathname];
  if (!file) return void response.writeHead(404).end('Not found');
  response.writeHead(200, { 'content-type': file[0], 'cache-control': 'no-cache' }).end(file[1]);
});
server.listen(port, process.env.HOST ?? 'localhost', () => {
  console.log(`Example site on http://localhost:${server.address().port} (Herald at ${herald})`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));

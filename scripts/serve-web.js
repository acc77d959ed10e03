// A small static file server for the built playground (scripts/build-web.sh),
// bound to 127.0.0.1. Serves .wasm as application/wasm so browsers compile it
// while it streams, and every file with `Access-Control-Allow-Origin: *`, so
// a page on another origin can embed the widget (its module script, its
// worker's fetch of the .wasm and of the graph all need CORS). Used by
// scripts/serve-web.sh and the browser tests.
//
// usage: node scripts/serve-web.js OUT_DIR [PORT]   (PORT 0 or absent: 8765)
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

// Resolves with {server, url} once listening.
function startServer(root, port = 0) {
  const base = path.resolve(root);
  const server = http.createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Max-Age': '600' }).end();
      return;
    }
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    let file = path.join(base, rel);
    if (file !== base && !file.startsWith(base + path.sep)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`not found: ${rel}`);
        return;
      }
      res.writeHead(200, {
        'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
        'Cache-Control': 'no-cache',
      });
      res.end(data);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` }));
  });
}

module.exports = { startServer };

if (require.main === module) {
  const [dir, port] = process.argv.slice(2);
  if (!dir || !fs.existsSync(path.join(dir, 'index.html'))) {
    console.error('usage: node scripts/serve-web.js OUT_DIR [PORT]  (OUT_DIR from scripts/build-web.sh)');
    process.exit(2);
  }
  startServer(dir, Number(port) || 8765).then(({ url }) => {
    console.log(`schedlab playground: ${url}`);
    console.log(`  widget docs:       ${url}docs.html`);
    console.log('  (Ctrl-C to stop)');
  }, (e) => {
    console.error(`serve-web: ${e.message}`);
    process.exit(1);
  });
}

// node start.js APP CONFIG HOST PORT PROGRESS: runs Verdaccio from APP (the
// directory holding node_modules/verdaccio) with CONFIG, listening on
// HOST:PORT, for tests/integration/verdaccio.lib.
//
// Readiness is an event, not a poll: once the server listens, this writes
// "listening" to file descriptor 3 (the write end of a FIFO the test reads)
// and closes it. If node dies first, the descriptor closes with nothing
// written, so the reader learns at once that it will never come up.
//
// PROGRESS gets a line per phase and per module node loads, each with the
// milliseconds since node started: in the emulated test box node took
// minutes to bring Verdaccio up, and a start that never finishes should say
// where it is stuck.
'use strict';
const fs = require('fs');
const path = require('path');
const Module = require('module');

const [app, config, host, port, progressFile] = process.argv.slice(2);
const progress = fs.openSync(progressFile, 'a');
const note = (what) => fs.writeSync(progress, `${Math.round(process.uptime() * 1000)} ${what}\n`);
note(`node ${process.version} running start.js`);

let modules = 0;
const load = Module._load;
Module._load = function (request, parent) {
	modules++;
	note(`module ${modules}: ${request}${parent && parent.filename ? ` (from ${path.relative(app, parent.filename)})` : ''}`);
	return load.apply(this, arguments);
};

const ready = (what) => {
	note(what);
	fs.writeSync(3, 'listening\n');
	fs.closeSync(3);
};

(async () => {
	const { runServer } = require(path.join(app, 'node_modules', 'verdaccio'));
	note(`verdaccio loaded (${modules} modules)`);
	const server = await runServer(config);
	note(`server made (${modules} modules)`);
	server.on('error', (err) => {
		note(`cannot listen on ${host}:${port}: ${err.message}`);
		console.error(`start.js: cannot listen on ${host}:${port}: ${err.message}`);
		process.exit(2);
	});
	server.listen(Number(port), host, () => ready(`listening on ${host}:${port} (${modules} modules)`));
})().catch((err) => {
	note(`failed: ${err && err.message}`);
	console.error(`start.js: Verdaccio did not start: ${err && err.stack}`);
	process.exit(1);
});
